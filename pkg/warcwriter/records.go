package warcwriter

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // SHA-1 is what WARC digests use
	"encoding/base32"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/nlnwa/gowarc"
)

// The space after the semicolon is what Heritrix writes and what IA's CDX
// extractor matches: without it every CDX field of the record comes out
// unknown.
const (
	contentTypeRequest  = "application/http; msgtype=request"
	contentTypeResponse = "application/http; msgtype=response"
	contentTypeDNS      = "text/dns"
)

// format is everything in a record that depends on the WARC version
// written.
type format struct {
	version *gowarc.WarcVersion
	// dateLayout formats WARC-Date and WARC-Refers-To-Date.
	dateLayout string
	// identicalPayload and notModified are the WARC-Profile URIs of the
	// two kinds of revisit.
	identicalPayload, notModified string
	// name and conformsTo are the warcinfo fields "format" and "conformsTo".
	name, conformsTo string
}

// formatOf returns the format of version (Version10 or Version11).
func formatOf(version string) (format, error) {
	switch version {
	case Version10:
		// WARC 1.0 allows no fraction of a second in a date, and tools
		// written for it (IA's, hanzo warctools) parse exactly 14 digits.
		return format{
			version:          gowarc.V1_0,
			dateLayout:       "2006-01-02T15:04:05Z",
			identicalPayload: gowarc.ProfileIdenticalPayloadDigestV1_0,
			notModified:      gowarc.ProfileServerNotModifiedV1_0,
			name:             "WARC File Format 1.0",
			conformsTo:       "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.0/",
		}, nil
	case Version11:
		// Milliseconds, which WARC 1.1 allows and crawl.log timestamps have.
		return format{
			version:          gowarc.V1_1,
			dateLayout:       "2006-01-02T15:04:05.000Z",
			identicalPayload: gowarc.ProfileIdenticalPayloadDigestV1_1,
			notModified:      gowarc.ProfileServerNotModifiedV1_1,
			name:             "WARC File Format 1.1",
			conformsTo:       "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
		}, nil
	}
	return format{}, fmt.Errorf("warcwriter config: Version %q is not %q or %q", version, Version10, Version11)
}

// gowarcOptionsMu serialises gowarc.NewRecordBuilder. Every call of it runs
// uuid.EnableRandPool, an unsynchronised write to a global of
// github.com/google/uuid, so concurrent calls are a data race (harmless in
// practice, fatal under -race). This is the package's only package-level
// variable; it guards a third-party global and holds no state of its own.
var gowarcOptionsMu sync.Mutex

// newRecordID returns a WARC-Record-ID value. It reads crypto/rand directly
// because uuid.New (gowarc's default) reads the global that
// gowarcOptionsMu guards.
func newRecordID() (string, error) {
	id, err := uuid.NewRandomFromReader(rand.Reader)
	if err != nil {
		return "", fmt.Errorf("generate record id: %w", err)
	}
	return id.URN(), nil
}

// builder creates gowarc record builders with the writer's options.
type builder struct {
	bufferDir string
	format    format
}

// httpOptions build request and response records. The block is the server's
// bytes, kept as received: syntax problems in it are neither reported nor
// "fixed", and a digest supplied by the caller is checked, never replaced.
//
// Unless parse is set (a revisit needs the HTTP header split off), gowarc
// keeps the block whole. A parsed block costs a second SHA-1 pass over the
// payload for a payload digest we replace with our own anyway (gowarc would
// digest a chunked body with its framing), and an HTTP header parse.
func (b builder) httpOptions(parse bool) []gowarc.WarcRecordOption {
	opts := append(b.common(),
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrIgnore),
		gowarc.WithFixSyntaxErrors(false))
	if !parse {
		opts = append(opts, gowarc.WithSkipParseBlock())
	}
	return opts
}

// fieldsOptions build warcinfo, metadata and dns records, whose blocks this
// package writes itself: nothing in them is to be "fixed".
func (b builder) fieldsOptions() []gowarc.WarcRecordOption {
	return append(b.common(), gowarc.WithFixSyntaxErrors(false))
}

