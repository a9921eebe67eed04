package replay

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// Errors of loading a record; each is wrapped with the file and offset.
var (
	// ErrUnknownFile: no WARC directory holds the file an index line names.
	ErrUnknownFile = errors.New("WARC file not found")
	// ErrNotRecord: the bytes at the offset are not the start of a WARC
	// record (neither a gzip member holding one nor a "WARC/" line).
	ErrNotRecord = errors.New("offset is not at a WARC record")
	// ErrTruncated: the record ends before its header or its block
	// (Content-Length) does, or past the length the index gives it. It is
	// returned by Open when the header is cut, and by Body.Read when the
	// payload is.
	ErrTruncated = errors.New("WARC record truncated")
)

const (
	// maxWARCHeaderBytes and maxHTTPHeaderBytes bound the headers read
	// into memory; longer ones are corrupt (pkg/warcindex uses the same).
	maxWARCHeaderBytes = 1 << 20
	maxHTTPHeaderBytes = 256 << 10
)

// Records opens WARC records by the location an index line gives:
// filename, offset and length (-1 when unknown). Open's Record must be
// closed. Implementations are safe for concurrent use.
type Records interface {
	Open(ctx context.Context, filename string, offset, length int64) (*Record, error)
}

// Record is a WARC record opened for replay: its header, the HTTP header
// at the start of its block if it has one, and the rest of the block.
type Record struct {
	// Type is WARC-Type, lower-cased (response, revisit, resource...).
	Type string
	// Header holds the WARC header fields.
	Header textproto.MIMEHeader
	// HTTP is the block's HTTP response header; nil when the block has
	// none: a record that is not a response or revisit of an http(s) URI,
	// an empty block, or a revisit whose block is empty.
	HTTP *HTTPHeader
	// Length is the block's Content-Length.
	Length int64
	// Body is the block after the HTTP header (the whole block when there
	// is none): the payload as stored, transfer and content codings
	// intact, which is what pywb's loader hands on (the record's
	// raw_stream).
	Body io.Reader

	closer io.Closer
}

// Close releases the file.
func (r *Record) Close() error {
	if r.closer == nil {
		return nil
	}
	err := r.closer.Close()
	r.closer = nil
	return err
}

// TargetURI is WARC-Target-URI, without the angle brackets WARC/1.0's
// grammar allowed.
func (r *Record) TargetURI() string { return trimURI(r.Header.Get("WARC-Target-URI")) }

// HTTPHeader is an HTTP response's status line and header fields.
type HTTPHeader struct {
	// Proto is "HTTP/1.1"; StatusLine is the rest of the first line
	// ("200 OK"), as warcio keeps it.
	Proto, StatusLine string
	Header            http.Header
}

// StatusCode is the first word of the status line (warcio's
// StatusAndHeaders.get_statuscode), "" for an empty line.
func (h *HTTPHeader) StatusCode() string {
	code, _, _ := strings.Cut(h.StatusLine, " ")
	return code
}

// Dirs opens records from files in a list of directories, as pywb's path
// resolvers do: a filename is looked up in each directory in turn (the
// normal and the viral WARC directories of a crawl, say).
type Dirs struct {
	dirs []string
	live bool
}

// NewDirs returns a Records over dirs, searched in order.
func NewDirs(dirs ...string) *Dirs { return &Dirs{dirs: dirs} }

// NewLiveDirs is NewDirs for a crawl that is still writing: a file not
// found under its name is looked for as "<name>.open", the name a WARC
// has while it is written (its records are whole once indexed, since
// the writer flushes a record before its event is published). Replay
// tools never see such files; the operator console does.
func NewLiveDirs(dirs ...string) *Dirs { return &Dirs{dirs: dirs, live: true} }

// Path returns the path of filename in the first directory that has it.
// A filename with a directory part is refused: index lines name files,
// and a line must not reach outside the WARC directories.
func (d *Dirs) Path(filename string) (string, error) {
	if filename == "" || filename != filepath.Base(filename) || filename == ".." || strings.ContainsRune(filename, '\\') {
		return "", fmt.Errorf("%w: %q is not a plain file name", ErrUnknownFile, filename)
	}
	for _, dir := range d.dirs {
		p := filepath.Join(dir, filename)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
		if d.live {
			if st, err := os.Stat(p + ".open"); err == nil && st.Mode().IsRegular() {
				return p + ".open", nil
			}
		}
	}
	return "", fmt.Errorf("%w: %s in %s", ErrUnknownFile, filename, strings.Join(d.dirs, ", "))
}

// Open opens the record at offset in filename.
func (d *Dirs) Open(ctx context.Context, filename string, offset, length int64) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path, err := d.Path(filename)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnknownFile, err)
	}
	rec, err := readRecord(f, filename, offset, length)
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	rec.closer = f
	return rec, nil
}

// readRecord reads the record at offset of f, within length bytes when
// length is known (as pywb's BlockLoader limits its read).
func readRecord(f *os.File, name string, offset, length int64) (*Record, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	where := fmt.Sprintf("%s at offset %d", name, offset)
	if offset < 0 || offset >= st.Size() {
		return nil, fmt.Errorf("%s: %w: the file has %d bytes", where, ErrNotRecord, st.Size())
	}
	size := st.Size() - offset
	if length > 0 {
		size = length
	}
	raw := bufio.NewReader(io.NewSectionReader(f, offset, size))
	head, _ := raw.Peek(5)
	var r io.Reader = raw
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		// One gzip member per record: stop at the member's end.
		zr, err := gzip.NewReader(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w: gzip header: %v", where, ErrNotRecord, err)
		}
		zr.Multistream(false)
		r = zr
	case !bytes.Equal(head, []byte("WARC/")):
		return nil, fmt.Errorf("%s: %w: it starts %q", where, ErrNotRecord, head)
	}
	br := bufio.NewReaderSize(&truncating{r: r}, 64<<10)
	rec, err := parseRecord(br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	rec.Body = &located{r: rec.Body, where: where}
	return rec, nil
}

