package warcwriter

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/nlnwa/gowarc"
)

const (
	openSuffix = ".open"
	warcSuffix = ".warc.gz"
	// nameTimeLayout is the yyyyMMddHHmmss part of a file name; milliseconds
	// follow as three digits.
	nameTimeLayout = "20060102150405"
)

// slot is one file being written. It is used by one goroutine at a time
// (whoever took it from Writer.free), so it needs no lock of its own.
type slot struct {
	w   *Writer
	gz  *gzip.Writer // reused for every member
	m   marshaler
	cw  countingWriter
	bw  *bufio.Writer
	f   *os.File // nil when no file is open
	cur ClosedFile
	// warcinfoID is the WARC-Record-ID of the file's warcinfo record.
	warcinfoID string
}

// countingWriter counts the bytes handed to the buffered file writer, so
// that offsets are known before the buffer is flushed.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func newSlot(w *Writer) (*slot, error) {
	gz, err := gzip.NewWriterLevel(io.Discard, w.cfg.CompressionLevel)
	if err != nil {
		return nil, fmt.Errorf("gzip level %d: %w", w.cfg.CompressionLevel, err)
	}
	return &slot{w: w, gz: gz, m: marshaler{buf: make([]byte, 32<<10)}, bw: bufio.NewWriterSize(nil, 256<<10)}, nil
}

// marshaler writes records as gowarc's marshaler does, through buffers it
// reuses: gowarc's formatted every header line with fmt.Fprintf and copied
// every block through a new 32 KiB buffer, most of what a crawl allocated.
type marshaler struct {
	buf  []byte // block copies
	head []byte // the version line and header of one record
}

// marshal writes rec to w: the version line, the header lines, an empty
// line, the block and two line ends.
func (g *marshaler) marshal(w io.Writer, rec gowarc.WarcRecord) error {
	h := append(g.head[:0], rec.Version().String()...)
	h = append(h, "\r\n"...)
	for _, f := range *rec.WarcHeader() {
		h = append(h, f.Name...)
		h = append(h, ": "...)
		h = append(h, f.Value...)
		h = append(h, "\r\n"...)
	}
	h = append(h, "\r\n"...)
	g.head = h
	if _, err := w.Write(h); err != nil {
		return err
	}
	r, err := rec.Block().RawBytes()
	if err != nil {
		return err
	}
	if _, err := io.CopyBuffer(w, r, g.buf); err != nil {
		return err
	}
	_, err = w.Write([]byte("\r\n\r\n"))
	return err
}

// fileName returns the final name of a file opened at t with serial.
func fileName(prefix string, t time.Time, serial int64, host string) string {
	t = t.UTC()
	return fmt.Sprintf("%s-%s%03d-%05d-%s%s", prefix, t.Format(nameTimeLayout),
		t.Nanosecond()/int(time.Millisecond), serial, host, warcSuffix)
}

// open creates a new file and writes its warcinfo record.
func (s *slot) open() error {
	cfg := &s.w.cfg
	now := s.w.now()
	name := fileName(cfg.Prefix, now, s.w.serial.Next(), cfg.Hostname)
	if cfg.Name != "" {
		name = cfg.Name
	}
	path := filepath.Join(cfg.Dir, name)
	info, err := s.w.build.warcinfo(cfg, name, now)
	if err != nil {
		return err
	}
	defer func() { _ = info.Close() }()
	f, err := os.OpenFile(path+openSuffix, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("create warc %s: %w", name, err)
	}
	s.f = f
	s.cur = ClosedFile{Name: name, Path: path, Opened: now}
	s.warcinfoID = ""
	s.cw = countingWriter{w: s.bw}
	s.bw.Reset(f)
	_, err = s.writeRecord(info)
	if err == nil {
		err = s.bw.Flush()
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(path + openSuffix)
		s.f = nil
		return fmt.Errorf("write warcinfo to %s: %w", name, err)
	}
	s.warcinfoID = info.RecordId()
	s.cur.Records = 1
	s.w.metrics.openFiles.Inc()
	s.w.metrics.records.WithLabelValues(gowarc.Warcinfo.String()).Inc()
	s.w.metrics.bytes.Add(float64(s.cw.n))
	s.w.log.Debug("warc file opened", "path", path+openSuffix)
	return nil
}

