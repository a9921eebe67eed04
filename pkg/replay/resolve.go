package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// DefaultLimit is how many captures one lookup asks for: pywb's
// RemoteIndexSource closest_limit, the limit of its OutbackCDX queries.
const DefaultLimit = 100

// EmptyDigest is the base32 SHA-1 of no bytes: a revisit of an empty
// payload needs no original (resolvingloader.py EMPTY_DIGEST).
const EmptyDigest = "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"

var (
	// ErrNotFound: the index has no capture of the URL.
	ErrNotFound = errors.New("no capture of the URL in the index")
	// ErrMissingOriginal: a revisit's original payload could not be
	// found or loaded. The text is pywb's (ResolvingLoader.
	// MISSING_REVISIT_MSG), so that logs of the two read alike.
	ErrMissingOriginal = errors.New("Original for revisit record could not be loaded") //lint:ignore ST1005 pywb's message, kept verbatim
	// ErrSelfRedirect: the capture is a redirect to its own URL, which
	// pywb skips for the next closest capture rather than loop.
	ErrSelfRedirect = errors.New("self-redirect")
	// ErrNoLocation: the index line names no WARC record (a failed fetch
	// forwarded as a failure-status-code line), so there is nothing to
	// load.
	ErrNoLocation = errors.New("the index line names no WARC record")
)

// Options configures New.
type Options struct {
	// Index answers the lookups; required.
	Index Index
	// Records opens the WARC records the index names; required.
	Records Records
	// ResolveRevisits applies cdx_resolve_revisits to the lookup's lines
	// (pywb's resolveRevisits=true): a revisit line whose digest matches
	// an earlier non-revisit line of the result gets that line's record
	// as its payload (case 3) and its MIME type and status. pywb's replay
	// (rewriterapp.py) does not ask for it, so every revisit is resolved
	// by its WARC-Refers-To-Target-URI (case 1); false is that default.
	ResolveRevisits bool
	// Limit bounds the captures of one lookup; 0 means DefaultLimit.
	Limit int
}

// Resolver answers "URL U at time T" from an index and WARC records as
// pywb's warcserver does. It is safe for concurrent use.
type Resolver struct {
	index   Index
	records Records
	resolve bool
	limit   int
}

// New checks the options and returns a Resolver.
func New(o Options) (*Resolver, error) {
	if o.Index == nil || o.Records == nil {
		return nil, errors.New("replay: Index and Records are required")
	}
	if o.Limit < 0 {
		return nil, fmt.Errorf("replay: limit %d: want 0 (default %d) or more", o.Limit, DefaultLimit)
	}
	if o.Limit == 0 {
		o.Limit = DefaultLimit
	}
	return &Resolver{index: o.Index, records: o.Records, resolve: o.ResolveRevisits, limit: o.Limit}, nil
}

// Via says how the response was put together: which of pywb's cases
// (resolvingloader.py load_headers_and_payload) applied.
type Via int

const (
	// ViaRecord: the line's own record gave headers and payload (case 2).
	ViaRecord Via = iota
	// ViaRedirectRevisit: a revisit whose HTTP status is 3xx, returned
	// as it is with Content-Length 0, its original never loaded (case 1).
	ViaRedirectRevisit
	// ViaEmptyDigest: a revisit of an empty payload, its own empty block
	// the payload (case 1, EMPTY_DIGEST).
	ViaEmptyDigest
	// ViaRefersTo: a revisit whose payload was found by looking up its
	// WARC-Refers-To-Target-URI closest to WARC-Refers-To-Date with the
	// same digest (case 1, _load_different_url_payload), at the same URL
	// or another one.
	ViaRefersTo
	// ViaOrigFields: a revisit resolved by cdx_resolve_revisits to an
	// original of the same lookup (case 3; Options.ResolveRevisits).
	ViaOrigFields
)