// owned adds to opts what suits a small record whose header and block this
// package writes in full (request, metadata): gowarc's header checks, which
// parse every URI field, are skipped, and the caller supplies the block
// digest (blockDigest), since gowarc then no longer computes it.
func owned(opts []gowarc.WarcRecordOption) []gowarc.WarcRecordOption {
	return append(opts, gowarc.WithSpecViolationPolicy(gowarc.ErrIgnore))
}

// gowarcMemBytes is gowarc's default limit of a record's in-memory buffer,
// past which it spills to a temporary file.
const gowarcMemBytes = 1 << 20

// sized adds to opts a block buffer of exactly size bytes when the block
// fits in memory anyway. gowarc otherwise starts every record with a
// zeroed 16 KiB buffer: too big for a request, too small for most pages.
// The limit is one more than size because a buffer that is exactly full
// spills to a file on the next write.
func sized(opts []gowarc.WarcRecordOption, size int64) []gowarc.WarcRecordOption {
	if size <= 0 || size >= gowarcMemBytes {
		return opts
	}
	return append(opts, gowarc.WithBufferMaxMemBytes(size+1))
}

// blockDigest is WARC-Block-Digest of block.
func blockDigest(block []byte) string {
	sum := sha1.Sum(block) //nolint:gosec // SHA-1 is what WARC digests use
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

func (b builder) common() []gowarc.WarcRecordOption {
	return []gowarc.WarcRecordOption{
		gowarc.WithVersion(b.format.version),
		gowarc.WithRecordIdFunc(newRecordID),
		gowarc.WithFixDigest(false),
		gowarc.WithFixContentLength(false),
		gowarc.WithBufferTmpDir(b.bufferDir),
	}
}

// newRecord starts a record of type rt with a fresh WARC-Record-ID, the
// target URI (if any), the date and the content type.
func (b builder) newRecord(rt gowarc.RecordType, opts []gowarc.WarcRecordOption,
	target string, date time.Time, contentType string) (gowarc.WarcRecordBuilder, error) {
	id, err := newRecordID()
	if err != nil {
		return nil, err
	}
	gowarcOptionsMu.Lock()
	rb := gowarc.NewRecordBuilder(rt, opts...)
	gowarcOptionsMu.Unlock()
	rb.AddWarcHeader(gowarc.WarcRecordID, "<"+id+">")
	if target != "" {
		rb.AddWarcHeader(gowarc.WarcTargetURI, target)
	}
	rb.AddWarcHeader(gowarc.WarcDate, b.formatDate(date))
	rb.AddWarcHeader(gowarc.ContentType, contentType)
	return rb, nil
}

// formatDate formats t for WARC-Date and WARC-Refers-To-Date.
func (b builder) formatDate(t time.Time) string { return t.UTC().Format(b.format.dateLayout) }

// build finishes rb. Any validation finding is an ErrInvalidInput error:
// gowarc computes Content-Length and WARC-Block-Digest itself, so a finding
// comes from a supplied value (a wrong block digest, a URI gowarc cannot
// parse).
func build(rb gowarc.WarcRecordBuilder) (gowarc.WarcRecord, error) {
	rec, v, err := rb.Build()
	if err == nil && !v.Valid() {
		err = fmt.Errorf("%w: %w", ErrInvalidInput, errors.Join(*v...))
	}
	if err != nil {
		if rec != nil {
			_ = rec.Close()
		} else {
			_ = rb.Close()
		}
		return nil, err
	}
	return rec, nil
}

// request builds the request record of c.
func (b builder) request(c *Capture) (gowarc.WarcRecord, error) {
	rb, err := b.newRecord(gowarc.Request, unbuffered(owned(b.httpOptions(false))), c.URL, c.Date, contentTypeRequest)
	if err != nil {
		return nil, err
	}
	addProtocols(rb, c.Protocols)
	rec, err := buildHeld(rb, bytes.NewReader(c.Request), int64(len(c.Request)), "its length")
	if err != nil {
		return nil, fmt.Errorf("request record: %w", err)
	}
	spellProtocols(rec)
	return rec, nil
}

// warcProtocol is the field of the WARC-Protocol proposal.
const warcProtocol = "WARC-Protocol"

// addProtocols adds one WARC-Protocol field per value, as Heritrix,
// StormCrawler and warcio.js write and read them.
func addProtocols(rb gowarc.WarcRecordBuilder, protocols []string) {
	for _, p := range protocols {
		rb.AddWarcHeader(warcProtocol, p)
	}
}

// spellProtocols restores the spelling "WARC-Protocol" in a built record:
// gowarc writes names it does not know in canonical MIME form
// ("Warc-Protocol"), and its builder renames them again while it validates,
// so this runs after Build. Field names are case-insensitive (WARC 1.1
// section 4), but every other writer spells this one so.
func spellProtocols(rec gowarc.WarcRecord) {
	for _, nv := range *rec.WarcHeader() {
		if strings.EqualFold(nv.Name, warcProtocol) {
			nv.Name = warcProtocol
		}
	}
}

// response builds the response record of c. WARC-Payload-Digest is the
// caller's: gowarc would digest a chunked body with its chunk framing, while
// WARC 1.1 (6.3.2) wants the entity body with transfer coding removed.
func (b builder) response(c *Capture, parse bool) (gowarc.WarcRecord, error) {
	// A block this package digests itself skips gowarc's header checks
	// too; a caller's digest is left to gowarc to check.
	own := !parse && c.BlockDigest == ""
	rs, held := c.Response.(io.ReadSeeker)
	held = held && own
	opts := b.httpOptions(parse)
	switch {
	case held:
		opts = unbuffered(owned(opts))
	case own:
		opts = sized(owned(opts), c.ResponseLength)
	default:
		opts = sized(opts, c.ResponseLength)
	}
	rb, err := b.newRecord(gowarc.Response, opts, c.URL, c.Date, contentTypeResponse)
	if err != nil {
		return nil, err
	}
	if c.IP != "" {
		rb.AddWarcHeader(gowarc.WarcIPAddress, c.IP)
	}
	if c.BlockDigest != "" {
		rb.AddWarcHeader(gowarc.WarcBlockDigest, c.BlockDigest)
	}
	addProtocols(rb, c.Protocols)
	// gowarc no longer parses the block, so check it is an HTTP response
	// here (the fetcher only keeps ones that are).
	var head [len("HTTP/")]byte
	k, err := io.ReadFull(io.LimitReader(c.Response, c.ResponseLength), head[:])
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		_ = rb.Close()
		return nil, fmt.Errorf("read response of %s: %w", c.URL, err)
	}
	if string(head[:k]) != "HTTP/" {
		_ = rb.Close()
		return nil, fmt.Errorf("%w: %s: Response: not an HTTP response: starts %q", ErrInvalidInput, c.URL, head[:k])
	}
	if held {
		if _, err := rs.Seek(-int64(k), io.SeekCurrent); err != nil {
			_ = rb.Close()
			return nil, fmt.Errorf("rewind response of %s: %w", c.URL, err)
		}
		return b.heldResponse(c, rb, rs)
	}
	sink := &digestSink{rb: rb}
	if own {
		sink.h = sha1.New() //nolint:gosec // SHA-1 is what WARC digests use
	}
	_, _ = sink.Write(head[:k])
	n, err := copyExactly(sink, c.Response, c.ResponseLength-int64(k))
	n += int64(k)
	if err != nil {
		_ = rb.Close()
		return nil, fmt.Errorf("read response of %s: %w", c.URL, err)
	}
	if n != c.ResponseLength {
		_ = rb.Close()
		return nil, fmt.Errorf("%w: %s: Response: has %d bytes, ResponseLength says %d: %w",
			ErrInvalidInput, c.URL, n, c.ResponseLength, io.ErrUnexpectedEOF)
	}
	if own {
		rb.AddWarcHeader(gowarc.WarcBlockDigest, sink.digest())
	}
	rec, err := build(rb)
	if err != nil {
		return nil, fmt.Errorf("response record: %w", err)
	}
	rec.WarcHeader().Set(gowarc.WarcPayloadDigest, c.PayloadDigest)
	spellProtocols(rec)
	return rec, nil
}