// parseRecord reads the WARC header and, for a response or revisit of an
// http(s) URI, the HTTP header (warcio's ArcWarcRecordLoader.
// parse_record_stream and load_http_headers); Body is left at the payload.
func parseRecord(br *bufio.Reader) (*Record, error) {
	version, fields, err := readHeaderBlock(br, maxWARCHeaderBytes)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = ErrTruncated
		}
		return nil, fmt.Errorf("WARC header: %w", err)
	}
	if !strings.HasPrefix(version, "WARC/") {
		return nil, fmt.Errorf("%w: the first line is %q, not a WARC version", ErrNotRecord, clip(version))
	}
	rec := &Record{Header: fields, Type: strings.ToLower(fields.Get("WARC-Type"))}
	rec.Length, err = strconv.ParseInt(strings.TrimSpace(fields.Get("Content-Length")), 10, 64)
	if err != nil || rec.Length < 0 {
		return nil, fmt.Errorf("WARC header: Content-Length %q is not a length", fields.Get("Content-Length"))
	}
	block := &blockReader{r: br, left: rec.Length}
	rec.Body = block
	uri := rec.TargetURI()
	// warcio parses an HTTP header only for a non-empty block of a
	// response, request or revisit record of an http: or https: URI.
	if rec.Length == 0 || (rec.Type != "response" && rec.Type != "revisit") ||
		!(strings.HasPrefix(uri, "http:") || strings.HasPrefix(uri, "https:")) {
		return rec, nil
	}
	bb := bufio.NewReaderSize(block, 4096)
	statusLine, hfields, err := readHeaderBlock(bb, maxHTTPHeaderBytes)
	switch {
	case errors.Is(err, io.EOF) && statusLine == "" && rec.Type == "revisit":
		// An old-style revisit without HTTP headers; warcio's
		// load_http_headers accepts it (EOFError) and pywb takes the
		// headers from the original.
		return rec, nil
	case errors.Is(err, io.EOF) && statusLine == "":
		return nil, fmt.Errorf("HTTP header: the block has none")
	case err != nil && !errors.Is(err, io.EOF):
		// A header that simply runs to the block's end is accepted, as
		// warcio's parser accepts it; a cut record is ErrTruncated here.
		return nil, fmt.Errorf("HTTP header: %w", err)
	}
	proto, status, _ := strings.Cut(statusLine, " ")
	if !strings.HasPrefix(proto, "HTTP/") {
		return nil, fmt.Errorf("HTTP header: status line %q does not start with HTTP/", clip(statusLine))
	}
	rec.HTTP = &HTTPHeader{Proto: proto, StatusLine: strings.TrimSpace(status), Header: http.Header(hfields)}
	rec.Body = bb
	return rec, nil
}

// readHeaderBlock reads a first line and header fields up to an empty
// line, leniently as warcio's StatusAndHeadersParser does: lines end in
// CRLF or LF, a line without a colon is skipped, a line starting with
// white space continues the previous field. At the end of input it
// returns what it read and io.EOF (io.EOF with an empty first line when
// there was nothing at all).
func readHeaderBlock(br *bufio.Reader, limit int) (string, textproto.MIMEHeader, error) {
	fields := textproto.MIMEHeader{}
	var first, last string
	n := 0
	for i := 0; ; i++ {
		line, err := br.ReadString('\n')
		n += len(line)
		if n > limit {
			return first, fields, fmt.Errorf("longer than %d bytes", limit)
		}
		text := strings.TrimRight(line, "\r\n")
		if err != nil {
			if i == 0 {
				first = text
			}
			if errors.Is(err, io.EOF) {
				return first, fields, io.EOF
			}
			return first, fields, err
		}
		switch {
		case i == 0:
			first = text
		case text == "":
			return first, fields, nil
		case text[0] == ' ' || text[0] == '\t':
			if vs := fields[last]; len(vs) > 0 {
				vs[len(vs)-1] += " " + strings.TrimSpace(text)
			}
		default:
			name, value, ok := strings.Cut(text, ":")
			if !ok {
				continue
			}
			last = textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(name))
			fields.Add(last, strings.TrimSpace(value))
		}
	}
}

// blockReader reads the Content-Length bytes of a block; an end of input
// before them is ErrTruncated.
type blockReader struct {
	r    io.Reader
	left int64
}

func (b *blockReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if errors.Is(err, io.EOF) {
		if b.left > 0 {
			return n, fmt.Errorf("%w: the block lacks %d bytes of its Content-Length", ErrTruncated, b.left)
		}
		err = nil
	}
	return n, err
}

// truncating turns a cut gzip member (io.ErrUnexpectedEOF) into
// ErrTruncated.
type truncating struct{ r io.Reader }

func (t *truncating) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("%w: %v", ErrTruncated, err)
	}
	return n, err
}

// located names the record in the errors of reading its payload, which
// come after Open has returned.
type located struct {
	r     io.Reader
	where string
}

func (l *located) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("%s: %w", l.where, err)
	}
	return n, err
}

func trimURI(s string) string {
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "<"), ">")
}

// clip shortens text quoted in an error.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}
