package metawarc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// RangeResult is what CopyRange did.
type RangeResult struct {
	// Lines were copied; Bad were skipped because their first column is
	// not a time; FirstBad says where the first of those is and why.
	Lines, Bad int64
	FirstBad   string
}

// CopyRange copies, in file order, the crawl.log lines of files logged at
// or after from and before to (zero: no bound) into dst. It keeps nothing
// per line, so a launch's log of any size costs the same memory: it is how
// a streaming launch (the domain crawl, one launch at a time) chooses its
// lines, where LineSets keeps a key per event. A file last written before
// from is not read. An unterminated last line (a log being written) is
// left out; a line whose time does not parse is counted and skipped.
func CopyRange(files []string, from, to time.Time, dst io.Writer) (RangeResult, error) {
	var res RangeResult
	for _, p := range files {
		if fi, err := os.Stat(p); err == nil && !from.IsZero() && fi.ModTime().Before(from) {
			continue
		}
		if err := copyRangeFile(p, from, to, dst, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

func copyRangeFile(p string, from, to time.Time, dst io.Writer, res *RangeResult) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("read crawl log: %w", err)
	}
	defer func() { _ = f.Close() }()
	r := bufio.NewReaderSize(f, 64<<10)
	for n := int64(1); ; n++ {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			head := append([]byte(nil), line...)
			var rest []byte
			rest, err = r.ReadBytes('\n')
			line = append(head, rest...)
		}
		if err != nil {
			return nil // EOF or an unterminated last line
		}
		col, _, _ := bytes.Cut(bytes.TrimLeft(line, " "), []byte(" "))
		t, perr := messages.ParseISOTime(string(col))
		if perr != nil {
			res.Bad++
			if res.FirstBad == "" {
				res.FirstBad = fmt.Sprintf("%s:%d: first column %q is not a time", p, n, truncate(col, 40))
			}
			continue
		}
		if (!from.IsZero() && t.Before(from)) || (!to.IsZero() && !t.Before(to)) {
			continue
		}
		if _, err := dst.Write(line); err != nil {
			return fmt.Errorf("copy crawl log lines: %w", err)
		}
		res.Lines++
	}
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