// heldResponse finishes the response record rb of c with the block left
// in c.Response, read from rs's current offset.
func (b builder) heldResponse(c *Capture, rb gowarc.WarcRecordBuilder, rs io.ReadSeeker) (gowarc.WarcRecord, error) {
	rec, err := buildHeld(rb, rs, c.ResponseLength, "ResponseLength")
	if err != nil {
		return nil, fmt.Errorf("%s: Response: %w", c.URL, err)
	}
	rec.WarcHeader().Set(gowarc.WarcPayloadDigest, c.PayloadDigest)
	spellProtocols(rec)
	return rec, nil
}

// wholeReader is a reader holding all its bytes in memory (bytes.Reader,
// strings.Reader): spooled responses are.
type wholeReader interface {
	Len() int
	WriteTo(io.Writer) (int64, error)
}

// digestSink feeds a record builder and, when h is set, a block digest at
// once.
type digestSink struct {
	rb gowarc.WarcRecordBuilder
	h  hash.Hash
}

func (s *digestSink) Write(p []byte) (int, error) {
	if s.h != nil {
		s.h.Write(p)
	}
	return s.rb.Write(p)
}

// digest is the WARC-Block-Digest of what was written.
func (s *digestSink) digest() string {
	return "sha1:" + base32.StdEncoding.EncodeToString(s.h.Sum(nil))
}

