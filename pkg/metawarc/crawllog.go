package metawarc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// LineSets selects several launches' lines of crawl.log in one pass over
// the logs: the line of each of a launch's crawled events, known by its URL
// and logged time (crawl.log's first and fourth columns are the event's
// timestamp and URL; crawllog.EventTime). The zero LineSets is empty and
// ready to use.
type LineSets struct {
	keys  map[string][]int
	n     int
	since time.Time
}

// Add adds the line of a crawled event of launch i (0, 1, ...); an event
// without a usable time has no line to find.
func (s *LineSets) Add(i int, ev messages.Crawled) {
	t, err := ev.Time()
	if err != nil {
		return
	}
	if s.keys == nil {
		s.keys = map[string][]int{}
	}
	k := lineKey(ev.URL, t)
	if !slices.Contains(s.keys[k], i) {
		s.keys[k] = append(s.keys[k], i)
	}
	s.n = max(s.n, i+1)
	if s.since.IsZero() || t.Before(s.since) {
		s.since = t
	}
}

// Len is how many distinct lines the sets select.
func (s *LineSets) Len() int { return len(s.keys) }

// match returns the launches a crawl.log line belongs to. It runs for every
// line of every log file, so it reads the two columns it needs without
// splitting the line.
func (s *LineSets) match(line []byte) []int {
	var cols [4][]byte
	rest := line
	for i := range cols {
		rest = bytes.TrimLeft(rest, " ")
		end := bytes.IndexAny(rest, " \n")
		if end <= 0 {
			return nil // a line has at least 11 columns
		}
		cols[i], rest = rest[:end], rest[end:]
	}
	t, err := messages.ParseISOTime(string(cols[0]))
	if err != nil {
		return nil
	}
	return s.keys[lineKey(string(cols[3]), t)]
}

// Select reads files in order and returns each launch's lines, in file
// order, and how many lines it selected in all. A file last written
// before the earliest event holds none of the lines (a line is written
// after its event's time) and is not read. An unterminated last line (a
// log being written) is left out.
func (s *LineSets) Select(files []string) ([][]byte, int, error) {
	out := make([]bytes.Buffer, s.n)
	n := 0
	for _, p := range files {
		if len(s.keys) == 0 {
			break
		}
		if fi, err := os.Stat(p); err == nil && fi.ModTime().Before(s.since) {
			continue
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, 0, fmt.Errorf("read crawl log: %w", err)
		}
		r := bufio.NewReaderSize(f, 64<<10)
		for {
			line, err := r.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				// A line longer than the buffer: keep what was read (the
				// next read reuses the buffer), then read the rest whole.
				head := append([]byte(nil), line...)
				var rest []byte
				rest, err = r.ReadBytes('\n')
				line = append(head, rest...)
			}
			if err != nil {
				break // EOF or an unterminated last line
			}
			for _, i := range s.match(line) {
				out[i].Write(line)
				n++
			}
		}
		_ = f.Close()
	}
	res := make([][]byte, s.n)
	for i := range out {
		res[i] = out[i].Bytes()
	}
	return res, n, nil
}

func lineKey(url string, t time.Time) string {
	return strconv.FormatInt(t.UnixMilli(), 10) + " " + url
}

// LogFiles lists the crawl logs under dirs, oldest first: in each
// directory the rotated files (crawl.log.<time>, in name order) then
// crawl.log itself.
func LogFiles(dirs []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, pattern := range dirs {
		// A directory may be a glob (logs/fc-npld-render-*), and a
		// directory's slot subdirectories (logs/fc-npld/w0/) are read too:
		// leased identities write there, and which exist changes.
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return nil, fmt.Errorf("list crawl logs in %s: %w", pattern, err)
		}
		for _, d := range matches {
			subs, _ := filepath.Glob(filepath.Join(d, "*", "crawl.log*"))
			slices.Sort(subs)
			for _, dir := range append([]string{d}, dirsOf(subs)...) {
				files, err := logFilesIn(dir)
				if err != nil {
					return nil, err
				}
				for _, f := range files {
					if abs, err := filepath.Abs(f); err == nil && !seen[abs] {
						seen[abs] = true
						out = append(out, f)
					}
				}
			}
		}
	}
	return out, nil
}

// logFilesIn lists one directory's rotated crawl logs in name order, then
// its current one.
func logFilesIn(d string) ([]string, error) {
	rotated, err := filepath.Glob(filepath.Join(d, "crawl.log.*"))
	if err != nil {
		return nil, fmt.Errorf("list crawl logs in %s: %w", d, err)
	}
	slices.Sort(rotated)
	cur := filepath.Join(d, "crawl.log")
	if _, err := os.Stat(cur); err == nil {
		rotated = append(rotated, cur)
	}
	return rotated, nil
}

// dirsOf is the distinct directories of files, in order.
func dirsOf(files []string) []string {
	var out []string
	for _, f := range files {
		if d := filepath.Dir(f); len(out) == 0 || out[len(out)-1] != d {
			out = append(out, d)
		}
	}
	return out
}
