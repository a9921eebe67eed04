package provenance

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	"github.com/trawler-crawl/trawler/pkg/extsort"
	"github.com/trawler-crawl/trawler/pkg/reports"
)

// writeSourceReport counts the sorted "<source>\x00<host>" pairs of a
// streaming launch's successes, orders them as the source report does
// (a second sort: by source, most URLs first, then host) and writes the
// report to path, so no source × host table is held in memory.
func (s *Service) writeSourceReport(bySource *extsort.Sorter, path, runs string) error {
	ordered, err := extsort.New(extsort.Options{Dir: runs, RunBytes: s.cfg.SortRunBytes})
	if err != nil {
		return err
	}
	defer ordered.Close()
	var cur []byte
	var n int64
	flush := func() error {
		if n == 0 {
			return nil
		}
		src, host, _ := bytes.Cut(cur, []byte{0})
		key := reports.SourceOrderKey(string(src), string(host), n)
		return ordered.Add(strconv.AppendInt(append(key, 0), n, 10))
	}
	if err := bySource.Merge(func(line []byte) error {
		if n > 0 && bytes.Equal(line, cur) {
			n++
			return nil
		}
		if err := flush(); err != nil {
			return err
		}
		cur, n = append(cur[:0], line...), 1
		return nil
	}); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	lines := 0
	var out []byte
	err = ordered.Merge(func(l []byte) error {
		// "<source>\x00<order>\x00<host>\x00<count>"
		src, rest, _ := bytes.Cut(l, []byte{0})
		_, rest, _ = bytes.Cut(rest, []byte{0})
		host, count, _ := bytes.Cut(rest, []byte{0})
		c, err := strconv.ParseInt(string(count), 10, 64)
		if err != nil {
			return err
		}
		if lines == 0 {
			if _, err := w.WriteString(reports.SourceReportHeader); err != nil {
				return err
			}
		}
		lines++
		out = reports.AppendSourceLine(out[:0], string(src), string(host), c)
		_, err = w.Write(out)
		return err
	})
	if err == nil && lines == 0 {
		_, err = w.WriteString(reports.NoSourceReport)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