// revisit builds a revisit of c (identical-payload-digest, or
// server-not-modified for a 304): gowarc turns the full response record into
// one whose block is the HTTP header only.
func (b builder) revisit(c *Capture) (gowarc.WarcRecord, error) {
	resp, err := b.response(c, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Close() }()
	// The revisit keeps the response's Content-Type (application/http;
	// msgtype=response), as Heritrix writes it for HTTP revisits.
	profile := b.format.identicalPayload
	if c.Revisit.NotModified {
		profile = b.format.notModified
	}
	rev, err := resp.ToRevisitRecord(&gowarc.RevisitRef{
		Profile:        profile,
		TargetRecordId: c.Revisit.RefersToRecordID,
		TargetUri:      c.Revisit.RefersToURI,
		TargetDate:     b.formatDate(c.Revisit.RefersToDate),
	})
	if err != nil {
		return nil, fmt.Errorf("revisit record: %w", err)
	}
	return rev, nil
}

// metadata builds the metadata record of c.
func (b builder) metadata(c *Capture) (gowarc.WarcRecord, error) {
	return b.warcFields(c.URL, c.Date, metadataBlock(c.Metadata))
}

// warcFields builds a metadata record whose block is the warc-fields text
// block. The block is ours and digested here: gowarc need not parse it back.
func (b builder) warcFields(target string, date time.Time, block string) (gowarc.WarcRecord, error) {
	opts := unbuffered(append(owned(b.fieldsOptions()), gowarc.WithSkipParseBlock()))
	rb, err := b.newRecord(gowarc.Metadata, opts, target, date, gowarc.ApplicationWarcFields)
	if err != nil {
		return nil, err
	}
	rec, err := buildHeld(rb, strings.NewReader(block), int64(len(block)), "its length")
	if err != nil {
		return nil, fmt.Errorf("metadata record: %w", err)
	}
	return rec, nil
}

