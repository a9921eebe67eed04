package warcindex

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

const (
	// maxHeaderBytes bounds a WARC record header; a longer one is corrupt.
	maxHeaderBytes = 1 << 20
	// maxHTTPHeaderBytes bounds the part of a block searched for the HTTP
	// header; servers rarely send more than a few KiB.
	maxHTTPHeaderBytes = 256 << 10
)

// record is what indexing needs from one WARC record.
type record struct {
	warcType string
	line     cdx.Line
	indexed  bool  // a response, revisit or resource record
	err      error // why an indexed record has no line
}

// readRecord reads one record from br: the header, the block (of which
// only an HTTP header is kept) and the two CRLFs that end it. It returns
// the record and how many bytes it took. An error means the record's
// framing is broken; a record that is whole but cannot be indexed (no
// target URI, a bad date) has rec.err set instead.
func readRecord(br *bufio.Reader) (record, int64, error) {
	var rec record
	hdr, n, err := readWARCHeader(br)
	if err != nil {
		return rec, n, err
	}
	length, err := strconv.ParseInt(hdr.get("Content-Length"), 10, 64)
	if err != nil || length < 0 {
		return rec, n, fmt.Errorf("Content-Length %q is not a non-negative integer", hdr.get("Content-Length"))
	}
	rec.warcType = strings.ToLower(hdr.get("WARC-Type"))
	var httpHead []byte
	if rec.warcType == "response" || rec.warcType == "revisit" {
		httpHead, err = peekHTTPHeader(br, length, hdr.get("Content-Type"))
		if err != nil {
			return rec, n, err
		}
	}
	if _, err := br.Discard(int(length)); err != nil {
		return rec, n, fmt.Errorf("block of %d bytes (Content-Length) is cut off: %w", length, unexpected(err))
	}
	n += length
	var end [4]byte
	if _, err := io.ReadFull(br, end[:]); err != nil {
		return rec, n, fmt.Errorf("record does not end with CRLF CRLF: %w", unexpected(err))
	}
	if string(end[:]) != "\r\n\r\n" {
		return rec, n, fmt.Errorf("record does not end with CRLF CRLF after its %d-byte block (found %q)", length, end)
	}
	n += 4
	switch rec.warcType {
	case "response", "revisit", "resource":
		rec.indexed = true
		rec.line, rec.err = indexLine(rec.warcType, hdr, httpHead)
	}
	return rec, n, nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// warcHeader holds header fields by lower-cased name (first one wins).
type warcHeader map[string]string

func (h warcHeader) get(name string) string { return h[strings.ToLower(name)] }

// readWARCHeader reads the version line and fields up to the empty line.
// Lines end in CRLF; a bare LF is tolerated.
func readWARCHeader(br *bufio.Reader) (warcHeader, int64, error) {
	h := warcHeader{}
	var n int64
	var last string
	for first := true; ; first = false {
		line, err := br.ReadSlice('\n')
		n += int64(len(line))
		if err != nil {
			if first && errors.Is(err, io.EOF) && len(line) == 0 {
				return nil, n, io.EOF
			}
			return nil, n, fmt.Errorf("record header: %w", unexpected(err))
		}
		if n > maxHeaderBytes {
			return nil, n, fmt.Errorf("record header longer than %d bytes", maxHeaderBytes)
		}
		text := strings.TrimRight(string(line), "\r\n")
		switch {
		case first:
			if !strings.HasPrefix(text, "WARC/") {
				return nil, n, fmt.Errorf("record does not start with a WARC/ version line (%q)", clip(text))
			}
		case text == "":
			return h, n, nil
		case text[0] == ' ' || text[0] == '\t':
			if last != "" {
				h[last] += " " + strings.TrimSpace(text)
			}
		default:
			name, value, ok := strings.Cut(text, ":")
			if !ok {
				return nil, n, fmt.Errorf("header line %q has no colon", clip(text))
			}
			last = strings.ToLower(strings.TrimSpace(name))
			if _, dup := h[last]; !dup {
				h[last] = strings.TrimSpace(value)
			}
		}
	}
}

// peekHTTPHeader returns the HTTP header at the start of a block of
// application/http content, without consuming it; nil for other content.
func peekHTTPHeader(br *bufio.Reader, length int64, contentType string) ([]byte, error) {
	if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "application/http") || length == 0 {
		return nil, nil
	}
	want := int(min(length, maxHTTPHeaderBytes))
	if br.Size() < want {
		return nil, fmt.Errorf("reader buffer smaller than %d bytes", want)
	}
	head, err := br.Peek(want)
	if err != nil {
		return nil, fmt.Errorf("block of %d bytes (Content-Length) is cut off: %w", length, unexpected(err))
	}
	if i := bytes.Index(head, []byte("\r\n\r\n")); i >= 0 {
		return head[:i+2], nil
	}
	if i := bytes.Index(head, []byte("\n\n")); i >= 0 {
		return head[:i+1], nil
	}
	return head, nil // a header cut off by the block's end: use what there is
}

