package fetch

import (
	"bufio"
	"context"
	"crypto/sha1" //nolint:gosec // SHA-1 is what WARC and CDX digests use
	"encoding/base32"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/spool"
)

// Response is a recorded fetch. Raw and Payload are spooled and must be
// released with Close.
type Response struct {
	URL      string
	IP       net.IP
	Start    time.Time
	Duration time.Duration
	// RequestBytes is the request exactly as written to the socket.
	RequestBytes []byte
	// Raw is the response exactly as received: status line, headers and
	// body as on the wire (chunked framing and content coding included).
	Raw        *spool.Buffer
	StatusCode int
	Header     http.Header
	// MIME is the Content-Type media type without parameters, lower-cased,
	// or "unknown" when the header is absent or empty.
	MIME string
	// Payload is the entity body after transfer decoding (de-chunked) and
	// before content decoding (still gzip if the server gzipped it), which
	// is what WARC-Payload-Digest covers. Without a transfer coding it is a
	// section of Raw, not a copy.
	Payload *spool.Buffer
	// PayloadDigest is "sha1:BASE32" over Payload. Raw has no digest here:
	// the WARC writer digests the block as it buffers it, so a digest
	// taken while reading would be a second pass over the same bytes.
	PayloadDigest string
	// Annotations holds lenTrunc or timeTrunc when the body was cut short,
	// and h2 (AnnotationH2) after them for an HTTP/2 exchange.
	Annotations []string
	// Protocols are the WARC-Protocol values of the exchange: the HTTP
	// version ("h2", "http/1.1", "http/1.0"), then the TLS version
	// ("tls/1.3") for https.
	Protocols []string
}

// Close releases the spooled bytes.
func (r *Response) Close() error {
	if r.Payload == nil { // a fetch that failed before its payload was settled
		return r.Raw.Close()
	}
	return errors.Join(r.Raw.Close(), r.Payload.Close())
}

// digestString formats a SHA-1 as WARC and Heritrix write it.
func digestString(h hash.Hash) string {
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil))
}

// MediaType reduces a Content-Type value to its media type the way
// Heritrix does: the leading run of characters up to ';', ',' or space,
// lower-cased; "unknown" when empty. It is the MIME of a Response.
func MediaType(ct string) string {
	ct = strings.TrimSpace(ct)
	if i := strings.IndexAny(ct, "; ,\t"); i >= 0 {
		ct = ct[:i]
	}
	if ct == "" {
		return "unknown"
	}
	return strings.ToLower(ct)
}

// exchange is one request/response on one connection.
type exchange struct {
	f        *Fetcher
	conn     *conn
	target   target
	url      string
	method   string
	jar      CookieJar
	reqBytes []byte
	start    time.Time
	deadline time.Time
	limits   Limits

	rec         *recorder
	bufs        *readBuffers // returned to the Fetcher when run ends
	headersDone bool
	wrote       bool
}

// run writes the request and records the response. It always disposes of
// the connection: back to the pool when reusable, closed otherwise.
func (x *exchange) run(ctx context.Context) (resp *Response, err error) {
	poisoned := false
	stop := context.AfterFunc(ctx, func() {
		// Unblock reads and writes at once when the caller gives up.
		_ = x.conn.SetDeadline(time.Unix(1, 0))
	})
	reusable := false
	defer func() {
		if x.bufs != nil {
			x.f.putReadBuffers(x.bufs)
			x.bufs = nil
		}
		if !stop() {
			poisoned = true
		}
		if reusable && !poisoned && err == nil {
			_ = x.conn.SetDeadline(time.Time{})
			x.f.pool.put(x.target.key(), x.conn.Conn, x.conn.ip)
			return
		}
		_ = x.conn.Close()
	}()

	if err := x.writeRequest(); err != nil {
		return nil, err
	}
	resp, hr, br, err := x.readResponse(ctx)
	if err != nil {
		return nil, err
	}
	reusable = x.f.cfg.KeepAlive && !hr.Close && len(resp.Annotations) == 0 && br.Buffered() == 0
	return resp, nil
}

func (x *exchange) writeRequest() error {
	_ = x.conn.SetWriteDeadline(earliest(time.Now().Add(x.limits.ReadTimeout), x.deadline))
	if _, err := x.conn.Write(x.reqBytes); err != nil {
		return x.classify(err)
	}
	x.wrote = true
	return nil
}

