// Package warcindex indexes WARC files offline: it reads .warc.gz files
// (one gzip member per record, as ARCHITECTURE.md section 7 and every WARC
// writer worth using produce them) and plain .warc files and yields a
// cdx.Line for each response and revisit record and each resource and
// metadata record that is not warc-fields, with the exact offset of the
// record's gzip member (or of the record, uncompressed) and its length in
// the file: what a replay tool needs to read the record back. The fields
// follow the conventions of ARCHITECTURE.md section 11 (pywb's indexer's,
// with the differences listed there).
//
// IndexFiles indexes a set of files as `trawler cdx index` does: the line
// of a server-not-modified revisit points at its original response when
// that is among the files (ARCHITECTURE.md section 11, "Replay of 304
// captures").
//
// Member boundaries are found exactly by decompressing through a buffered
// reader over a counting reader: the gzip decoder reads a flate stream
// through io.ByteReader without read-ahead, so the bytes consumed so far,
// minus what the buffer still holds, is the end of the member.
//
// A corrupt record (bad gzip data, a header that does not parse, a block
// shorter than its Content-Length) is reported as a *RecordError with the
// file, offset and reason, and reading goes on at the next gzip member (or
// "WARC/" line) after it.
package warcindex

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/trawler-crawl/trawler/internal/countio"

	"github.com/klauspost/compress/gzip"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// bufferBytes sizes both buffers; it must exceed maxHTTPHeaderBytes, which
// is peeked in one piece.
const bufferBytes = 2 * maxHTTPHeaderBytes

var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// RecordError is a record that could not be indexed.
type RecordError struct {
	Filename string
	Offset   int64 // where the record (or its gzip member) starts
	Err      error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%s: record at offset %d: %v", e.Filename, e.Offset, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Stats counts what a Reader has read so far.
type Stats struct {
	Records int64 // records read whole, indexed or not
	Indexed int64 // lines returned
	Errors  int64 // RecordErrors returned
}

// Reader reads index lines from one WARC file. It is not safe for
// concurrent use.
type Reader struct {
	rs       io.ReadSeeker
	name     string
	gzipped  bool
	cr       countio.Reader // counts compressed bytes read from rs since base
	base     int64          // file offset cr counts from
	raw      *bufio.Reader  // over cr
	zr       gzip.Reader
	inflated *bufio.Reader // over zr
	// resyncing is set after an error until a record reads cleanly, so
	// that false starts while looking for the next record are not
	// reported as more errors.
	resyncing bool
	stats     Stats
}

// NewReader reads the WARC file in rs from its current position; filename
// goes into every line. Whether the file is gzipped is decided by its first
// bytes.
func NewReader(rs io.ReadSeeker, filename string) (*Reader, error) {
	base, err := rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("warc %s: %w", filename, err)
	}
	r := &Reader{rs: rs, name: filename, base: base}
	r.cr.R = rs
	r.raw = bufio.NewReaderSize(&r.cr, bufferBytes)
	head, err := r.raw.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("warc %s: %w", filename, err)
	}
	r.gzipped = bytes.HasPrefix(head, gzipMagic[:2])
	if r.gzipped {
		r.inflated = bufio.NewReaderSize(nil, bufferBytes)
	}
	return r, nil
}

// Stats returns the counts so far.
func (r *Reader) Stats() Stats { return r.stats }

// pos is the file offset of the next unread byte.
func (r *Reader) pos() int64 { return r.base + r.cr.N - int64(r.raw.Buffered()) }

// Next returns the line of the next indexed record. At the end of the file
// it returns io.EOF. A *RecordError reports a record it skipped; call Next
// again to go on. Any other error (the file cannot be read) is final.
func (r *Reader) Next() (cdx.Line, error) {
	l, _, err := r.next()
	return l, err
}