// indexLine builds the CDX line of an indexed record.
func indexLine(warcType string, h warcHeader, httpHead []byte) (cdx.Line, error) {
	uri := strings.TrimSuffix(strings.TrimPrefix(h.get("WARC-Target-URI"), "<"), ">")
	if uri == "" {
		return cdx.Line{}, errors.New("no WARC-Target-URI")
	}
	key, err := surt.CDXKey(uri)
	if err != nil {
		return cdx.Line{}, fmt.Errorf("WARC-Target-URI: %w", err)
	}
	date, err := time.Parse(time.RFC3339Nano, h.get("WARC-Date"))
	if err != nil {
		return cdx.Line{}, fmt.Errorf("WARC-Date %q: %w", h.get("WARC-Date"), err)
	}
	l := cdx.Line{
		URLKey:    key,
		Timestamp: messages.Timestamp14(date),
		Original:  uri,
		Mimetype:  baseMime(h.get("Content-Type")),
		Digest:    digestValue(h.get("WARC-Payload-Digest")),
		Length:    -1,
		Offset:    -1,
	}
	if l.Digest == "" && warcType == "resource" {
		l.Digest = digestValue(h.get("WARC-Block-Digest"))
	}
	if httpHead != nil {
		applyHTTP(&l, httpHead)
	}
	if warcType == "revisit" {
		l.Mimetype = cdx.RevisitMime
	}
	return l, nil
}

// applyHTTP takes the status, MIME type and redirect from an HTTP response
// header. A header that does not parse leaves the fields as they are.
func applyHTTP(l *cdx.Line, head []byte) {
	lines := strings.Split(strings.ReplaceAll(string(head), "\r\n", "\n"), "\n")
	status := strings.Fields(lines[0])
	if len(status) < 2 || !strings.HasPrefix(status[0], "HTTP/") {
		return
	}
	if code, err := strconv.Atoi(status[1]); err == nil && code >= 100 && code <= 999 {
		l.Status = status[1]
	}
	l.Mimetype = "unk" // a response without Content-Type, as pywb writes it
	var location string
	for _, line := range lines[1:] {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "content-type":
			if m := baseMime(value); m != "" {
				l.Mimetype = m
			}
		case "location":
			location = strings.TrimSpace(value)
		}
	}
	if strings.HasPrefix(l.Status, "3") {
		l.Redirect = location
	}
}

// baseMime drops parameters and lower-cases, as cdx.FromCrawled does.
func baseMime(m string) string {
	m, _, _ = strings.Cut(m, ";")
	return strings.ToLower(strings.TrimSpace(m))
}

// digestValue strips the algorithm ("sha1:") from a WARC digest.
func digestValue(d string) string {
	if _, v, ok := strings.Cut(d, ":"); ok {
		return strings.TrimSpace(v)
	}
	return strings.TrimSpace(d)
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}
