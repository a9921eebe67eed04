package console

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
)

// tailBytes is how much of the end of each crawl.log the console reads:
// enough for thousands of lines, bounded for a log of gigabytes.
const tailBytes = 4 << 20

// logLine is one crawl.log line, split into the columns the console uses.
type logLine struct {
	Text   string
	Status string
	URL    string
	MIME   string
}

// parseLogLine splits a crawl.log line (columns separated by runs of
// spaces; a URL holds none); false for a line too short to be one.
func parseLogLine(s string) (logLine, bool) {
	f := strings.Fields(s)
	if len(f) < 7 {
		return logLine{}, false
	}
	return logLine{Text: s, Status: f[1], URL: f[3], MIME: f[6]}, true
}

// logFiles are this process's crawl.logs: LogDir's own, or one per worker
// identity in a directory each.
func (c *Console) logFiles() []string {
	dir := c.d.Files.LogDir
	if dir == "" {
		return nil
	}
	var out []string
	for _, pat := range []string{"crawl.log", "*/crawl.log"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		out = append(out, m...)
	}
	return out
}

// tail returns the complete lines in the last tailBytes of path.
func tail(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("crawl log: %w", err)
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("crawl log: %w", err)
	}
	start := max(st.Size()-tailBytes, 0)
	b, err := io.ReadAll(io.NewSectionReader(f, start, st.Size()-start))
	if err != nil {
		return nil, fmt.Errorf("crawl log %s: %w", path, err)
	}
	if start > 0 {
		// The first line is cut: drop it.
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1] // a line being written is not complete yet
	} else {
		b = nil
	}
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, sc.Err()
}

// tailAll is the tails of every crawl.log, each file's in order.
func (c *Console) tailAll() ([]string, error) {
	var out []string
	for _, p := range c.logFiles() {
		ls, err := tail(p)
		if err != nil {
			return out, err
		}
		out = append(out, ls...)
	}
	return out, nil
}

// kv is one count of a breakdown.
type kv struct {
	Key string
	N   int
}

// logCounts break a host's lines in the crawl.log tails down.
type logCounts struct {
	Lines    int
	ByStatus []kv
	ByMIME   []kv
}

// countHost counts host's lines by status and MIME type; nil, nil when
// there is no crawl.log to read.
func (c *Console) countHost(host string) (*logCounts, error) {
	if len(c.logFiles()) == 0 {
		return nil, nil
	}
	lines, err := c.tailAll()
	if err != nil {
		return nil, err
	}
	status, mime := map[string]int{}, map[string]int{}
	n := 0
	for _, s := range lines {
		l, ok := parseLogLine(s)
		if !ok {
			continue
		}
		if h, err := hostkey.Authority(l.URL); err != nil || h != host {
			continue
		}
		n++
		status[l.Status]++
		mime[l.MIME]++
	}
	return &logCounts{Lines: n, ByStatus: sorted(status), ByMIME: sorted(mime)}, nil
}

// sorted lists m most first, ties by key.
func sorted(m map[string]int) []kv {
	out := make([]kv, 0, len(m))
	for k, n := range m {
		out = append(out, kv{k, n})
	}
	slices.SortFunc(out, func(a, b kv) int { return cmp.Or(b.N-a.N, strings.Compare(a.Key, b.Key)) })
	return out
}

// logData is the crawl.log page.
type logData struct {
	Q, Status string
	N         int
	Files     []string
	Lines     []string
	Scanned   int
	Error     string
}

// maxLogLines bounds the lines the page shows.
const maxLogLines = 2000

func (c *Console) crawlLog(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	d := logData{Q: q.Get("q"), Status: strings.TrimSpace(q.Get("status")), N: 200, Files: c.logFiles()}
	if v := q.Get("n"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			c.fail(w, r, s, http.StatusBadRequest, "crawl log: n="+quoteOrEmpty(v)+" is not a positive number of lines")
			return
		}
		d.N = min(n, maxLogLines)
	}
	lines, err := c.tailAll()
	if err != nil {
		d.Error = err.Error()
	}
	d.Scanned = len(lines)
	for i := len(lines) - 1; i >= 0 && len(d.Lines) < d.N; i-- {
		if d.Q != "" && !strings.Contains(lines[i], d.Q) {
			continue
		}
		if d.Status != "" {
			if l, ok := parseLogLine(lines[i]); !ok || l.Status != d.Status {
				continue
			}
		}
		d.Lines = append(d.Lines, lines[i])
	}
	c.show(w, r, s, "log", "log", "crawl.log", d)
}
