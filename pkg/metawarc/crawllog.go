package metawarc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// LogWindow selects a launch's lines of crawl.log: lines of Source logged
// at or after From and before To (zero: no bound). A launch runs from its
// launch timestamp until the next launch of the same source begins.
type LogWindow struct {
	Source   string
	From, To time.Time
	// Launch, when set, also ends the window at the first line of Source
	// that carries a later "launchTimestamp:" annotation: the next
	// launch's seed, which SelectLines finds even before the statistics
	// store has heard of that launch.
	Launch string
}

// Match reports whether a crawl.log line belongs to the window.
func (w LogWindow) Match(line []byte) bool {
	f := bytes.Fields(line)
	if len(f) < 11 || string(f[10]) != w.Source {
		return false
	}
	t, err := messages.ParseISOTime(string(f[0]))
	if err != nil {
		return false
	}
	return (w.From.IsZero() || !t.Before(w.From)) && (w.To.IsZero() || t.Before(w.To))
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

// SelectLines returns the lines of files in w, in file order, each with
// its newline. A last line without one (being written) is left out.
func SelectLines(files []string, w LogWindow) ([]byte, int, error) {
	if w.Launch != "" {
		next, err := nextLaunch(files, w)
		if err != nil {
			return nil, 0, err
		}
		if !next.IsZero() && (w.To.IsZero() || next.Before(w.To)) {
			w.To = next
		}
	}
	var out bytes.Buffer
	n := 0
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return nil, 0, fmt.Errorf("read crawl log: %w", err)
		}
		r := bufio.NewReaderSize(f, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				break // EOF or an unterminated last line
			}
			if w.Match(line) {
				out.Write(line)
				n++
			}
		}
		_ = f.Close()
	}
	return out.Bytes(), n, nil
}

// nextLaunch finds the earliest line of w.Source whose launch timestamp is
// later than w.Launch; zero when there is none.
func nextLaunch(files []string, w LogWindow) (time.Time, error) {
	var first time.Time
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return time.Time{}, fmt.Errorf("read crawl log: %w", err)
		}
		r := bufio.NewReaderSize(f, 64<<10)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				break
			}
			fs := bytes.Fields(line)
			if len(fs) < 12 || string(fs[10]) != w.Source {
				continue
			}
			ts := launchOf(string(fs[11]))
			if ts == "" || ts <= w.Launch {
				continue
			}
			if t, err := messages.ParseISOTime(string(fs[0])); err == nil && (first.IsZero() || t.Before(first)) {
				first = t
			}
		}
		_ = f.Close()
	}
	return first, nil
}

// launchOf returns the launchTimestamp annotation of a crawl.log
// annotations column.
func launchOf(annotations string) string {
	for _, a := range strings.Split(annotations, ",") {
		if ts, ok := strings.CutPrefix(a, "launchTimestamp:"); ok && len(ts) == 14 {
			return ts
		}
	}
	return ""
}