func (v Via) String() string {
	switch v {
	case ViaRecord:
		return "record"
	case ViaRedirectRevisit:
		return "redirect revisit"
	case ViaEmptyDigest:
		return "empty-digest revisit"
	case ViaRefersTo:
		return "refers-to lookup"
	case ViaOrigFields:
		return "orig fields"
	}
	return "Via(" + strconv.Itoa(int(v)) + ")"
}

// Response is a replayed capture.
type Response struct {
	// StatusCode and Status ("200 OK") are the replayed status.
	StatusCode int
	Status     string
	// Header is the HTTP header replayed: the capture's own, or its
	// original's when the capture (an old-style revisit) has none.
	Header http.Header
	// Body is the payload as stored in the WARC record it comes from,
	// transfer and content codings intact. Close it.
	Body io.ReadCloser
	// Capture is the index line replayed (with cdx_resolve_revisits'
	// changes, if any).
	Capture cdx.Line
	// Via says which case applied.
	Via Via
	// Payload is where the body was read: the record's file, offset and
	// length, and its WARC-Target-URI and WARC-Date.
	Payload Source
	// Skipped holds why each closer capture could not be replayed.
	Skipped []error
}

// Source is a WARC record a response's body came from.
type Source struct {
	Filename  string
	Offset    int64
	Length    int64
	TargetURI string
	Date      string
}

// Resolve replays url at timestamp (1 to 14 digits): the captures of url,
// closest to timestamp first, are tried in turn until one loads, as pywb's
// ResourceHandler tries them. With no capture the error is ErrNotFound;
// when none loads it joins every capture's error (errors.Is finds
// ErrMissingOriginal, ErrUnknownFile and the others in it).
func (r *Resolver) Resolve(ctx context.Context, url, timestamp string) (*Response, error) {
	closest, err := Timestamp14(timestamp)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", url, err)
	}
	lines, err := r.index.Query(ctx, Query{URL: url, Closest: closest, Limit: r.limit})
	if err != nil {
		return nil, fmt.Errorf("replay %s at %s: index lookup: %w", url, closest, err)
	}
	sortClosest(lines, closest)
	caps := make([]capture, len(lines))
	for i, l := range lines {
		caps[i] = capture{Line: l}
	}
	if r.resolve {
		resolveRevisits(caps)
	}
	if len(caps) == 0 {
		return nil, fmt.Errorf("replay %s at %s: %w", url, closest, ErrNotFound)
	}
	var skipped []error
	for _, c := range caps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		resp, err := r.load(ctx, url, c)
		if err == nil {
			resp.Skipped = skipped
			return resp, nil
		}
		skipped = append(skipped, fmt.Errorf("capture %s %s (%s:%d): %w", c.Timestamp, c.Original, c.Filename, c.Offset, err))
	}
	return nil, fmt.Errorf("replay %s at %s: none of %d captures could be loaded: %w", url, closest, len(caps), errors.Join(skipped...))
}

// capture is an index line and, after cdx_resolve_revisits, the location
// of its original (the line's orig.length, orig.offset, orig.filename).
type capture struct {
	cdx.Line
	orig *cdx.Line
}

// loaded is an opened record and the index line that located it.
type loaded struct {
	*Record
	at cdx.Line
}