// writeRecord appends rec as one gzip member and returns its location.
func (s *slot) writeRecord(rec gowarc.WarcRecord) (Location, error) {
	if s.warcinfoID != "" {
		rec.WarcHeader().SetId(gowarc.WarcWarcinfoID, s.warcinfoID)
	}
	start := s.cw.n
	s.gz.Reset(&s.cw)
	err := s.m.marshal(s.gz, rec)
	if cerr := s.gz.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Location{}, fmt.Errorf("marshal %s record: %w", rec.Type(), err)
	}
	return Location{Filename: s.cur.Name, Offset: start, Length: s.cw.n - start}, nil
}

// writeRecords writes recs to the current file (opening one if needed), all
// or none, and closes the file if it has reached the maximum size.
func (s *slot) writeRecords(recs []gowarc.WarcRecord) ([]Location, *ClosedFile, error) {
	if s.f == nil {
		if err := s.open(); err != nil {
			s.w.metrics.errors.Inc()
			return nil, nil, err
		}
	}
	start := s.cw.n
	locs := make([]Location, len(recs))
	var err error
	for i, r := range recs {
		if locs[i], err = s.writeRecord(r); err != nil {
			break
		}
	}
	if err == nil {
		err = s.bw.Flush()
	}
	if err != nil {
		s.w.metrics.errors.Inc()
		s.rollback(start, err)
		return nil, nil, fmt.Errorf("write %s: %w", s.cur.Name, err)
	}
	s.cur.Records += int64(len(recs))
	s.w.metrics.bytes.Add(float64(s.cw.n - start))
	for _, r := range recs {
		s.w.metrics.records.WithLabelValues(r.Type().String()).Inc()
	}
	if s.cw.n < s.w.cfg.MaxFileSize {
		return locs, nil, nil
	}
	cf, err := s.close()
	if err != nil {
		// The capture is in the file; only the rename failed, and
		// RecoverOpen will finish it.
		s.w.log.Error("close full warc file", "path", s.cur.Path, "err", err)
	}
	return locs, cf, nil
}

// rollback cuts a failed write out of the file. If that fails too the file
// is abandoned as ".open", for RecoverOpen to repair, and the next write
// opens a new one.
func (s *slot) rollback(start int64, cause error) {
	s.bw.Reset(s.f)
	err := s.f.Truncate(start)
	if err == nil {
		_, err = s.f.Seek(start, io.SeekStart)
	}
	if err == nil {
		s.cw.n = start
		s.w.log.Warn("warc write failed, capture removed from file", "path", s.cur.Path, "err", cause)
		return
	}
	s.w.log.Error("warc write failed and file could not be cut back; abandoning it as .open",
		"path", s.cur.Path, "err", cause, "truncate_err", err)
	_ = s.f.Close()
	s.f = nil
	s.w.metrics.openFiles.Dec()
}

// close finishes the current file, if any: sync, close, rename away
// ".open". It returns nil, nil when no file was open.
func (s *slot) close() (*ClosedFile, error) {
	if s.f == nil {
		return nil, nil
	}
	f := s.f
	s.f = nil
	s.w.metrics.openFiles.Dec()
	err := s.bw.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.cur.Path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(s.cur.Path))
	}
	if err != nil {
		return nil, fmt.Errorf("close warc %s: %w", f.Name(), err)
	}
	s.w.metrics.filesClosed.Inc()
	cf := s.cur
	cf.Size = s.cw.n
	cf.Closed = s.w.now()
	return &cf, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}