// readResponse parses the response while the recorder tees every byte off
// the socket into Raw.
func (x *exchange) readResponse(ctx context.Context) (*Response, *http.Response, *bufio.Reader, error) {
	cfg := x.f.cfg
	raw := x.f.spool.New(cfg.SpoolThreshold, cfg.SpoolDir)
	x.rec = &recorder{
		conn: x.conn, dst: raw,
		readTimeout: x.limits.ReadTimeout, deadline: x.deadline,
		limit: x.limits.MaxLengthBytes, headerLimit: maxHeaderBytes,
	}
	x.bufs = x.f.readBuffers(x.rec)
	br := x.bufs.br
	hr, err := x.readHeaders(br)
	if err != nil {
		_ = raw.Close()
		return nil, nil, nil, err
	}
	x.headersDone = true
	x.rec.headerLimit = 0
	keepCookies(ctx, x.jar, x.target.u, hr)
	// Without a transfer coding the payload is the run of Raw that follows
	// the headers: bodyStart is where, since bufio's read-ahead is in Raw
	// already. A chunked payload is spooled on its own, de-chunked.
	bodyStart := int64(-1)
	var payload *spool.Buffer
	if len(hr.TransferEncoding) == 0 {
		bodyStart = raw.Size() - int64(br.Buffered())
	} else {
		payload = x.f.spool.New(cfg.SpoolThreshold, cfg.SpoolDir)
	}
	if n := hr.ContentLength; n > 0 {
		// Size hint: one allocation instead of doubling up to it.
		raw.Grow(n - int64(br.Buffered()))
	}
	resp := &Response{
		URL: x.url, IP: x.conn.ip, Start: x.start,
		RequestBytes: x.reqBytes, Raw: raw, Payload: payload,
		StatusCode: hr.StatusCode, Header: hr.Header, MIME: MediaType(hr.Header.Get("Content-Type")),
	}
	if err := x.readBody(resp, hr, br, bodyStart); err != nil {
		_ = resp.Close()
		return nil, nil, nil, err
	}
	resp.Duration = time.Since(x.start)
	return resp, hr, br, nil
}

// readBuffers are an exchange's response reader and body copy buffer:
// 64 KiB a fetch that would otherwise be allocated (and zeroed) each time.
type readBuffers struct {
	br   *bufio.Reader
	copy []byte
}

// readBuffers returns buffers reading from r.
func (f *Fetcher) readBuffers(r io.Reader) *readBuffers {
	if b, ok := f.readers.Get().(*readBuffers); ok {
		b.br.Reset(r)
		return b
	}
	return &readBuffers{br: bufio.NewReaderSize(r, 32<<10), copy: make([]byte, 32<<10)}
}

// putReadBuffers takes buffers back once nothing reads through them. The
// reader lets go of its source so a pooled buffer holds no connection.
func (f *Fetcher) putReadBuffers(b *readBuffers) {
	b.br.Reset(nil)
	f.readers.Put(b)
}

// readHeaders parses the status line and headers, skipping interim 1xx
// responses (which stay in Raw, as they were on the wire).
func (x *exchange) readHeaders(br *bufio.Reader) (*http.Response, error) {
	// The method matters: a response to HEAD has no body whatever its
	// Content-Length says.
	req := &http.Request{Method: x.method}
	for {
		hr, err := http.ReadResponse(br, req)
		if x.rec.werr != nil {
			return nil, fmt.Errorf("fetch %s: spool raw response: %w", x.url, x.rec.werr)
		}
		if err != nil {
			return nil, x.classify(err)
		}
		if hr.StatusCode >= 200 || hr.StatusCode == http.StatusSwitchingProtocols {
			return hr, nil
		}
	}
}

// readBody reads the transfer-decoded body through the payload digest,
// into Payload or, when bodyStart is not negative, only into Raw (the
// recorder's copy), of which Payload is then the section from bodyStart.
// It settles Raw and the digests.
func (x *exchange) readBody(resp *Response, hr *http.Response, br *bufio.Reader, bodyStart int64) error {
	ph := sha1.New() //nolint:gosec // see import
	var dst io.Writer = ph
	if bodyStart < 0 {
		dst = io.MultiWriter(resp.Payload, ph)
	}
	n, err := io.CopyBuffer(markWrites{dst}, hr.Body, x.bufs.copy)
	if err != nil {
		var werr *writeErr
		if errors.As(err, &werr) {
			return fmt.Errorf("fetch %s: %w", x.url, err)
		}
		a := x.truncation(err)
		if a == "" {
			return x.classify(err)
		}
		resp.Annotations = append(resp.Annotations, a)
	}
	// hr.Body is deliberately not closed: Close drains what is left, and a
	// truncated body must not be read further. The connection is closed or
	// pooled by run.
	if x.rec.werr != nil {
		return fmt.Errorf("fetch %s: spool raw response: %w", x.url, x.rec.werr)
	}
	resp.PayloadDigest = digestString(ph)
	if err := x.settleRaw(resp.Raw, br); err != nil {
		return err
	}
	if bodyStart >= 0 {
		p, err := resp.Raw.Section(bodyStart, n)
		if err != nil {
			return fmt.Errorf("fetch %s: payload: %w", x.url, err)
		}
		resp.Payload = p
	}
	return nil
}