// load replays one capture: WARCPathLoader.load_resource in
// responseloader.py, around load_headers_and_payload.
func (r *Resolver) load(ctx context.Context, reqURL string, c capture) (*Response, error) {
	// load_resource returns nothing for a line without a filename or
	// offset, and the next line is tried.
	if c.Filename == "" || c.Offset < 0 {
		return nil, ErrNoLocation
	}
	// failed_files: a file that failed once in this capture is not tried
	// again for it (_resolve_path_load).
	failed := map[string]bool{}
	headers, payload, via, err := r.headersAndPayload(ctx, c, failed)
	if err != nil {
		return nil, err
	}
	closeBoth := func() {
		_ = headers.Close()
		if payload.Record != headers.Record {
			_ = payload.Close()
		}
	}
	var h *HTTPHeader
	if payload.Type == "response" || payload.Type == "revisit" {
		h = headers.HTTP
		if h == nil {
			h = payload.HTTP
		}
		// Lines whose status is not 2xx, 4xx or 5xx go through the
		// self-redirect check (load_resource, raise_on_self_redirect).
		if st := c.Status; h != nil && (st == "" || !strings.ContainsAny(st[:1], "245")) &&
			isSelfRedirect(reqURL, c.Line, h.StatusCode(), h.Header.Get("Location")) {
			closeBoth()
			return nil, fmt.Errorf("%w: %s to %s", ErrSelfRedirect, h.StatusCode(), h.Header.Get("Location"))
		}
	}
	if h == nil {
		// No HTTP header anywhere (a resource record, a non-HTTP URI):
		// pywb's replay reads the record with ensure_http_headers, which
		// makes one from the WARC header (warcio recordloader.py
		// default_http_headers).
		h = defaultHTTPHeader(payload.Record)
	}
	if headers.Record != payload.Record {
		_ = headers.Close()
	}
	code, status := statusOf(h)
	return &Response{
		StatusCode: code,
		Status:     status,
		Header:     h.Header,
		Body:       recordBody{payload.Record},
		Capture:    c.Line,
		Via:        via,
		Payload: Source{Filename: payload.at.Filename, Offset: payload.at.Offset, Length: payload.at.Length,
			TargetURI: payload.TargetURI(), Date: payload.Header.Get("WARC-Date")},
	}, nil
}

// headersAndPayload is resolvingloader.py load_headers_and_payload: the
// record that gives the HTTP header and the one that gives the payload,
// which differ for a revisit. On success both are open (possibly the
// same record); on error neither is.
func (r *Resolver) headersAndPayload(ctx context.Context, c capture, failed map[string]bool) (loaded, loaded, Via, error) {
	headers, err := r.open(ctx, c.Line, failed)
	if err != nil {
		return loaded{}, loaded{}, 0, err
	}
	switch {
	// Case 1: the line is still a revisit (cdx_resolve_revisits found no
	// original for it, or did not run): two index lookups.
	case c.Mimetype == cdx.RevisitMime:
		// A redirect is not worth its payload, which a browser ignores:
		// the revisit is replayed as it is, with no body.
		if headers.HTTP != nil && strings.HasPrefix(headers.HTTP.StatusCode(), "3") {
			headers.HTTP.Header.Set("Content-Length", "0")
			return headers, headers, ViaRedirectRevisit, nil
		}
		payload, via, err := r.differentURLPayload(ctx, c, headers, failed)
		if err != nil {
			_ = headers.Close()
			return loaded{}, loaded{}, 0, err
		}
		return headers, payload, via, nil
	// Case 3: a same-URL revisit resolved to its original by
	// cdx_resolve_revisits: the payload is at orig.*.
	case c.orig != nil:
		payload, err := r.open(ctx, *c.orig, failed)
		if err != nil {
			_ = headers.Close()
			return loaded{}, loaded{}, 0, err
		}
		return headers, payload, ViaOrigFields, nil
	}
	// Case 2: not a revisit.
	return headers, headers, ViaRecord, nil
}

