package qa

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Page is one page to check: a crawl.log line of an HTML capture.
type Page struct {
	URL string `json:"url"`
	// Timestamp is the capture's 14-digit time, at which it is replayed.
	Timestamp string `json:"timestamp"`
	// HopPath, Via and Source are the page's crawl.log columns: what a
	// patch launch of its missing resources inherits.
	HopPath string `json:"hop_path,omitempty"`
	Via     string `json:"via,omitempty"`
	Source  string `json:"source,omitempty"`
}

// Selection says which pages of the crawl.log a QA run checks.
type Selection struct {
	// Source keeps the lines of this source tag only (a launch's target);
	// empty keeps every source.
	Source string
	// From and To bound the lines' log times (a launch: From is its
	// timestamp); zero means unbounded.
	From, To time.Time
	// Sample keeps at most this many pages, spread evenly over the
	// selection in log order; 0 keeps them all.
	Sample int
}

// LineError is a crawl.log line that could not be read: its file, line
// number and why.
type LineError struct {
	File   string
	Line   int
	Reason string
}

func (e LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// maxLogLine bounds one crawl.log line; longer ones are bad lines.
const maxLogLine = 1 << 20

// ReadPages reads crawl.log files and returns the HTML pages captured
// (2xx, text/html or application/xhtml+xml, an http or https URL) that
// the selection keeps, each URL once (its last capture), and the lines it
// could not read. An unreadable file is an error.
func ReadPages(files []string, sel Selection) ([]Page, []LineError, error) {
	var pages []Page
	var bad []LineError
	index := map[string]int{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, bad, fmt.Errorf("qa: crawl.log: %w", err)
		}
		err = scanLog(f, name, func(p Page, logged time.Time) {
			if (sel.Source != "" && p.Source != sel.Source) || (!sel.From.IsZero() && logged.Before(sel.From)) ||
				(!sel.To.IsZero() && logged.After(sel.To)) {
				return
			}
			if i, ok := index[p.URL]; ok {
				pages[i] = p
				return
			}
			index[p.URL] = len(pages)
			pages = append(pages, p)
		}, func(e LineError) { bad = append(bad, e) })
		_ = f.Close()
		if err != nil {
			return nil, bad, fmt.Errorf("qa: crawl.log %s: %w", name, err)
		}
	}
	return sample(pages, sel.Sample), bad, nil
}

// scanLog calls page for each HTML capture line of r and bad for each line
// that is not a crawl.log line. A line past maxLogLine is bad and skipped.
func scanLog(r io.Reader, name string, page func(Page, time.Time), bad func(LineError)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) && line == "" {
			return nil
		}
		if errors.Is(err, errLongLine) {
			bad(LineError{File: name, Line: n, Reason: fmt.Sprintf("longer than %d bytes", maxLogLine)})
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		p, logged, ok, reason := parseLine(line)
		switch {
		case reason != "":
			bad(LineError{File: name, Line: n, Reason: reason})
		case ok:
			page(p, logged)
		}
	}
}

var errLongLine = errors.New("line too long")

// readLine reads one line without its end, skipping the rest of a line
// longer than maxLogLine (errLongLine).
func readLine(br *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(b)+len(chunk) > maxLogLine {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			return "", errLongLine
		}
		b = append(b, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return strings.TrimRight(string(b), "\r\n"), err
	}
}

// parseLine reads a crawl.log line: ok when it is an HTML page capture,
// reason when it is not a crawl.log line at all.
func parseLine(line string) (p Page, logged time.Time, ok bool, reason string) {
	f := strings.Fields(line)
	if len(f) < 11 {
		return p, logged, false, fmt.Sprintf("%d fields, want at least 11", len(f))
	}
	logged, err := time.Parse(time.RFC3339Nano, f[0])
	if err != nil {
		return p, logged, false, fmt.Sprintf("time %q is not ISO 8601", clip(f[0]))
	}
	status, err := strconv.Atoi(f[1])
	if err != nil {
		return p, logged, false, fmt.Sprintf("status %q is not a number", clip(f[1]))
	}
	start, _, _ := strings.Cut(f[8], "+")
	if len(start) < 14 {
		start = logged.UTC().Format("20060102150405")
	}
	mime := strings.ToLower(f[6])
	url := f[3]
	if status < 200 || status > 299 || !(strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://")) ||
		!(mime == "text/html" || mime == "application/xhtml+xml") {
		return p, logged, false, ""
	}
	dash := func(s string) string {
		if s == "-" {
			return ""
		}
		return s
	}
	return Page{URL: url, Timestamp: start[:14], HopPath: dash(f[4]), Via: dash(f[5]), Source: dash(f[10])}, logged, true, ""
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// sample keeps n pages spread evenly over pages (all when n is 0 or more
// than there are).
func sample(pages []Page, n int) []Page {
	if n <= 0 || n >= len(pages) {
		return pages
	}
	out := make([]Page, 0, n)
	for i := range n {
		out = append(out, pages[i*len(pages)/n])
	}
	return slices.Clip(out)
}