// metadataBlock renders m as Heritrix-style warc-fields.
func metadataBlock(m *Metadata) string {
	var sb strings.Builder
	n := 64 + len(m.Via) + len(m.HopsFromSeed) + len(m.SourceTag)
	for _, o := range m.Outlinks {
		n += 16 + len(o.URL) + len(o.Hop) + len(o.Context)
	}
	sb.Grow(n)
	field := func(name, value string) {
		if value != "" {
			sb.WriteString(name)
			sb.WriteString(": ")
			sb.WriteString(cleanField(value))
			sb.WriteString("\r\n")
		}
	}
	field("via", m.Via)
	field("hopsFromSeed", m.HopsFromSeed)
	field("sourceTag", m.SourceTag)
	field("fetchTimeMs", strconv.FormatInt(m.FetchTimeMs, 10))
	for _, o := range m.Outlinks {
		sb.WriteString("outlink: ")
		sb.WriteString(cleanWord(o.URL))
		sb.WriteByte(' ')
		sb.WriteString(cleanWord(o.Hop))
		sb.WriteByte(' ')
		sb.WriteString(cleanWord(o.Context))
		sb.WriteString("\r\n")
	}
	return sb.String()
}

// cleanWord makes s one space-free word of an outlink line; "-" stands for
// an empty value so that the line always has three words.
func cleanWord(s string) string {
	if s == "" {
		return "-"
	}
	return strings.ReplaceAll(cleanField(s), " ", "%20")
}

// cleanField percent-encodes control characters, which would end a
// warc-fields line early.
func cleanField(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		if isControl(rune(s[i])) {
			fmt.Fprintf(&sb, "%%%02X", s[i])
		} else {
			sb.WriteByte(s[i])
		}
	}
	return sb.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func isSpaceOrControl(r rune) bool { return r == ' ' || isControl(r) }

// dns builds a dns response record.
func (b builder) dns(host string, date time.Time, ip string, answer []byte) (gowarc.WarcRecord, error) {
	rb, err := b.newRecord(gowarc.Response, b.fieldsOptions(), "dns:"+host, date, contentTypeDNS)
	if err != nil {
		return nil, err
	}
	if ip != "" {
		rb.AddWarcHeader(gowarc.WarcIPAddress, ip)
	}
	if _, err := rb.Write(answer); err != nil {
		_ = rb.Close()
		return nil, fmt.Errorf("buffer dns answer: %w", err)
	}
	rec, err := build(rb)
	if err != nil {
		return nil, fmt.Errorf("dns record: %w", err)
	}
	return rec, nil
}

// warcinfo builds the warcinfo record that starts the file called name.
func (b builder) warcinfo(cfg *Config, name string, date time.Time) (gowarc.WarcRecord, error) {
	rb, err := b.newRecord(gowarc.Warcinfo, b.fieldsOptions(), "", date, gowarc.ApplicationWarcFields)
	if err != nil {
		return nil, err
	}
	rb.AddWarcHeader(gowarc.WarcFilename, name)
	var sb strings.Builder
	for _, f := range [][2]string{
		{"software", cfg.Software}, {"hostname", cfg.Hostname}, {"format", b.format.name},
		{"conformsTo", b.format.conformsTo}, {"isPartOf", cfg.CrawlName}, {"operator", cfg.Operator},
		{"robots", cfg.RobotsPolicy}, {"http-header-user-agent", cfg.UserAgent},
	} {
		if f[1] != "" {
			sb.WriteString(f[0] + ": " + f[1] + "\r\n")
		}
	}
	if _, err := rb.WriteString(sb.String()); err != nil {
		_ = rb.Close()
		return nil, fmt.Errorf("buffer warcinfo: %w", err)
	}
	rec, err := build(rb)
	if err != nil {
		return nil, fmt.Errorf("warcinfo record: %w", err)
	}
	return rec, nil
}

// OpenReader opens a WARC file for reading with gowarc, from offset. A
// process that reads WARCs while it writes them (the worker repairing a
// dead sibling's crawl.log) must open its readers here: gowarc builds a
// reader's options the way it builds a record's, through the global that
// gowarcOptionsMu guards.
func OpenReader(path string, offset int64, opts ...gowarc.WarcRecordOption) (*gowarc.WarcFileReader, error) {
	gowarcOptionsMu.Lock()
	defer gowarcOptionsMu.Unlock()
	r, err := gowarc.NewWarcFileReader(path, offset, opts...)
	if err != nil {
		return nil, fmt.Errorf("open warc %s: %w", path, err)
	}
	return r, nil
}
