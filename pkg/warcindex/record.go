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
	indexed  bool  // a record that gets a line (see indexedType)
	err      error // why an indexed record has no line
	// facts are what IndexFiles matches a server-not-modified revisit and
	// its original by; set for indexed response and revisit records.
	facts recordFacts
}

// recordFacts are the header fields that name a record and, for a
// server-not-modified revisit, the original it repeats. Record ids are
// kept without their angle brackets and digests as written.
type recordFacts struct {
	response      bool   // a response record
	id            string // WARC-Record-ID
	payloadDigest string // WARC-Payload-Digest
	// notModified marks a revisit of profile server-not-modified (either
	// WARC version's URI); the refersTo fields are set only then.
	notModified                         bool
	refersTo, refersToURI, refersToDate string
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
		// httpHead is a copy: the block is discarded below, and a discard
		// that refills br's buffer overwrites the bytes Peek returned.
		httpHead, err = copyHTTPHeader(br, length, hdr.get("Content-Type"))
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
	if indexedType(rec.warcType, hdr.get("Content-Type")) {
		rec.indexed = true
		rec.line, rec.err = indexLine(rec.warcType, hdr, httpHead)
		if rec.warcType == "response" || rec.warcType == "revisit" {
			rec.facts = factsOf(rec.warcType, hdr)
		}
	}
	return rec, n, nil
}

// indexedType reports whether a record of this type and Content-Type gets
// an index line, as pywb's indexer decides (ARCHITECTURE.md section 11):
// responses and revisits always; resource and metadata records unless
// their block is warc-fields (a crawler's own notes about a capture, which
// pywb and warcio.js leave out) or, for metadata, Heritrix 1's text/anvl,
// which pywb leaves out because it collides with the response's line;
// never request or warcinfo records.
func indexedType(warcType, contentType string) bool {
	switch warcType {
	case "response", "revisit":
		return true
	case "resource", "metadata":
		m := cdx.BaseMime(contentType)
		return m != "application/warc-fields" && (warcType == "resource" || m != "text/anvl")
	}
	return false
}

// factsOf reads the recordFacts of a response or revisit record.
func factsOf(warcType string, h warcHeader) recordFacts {
	f := recordFacts{response: warcType == "response", id: trimID(h.get("WARC-Record-ID")), payloadDigest: h.get("WARC-Payload-Digest")}
	if warcType == "revisit" && isNotModifiedProfile(h.get("WARC-Profile")) {
		f.notModified = true
		f.refersTo = trimID(h.get("WARC-Refers-To"))
		f.refersToURI = trimID(h.get("WARC-Refers-To-Target-URI"))
		f.refersToDate = h.get("WARC-Refers-To-Date")
	}
	return f
}

// isNotModifiedProfile matches the server-not-modified revisit profile of
// WARC 1.0 and 1.1 (http://netpreserve.org/warc/1.x/revisit/server-not-modified).
func isNotModifiedProfile(p string) bool {
	return strings.HasSuffix(strings.ToLower(strings.TrimSpace(p)), "/revisit/server-not-modified")
}

// trimID drops the angle brackets WARC 1.0 puts around a URI field.
func trimID(v string) string {
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(v), "<"), ">")
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

// copyHTTPHeader returns a copy of the HTTP header at the start of a block
// of application/http content (either spelling of the msgtype parameter),
// leaving br where it was; nil for other content.
//
// The copy is what makes this safe: Peek's slice points into br's buffer
// and is only valid until the next read, and discarding a block longer
// than what br holds refills that buffer from its start, so a header kept
// as a slice would read as bytes of the body by the time it is parsed.
func copyHTTPHeader(br *bufio.Reader, length int64, contentType string) ([]byte, error) {
	if cdx.BaseMime(contentType) != "application/http" || length == 0 {
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
		head = head[:i+2]
	} else if i := bytes.Index(head, []byte("\n\n")); i >= 0 {
		head = head[:i+1]
	} // else a header cut off by the block's end: use what there is
	return bytes.Clone(head), nil
}

// indexLine builds the CDX line of an indexed record.
func indexLine(warcType string, h warcHeader, httpHead []byte) (cdx.Line, error) {
	uri := trimID(h.get("WARC-Target-URI"))
	if uri == "" {
		return cdx.Line{}, errors.New("no WARC-Target-URI")
	}
	key, err := surt.CDXKey(uri)
	if err != nil {
		return cdx.Line{}, fmt.Errorf("WARC-Target-URI: %w", err)
	}
	date, err := parseWARCDate(h.get("WARC-Date"))
	if err != nil {
		return cdx.Line{}, err
	}
	l := cdx.Line{
		URLKey:    key,
		Timestamp: messages.Timestamp14(date),
		Original:  uri,
		Mimetype:  cdx.BaseMime(h.get("Content-Type")),
		Digest:    digestValue(h.get("WARC-Payload-Digest")),
		Length:    -1,
		Offset:    -1,
	}
	// A block that is not an HTTP message is its own payload (a dns:
	// lookup's text/dns answer, a resource), so when the writer gave no
	// payload digest the block digest is the same thing: it is what the
	// crawled event's content_digest holds for a dns: record, and the SHA-1
	// pywb computes over such a block when the payload digest is missing.
	// A revisit's block is not its payload, so it keeps only its
	// WARC-Payload-Digest.
	if l.Digest == "" && warcType != "revisit" && httpHead == nil {
		l.Digest = sha1Value(h.get("WARC-Block-Digest"))
	}
	switch {
	case httpHead != nil:
		applyHTTP(&l, httpHead)
	case warcType == "response" && l.Mimetype != "application/http":
		// A response that is no HTTP message (a dns: lookup): pywb gives
		// it the status of the "200 OK" header it makes up for it, and
		// jwarc's CDX11 writes 200 too. Resource and metadata records
		// have no status, as pywb writes them.
		l.Status = "200"
	}
	if warcType == "revisit" {
		l.Mimetype = cdx.RevisitMime
	}
	return l, nil
}

// warcDateLayouts are the WARC-Date forms accepted: W3C-ISO8601 to the
// second (WARC/1.0) or with a fraction (WARC/1.1), and the 14-digit form
// of ARC files and some converted WARCs.
var warcDateLayouts = []string{time.RFC3339Nano, "20060102150405"}

func parseWARCDate(v string) (time.Time, error) {
	for _, layout := range warcDateLayouts {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("WARC-Date %q: want W3C-ISO8601 (2006-01-02T15:04:05Z, optionally with a fraction) or 14 digits", v)
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
			if m := cdx.BaseMime(value); m != "" {
				l.Mimetype = m
			}
		case "location":
			if location == "" {
				location = strings.TrimSpace(value)
			}
		}
	}
	if strings.HasPrefix(l.Status, "3") && location != "" {
		l.Redirect = cdx.AbsoluteRedirect(l.Original, location)
	}
}

// sha1Value is digestValue of a SHA-1 digest and "" for any other
// algorithm: the digest field holds SHA-1 (cdx.Line.Digest).
func sha1Value(d string) string {
	alg, _, ok := strings.Cut(strings.TrimSpace(d), ":")
	if !ok || !strings.EqualFold(alg, "sha1") {
		return ""
	}
	return digestValue(d)
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