// next is Next, with the facts of a response or revisit record.
func (r *Reader) next() (cdx.Line, recordFacts, error) {
	for {
		start := r.pos()
		if _, err := r.raw.Peek(1); err != nil {
			if errors.Is(err, io.EOF) {
				return cdx.Line{}, recordFacts{}, io.EOF
			}
			return cdx.Line{}, recordFacts{}, fmt.Errorf("warc %s at offset %d: %w", r.name, start, err)
		}
		rec, err := r.readOne()
		if err != nil {
			report := !r.resyncing
			r.resyncing = true
			if serr := r.resync(start); serr != nil {
				return cdx.Line{}, recordFacts{}, fmt.Errorf("warc %s: looking for the record after offset %d: %w", r.name, start, serr)
			}
			if report {
				r.stats.Errors++
				return cdx.Line{}, recordFacts{}, &RecordError{Filename: r.name, Offset: start, Err: err}
			}
			continue
		}
		r.resyncing = false
		r.stats.Records++
		if rec.err != nil {
			r.stats.Errors++
			return cdx.Line{}, recordFacts{}, &RecordError{Filename: r.name, Offset: start, Err: rec.err}
		}
		if !rec.indexed {
			continue
		}
		l := rec.line
		l.Offset, l.Length, l.Filename = start, r.pos()-start, r.name
		r.stats.Indexed++
		return l, rec.facts, nil
	}
}

// readOne reads the record at the current position. An error means the
// record's framing is broken and the position is unknown; rec.err is a
// record read whole that cannot be indexed.
func (r *Reader) readOne() (record, error) {
	if !r.gzipped {
		rec, _, err := readRecord(r.raw)
		return rec, err
	}
	if err := r.zr.Reset(r.raw); err != nil {
		return record{}, fmt.Errorf("gzip member header: %w", err)
	}
	r.zr.Multistream(false)
	r.inflated.Reset(&r.zr)
	rec, _, err := readRecord(r.inflated)
	if errors.Is(err, io.EOF) {
		return rec, errors.New("empty gzip member")
	}
	if err != nil {
		return rec, err
	}
	// Reading on to the member's end checks its CRC and length.
	if _, err := r.inflated.Peek(1); !errors.Is(err, io.EOF) {
		if err != nil {
			return rec, fmt.Errorf("gzip member: %w", err)
		}
		n, err := io.Copy(io.Discard, r.inflated)
		if err != nil {
			return rec, fmt.Errorf("gzip member: %w", err)
		}
		rec.indexed = false
		rec.err = fmt.Errorf("gzip member holds %d more bytes after the record (one record per member is needed for exact offsets)", n)
	}
	return rec, nil
}

// resync moves to the first possible record start after offset start: the
// next gzip magic number, or the next "WARC/" in a plain file.
func (r *Reader) resync(start int64) error {
	if _, err := r.rs.Seek(start+1, io.SeekStart); err != nil {
		return err
	}
	r.base, r.cr.N = start+1, 0
	r.raw.Reset(&r.cr)
	magic := gzipMagic
	if !r.gzipped {
		magic = []byte("WARC/")
	}
	for {
		buf, err := r.raw.Peek(r.raw.Size())
		if i := bytes.Index(buf, magic); i >= 0 {
			_, derr := r.raw.Discard(i)
			return derr
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) {
				_, derr := r.raw.Discard(len(buf))
				return derr
			}
			return err
		}
		if _, err := r.raw.Discard(len(buf) - len(magic) + 1); err != nil {
			return err
		}
	}
}

// IsWARC reports whether rs holds a WARC file (gzipped or not) by looking at
// its first record's first bytes; rs is left where it was.
func IsWARC(rs io.ReadSeeker) (bool, error) {
	at, err := rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return false, err
	}
	defer func() { _, _ = rs.Seek(at, io.SeekStart) }()
	br := bufio.NewReader(rs)
	head, err := br.Peek(5)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	if bytes.HasPrefix(head, gzipMagic[:2]) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return false, nil
		}
		head = make([]byte, 5)
		n, _ := io.ReadFull(zr, head)
		head = head[:n]
	}
	return bytes.Equal(head, []byte("WARC/")), nil
}