// differentURLPayload is resolvingloader.py _load_different_url_payload:
// the original of a revisit is looked up by its WARC-Refers-To-Target-URI
// (this URL or another one), closest to its WARC-Refers-To-Date, among
// non-revisit captures with the revisit's digest; the first that loads is
// the payload.
func (r *Resolver) differentURLPayload(ctx context.Context, c capture, headers loaded, failed map[string]bool) (loaded, Via, error) {
	digest := c.Digest
	// The payload of an empty-payload revisit is the revisit's own empty
	// block: nothing to look up.
	if digest == EmptyDigest {
		return headers, ViaEmptyDigest, nil
	}
	ref := trimURI(headers.Header.Get("WARC-Refers-To-Target-URI"))
	if ref == "" {
		return loaded{}, 0, fmt.Errorf("%w: the revisit record has no WARC-Refers-To-Target-URI", ErrMissingOriginal)
	}
	refDate := c.Timestamp
	if d := headers.Header.Get("WARC-Refers-To-Date"); d != "" {
		var err error
		if refDate, err = isoToTimestamp(d); err != nil {
			return loaded{}, 0, fmt.Errorf("%w: WARC-Refers-To-Date: %w", ErrMissingOriginal, err)
		}
	}
	filters := []Filter{{Field: "mime", Value: cdx.RevisitMime, Invert: true}}
	if digest != "" {
		filters = append(filters, Filter{Field: "digest", Value: digest})
	}
	lines, err := r.index.Query(ctx, Query{URL: ref, Closest: refDate, Filters: filters, Limit: r.limit})
	if err != nil {
		return loaded{}, 0, fmt.Errorf("%w: looking up %s: %w", ErrMissingOriginal, ref, err)
	}
	// pywb filters and sorts what its index source returns itself
	// (cdxops.py process_cdx): an index that ignored a filter or ordered
	// ties otherwise cannot change the original found. Its
	// RemoteIndexSource sends OutbackCDX only url, closest, sort and
	// limit, and filters the 100 closest captures it gets back; sending
	// the filters too, as here, finds the same original, and finds one
	// where more than 100 closer captures would have hidden it from pywb.
	lines = applyFilters(lines, filters)
	sortClosest(lines, refDate)
	var errs []error
	for _, l := range lines {
		p, err := r.open(ctx, l, failed)
		if err == nil {
			return p, ViaRefersTo, nil
		}
		errs = append(errs, err)
	}
	if len(lines) == 0 {
		return loaded{}, 0, fmt.Errorf("%w: no capture of %s with digest %s near %s", ErrMissingOriginal, ref, digest, refDate)
	}
	return loaded{}, 0, fmt.Errorf("%w: %d captures of %s with digest %s, none loaded: %w", ErrMissingOriginal, len(lines), ref, digest, errors.Join(errs...))
}

// open is resolvingloader.py _resolve_path_load: it loads the record a
// line names, unless its file already failed for this capture, and marks
// the file failed when it cannot.
func (r *Resolver) open(ctx context.Context, l cdx.Line, failed map[string]bool) (loaded, error) {
	if failed[l.Filename] {
		return loaded{}, fmt.Errorf("skipping %s: it already failed for this capture", l.Filename)
	}
	rec, err := r.records.Open(ctx, l.Filename, l.Offset, l.Length)
	if err != nil {
		failed[l.Filename] = true
		return loaded{}, err
	}
	return loaded{Record: rec, at: l}, nil
}

// defaultHTTPHeader is warcio's default_http_headers for a record without
// an HTTP header: 200 OK with the record's Content-Type and length.
func defaultHTTPHeader(rec *Record) *HTTPHeader {
	h := http.Header{}
	if ct := rec.Header.Get("Content-Type"); ct != "" {
		h.Set("Content-Type", ct)
	}
	h.Set("Content-Length", strconv.FormatInt(rec.Length, 10))
	return &HTTPHeader{Proto: "HTTP/1.0", StatusLine: "200 OK", Header: h}
}

// statusOf reads the status code; a status line without a numeric code
// is replaced with "204 No Content", as ResolvingLoader.__call__ does
// (validate_statusline).
func statusOf(h *HTTPHeader) (int, string) {
	code, err := strconv.Atoi(h.StatusCode())
	if err != nil || code < 100 || code > 999 {
		return http.StatusNoContent, "204 No Content"
	}
	return code, h.StatusLine
}

// recordBody reads a record's payload and closes its file.
type recordBody struct{ rec *Record }

func (b recordBody) Read(p []byte) (int, error) { return b.rec.Body.Read(p) }
func (b recordBody) Close() error               { return b.rec.Close() }