// settleRaw drops bytes the read-ahead pulled in past the end of the
// response (a server sending more than it declared, or a pipelined
// surplus) so Raw is exactly the response.
func (x *exchange) settleRaw(raw *spool.Buffer, br *bufio.Reader) error {
	surplus := int64(br.Buffered())
	if surplus == 0 {
		return nil
	}
	if err := raw.Truncate(raw.Size() - surplus); err != nil {
		return fmt.Errorf("fetch %s: %w", x.url, err)
	}
	return nil
}

// truncation names the annotation for a body read that stopped early but
// whose response is still kept, or "" if the fetch failed.
func (x *exchange) truncation(err error) string {
	switch {
	case errors.Is(err, errLengthLimit):
		return AnnotationLenTrunc
	case isTimeout(err) && x.rec.totalExpired():
		return AnnotationTimeTrunc
	}
	return ""
}

// classify maps a failure to its Heritrix status.
func (x *exchange) classify(err error) error {
	n := int64(0)
	if x.rec != nil {
		n = x.rec.n
	}
	wrap := func(status int, retriable bool, what string) error {
		return &Error{Status: status, Retriable: retriable,
			Err: fmt.Errorf("%s %s (after %d response bytes): %w", what, x.url, n, err)}
	}
	switch {
	case errors.Is(err, errHeaderLimit):
		return wrap(StatusConnectionBroken, false, "response headers over 1 MiB from")
	case errors.Is(err, errLengthLimit):
		return wrap(StatusConnectionBroken, false, "response headers over maxLengthBytes from")
	case isTimeout(err):
		return wrap(StatusTimeout, true, "timeout reading")
	case !x.wrote:
		return wrap(StatusConnectionBroken, true, "writing request to")
	case n == 0 && x.rec != nil && errors.Is(x.rec.err, io.EOF):
		return wrap(StatusEmptyResponse, false, "empty response from")
	case !x.headersDone && !x.ioFailure():
		// The bytes arrived but are not HTTP.
		return wrap(StatusConnectionBroken, false, "malformed HTTP response from")
	default:
		return wrap(StatusConnectionBroken, true, "connection broken reading")
	}
}

// ioFailure reports whether the connection failed or ended while the
// headers were being parsed; a parse error is then just the cut-off
// showing, not a server speaking something other than HTTP.
func (x *exchange) ioFailure() bool {
	return x.rec != nil && x.rec.err != nil
}

// stale reports whether err on a reused keep-alive connection means the
// server had closed it before our request, so a fresh dial should follow.
func (x *exchange) stale(err error) bool {
	if x.headersDone || (x.rec != nil && x.rec.n > 0) {
		return false
	}
	var fe *Error
	if !errors.As(err, &fe) {
		return false
	}
	return fe.Status == StatusEmptyResponse || (fe.Status == StatusConnectionBroken && isPeerClose(fe.Err))
}

// recorder reads from the connection, refreshing the read deadline before
// every read, enforcing the length limits, and teeing every byte into the
// raw spool.
type recorder struct {
	conn        net.Conn
	dst         io.Writer
	readTimeout time.Duration
	deadline    time.Time
	limit       int64 // MaxLengthBytes; 0 = none
	headerLimit int64 // while headers are incomplete; 0 = none
	n           int64 // bytes read so far
	err         error // last error from the connection, nil if none yet
	werr        error // spool write failure
}

func (r *recorder) Read(p []byte) (int, error) {
	for _, lim := range [...]struct {
		max int64
		err error
	}{{r.limit, errLengthLimit}, {r.headerLimit, errHeaderLimit}} {
		if lim.max <= 0 {
			continue
		}
		if r.n >= lim.max {
			return 0, lim.err
		}
		if rest := lim.max - r.n; int64(len(p)) > rest {
			p = p[:rest]
		}
	}
	_ = r.conn.SetReadDeadline(earliest(time.Now().Add(r.readTimeout), r.deadline))
	n, err := r.conn.Read(p)
	if n > 0 {
		r.n += int64(n)
		if _, werr := r.dst.Write(p[:n]); werr != nil && r.werr == nil {
			r.werr = werr
			return n, &writeErr{werr}
		}
	}
	if err != nil {
		r.err = err
	}
	return n, err
}

// totalExpired reports whether the whole-fetch deadline has passed.
func (r *recorder) totalExpired() bool {
	return !time.Now().Before(r.deadline)
}

// writeErr marks a local spool failure so it is not mistaken for a network
// error.
type writeErr struct{ err error }

func (w *writeErr) Error() string { return "spool write: " + w.err.Error() }
func (w *writeErr) Unwrap() error { return w.err }

// markWrites wraps write failures in writeErr so a copy loop can tell a
// failing spool from a failing connection.
type markWrites struct{ w io.Writer }

func (m markWrites) Write(p []byte) (int, error) {
	n, err := m.w.Write(p)
	if err != nil {
		return n, &writeErr{err}
	}
	return n, nil
}
