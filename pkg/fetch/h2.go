package fetch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // SHA-1 is what WARC and CDX digests use
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/trawler-crawl/trawler/pkg/spool"
)

// HTTP/2 (RFC 9113) is spoken by hand on the guarded connection, as
// HTTP/1.x is, with x/net's Framer and HPACK: one request per connection
// (stream 1), so there is no multiplexing state to keep, and the
// connection is closed after the response. The exchange is recorded in
// HTTP/1.1 text form (h2text.go): the header fields in the order received,
// the body as the DATA frames carried it.
const (
	h2Stream = 1
	// h2Window is the flow-control window granted to the server, per
	// stream and for the connection: large, since the reader spools as
	// fast as it reads; it is topped up once half is used.
	h2Window = 1 << 30
	// h2DefaultWindow and h2DefaultFrame are RFC 9113's initial values.
	h2DefaultWindow = 65535
	h2DefaultFrame  = 16384
)

// h2Exchange is one request and response on an HTTP/2 connection.
type h2Exchange struct {
	f     *Fetcher
	conn  *conn
	p     fetchPlan
	req   h2Request
	start time.Time

	rec *recorder // counts the connection's bytes and refreshes deadlines
	bw  *bufio.Writer
	fr  *http2.Framer

	// What the server's SETTINGS and WINDOW_UPDATEs allow us to send.
	peerFrame          uint32
	peerInitialWindow  int64
	connWin, streamWin int64

	raw       *spool.Buffer
	ph        hash.Hash
	head      *h2Head
	bodyStart int64
	bodyN     int64
	unacked   uint32 // DATA bytes not yet given back by WINDOW_UPDATE
	annots    []string
	wrote     bool
	ended     bool // the server ended stream 1 (or we stopped reading it)
	settings  bool // the server's preface SETTINGS arrived
}

// roundTripH2 performs p on c, which negotiated h2, and closes c.
func (f *Fetcher) roundTripH2(ctx context.Context, c *conn, p fetchPlan, spec reqSpec, start time.Time) (*Response, error) {
	defer func() { _ = c.Close() }()
	req, err := buildH2Request(spec, p.target.scheme)
	if err != nil {
		return nil, &Error{Status: StatusIllegalURI, Err: fmt.Errorf("request %s: %w", p.req.URL, err)}
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	x := &h2Exchange{f: f, conn: c, p: p, req: req, start: start,
		peerFrame: h2DefaultFrame, peerInitialWindow: h2DefaultWindow, connWin: h2DefaultWindow, streamWin: h2DefaultWindow,
		raw: f.spool.New(f.cfg.SpoolThreshold, f.cfg.SpoolDir), ph: sha1.New()} //nolint:gosec // see import
	x.rec = &recorder{conn: c.Conn, dst: io.Discard, readTimeout: p.limits.ReadTimeout, deadline: p.deadline}
	x.bw = bufio.NewWriter(c.Conn)
	x.fr = http2.NewFramer(x.bw, bufio.NewReaderSize(x.rec, 32<<10))
	x.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	x.fr.MaxHeaderListSize = maxHeaderBytes
	x.fr.SetMaxReadFrameSize(h2DefaultFrame)
	resp, err := x.run(ctx)
	if err != nil {
		_ = x.raw.Close()
		return nil, err
	}
	x.goAway()
	return resp, nil
}

// run sends the request and reads the response.
func (x *h2Exchange) run(ctx context.Context) (*Response, error) {
	if err := x.sendRequest(ctx); err != nil {
		return nil, err
	}
	for !x.ended {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		if err := x.step(ctx); err != nil {
			if x.keepCut(err) {
				break
			}
			return nil, x.classify(err)
		}
	}
	if err := x.checkLength(); err != nil {
		return nil, err
	}
	return x.response()
}

// step reads and handles one frame.
func (x *h2Exchange) step(ctx context.Context) error {
	frame, err := x.fr.ReadFrame()
	if mh, ok := frame.(*http2.MetaHeadersFrame); ok && mh.Truncated {
		// The Framer gives up on a header block far over the limit with
		// a bare PROTOCOL_ERROR; the frame says why.
		return errHeaderLimit
	}
	if err != nil {
		return err
	}
	return x.handle(ctx, frame)
}

// keepCut reports whether a read failure after the response headers is
// the whole-fetch deadline, which keeps what was read, annotated.
func (x *h2Exchange) keepCut(err error) bool {
	if x.head == nil || !isTimeout(err) || !x.rec.totalExpired() {
		return false
	}
	x.annots = append(x.annots, AnnotationTimeTrunc)
	return true
}

// sendRequest writes the connection preface, our SETTINGS, the request
// headers and the body.
func (x *h2Exchange) sendRequest(ctx context.Context) error {
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, hf := range x.req.fields {
		if err := enc.WriteField(hf); err != nil {
			return fmt.Errorf("fetch %s: encode HTTP/2 headers: %w", x.p.req.URL, err)
		}
	}
	err := x.send(func() error {
		if _, err := io.WriteString(x.bw, http2.ClientPreface); err != nil {
			return err
		}
		if err := x.fr.WriteSettings(
			http2.Setting{ID: http2.SettingEnablePush, Val: 0},
			http2.Setting{ID: http2.SettingInitialWindowSize, Val: h2Window},
			http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: maxHeaderBytes},
		); err != nil {
			return err
		}
		if err := x.fr.WriteWindowUpdate(0, h2Window-h2DefaultWindow); err != nil {
			return err
		}
		return x.writeHeaderBlock(block.Bytes(), len(x.req.body) == 0)
	})
	if err != nil {
		return x.classify(err)
	}
	x.wrote = true
	return x.sendBody(ctx)
}

// writeHeaderBlock writes block as HEADERS and CONTINUATION frames.
func (x *h2Exchange) writeHeaderBlock(block []byte, endStream bool) error {
	first := true
	for first || len(block) > 0 {
		n := min(len(block), int(x.peerFrame))
		frag, rest := block[:n], block[n:]
		var err error
		if first {
			err = x.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: h2Stream, BlockFragment: frag,
				EndStream: endStream, EndHeaders: len(rest) == 0})
		} else {
			err = x.fr.WriteContinuation(h2Stream, len(rest) == 0, frag)
		}
		if err != nil {
			return err
		}
		block, first = rest, false
	}
	return nil
}

// sendBody writes the request body within the server's flow-control
// windows, reading frames while they are closed. A server that answers
// before the body is sent has the rest of it dropped.
func (x *h2Exchange) sendBody(ctx context.Context) error {
	body := x.req.body
	for len(body) > 0 && x.head == nil && !x.ended {
		n := int(min(int64(len(body)), int64(x.peerFrame), x.connWin, x.streamWin))
		if n <= 0 {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			if err := x.step(ctx); err != nil {
				return x.classify(err)
			}
			continue
		}
		chunk := body[:n]
		if err := x.send(func() error { return x.fr.WriteData(h2Stream, n == len(body), chunk) }); err != nil {
			return x.classify(err)
		}
		body = body[n:]
		x.connWin -= int64(n)
		x.streamWin -= int64(n)
	}
	return nil
}

// send runs write (frames into the buffered writer) and flushes them to
// the connection within the read timeout.
func (x *h2Exchange) send(write func() error) error {
	_ = x.conn.SetWriteDeadline(earliest(time.Now().Add(x.p.limits.ReadTimeout), x.p.deadline))
	err := write()
	if err == nil {
		err = x.bw.Flush()
	}
	if err != nil {
		return &h2SendErr{err}
	}
	return nil
}

// h2SendErr marks a failed write, so that a connection the server closed
// while we answered its SETTINGS or PING is not taken for bad framing.
type h2SendErr struct{ err error }

func (e *h2SendErr) Error() string { return "write: " + e.err.Error() }
func (e *h2SendErr) Unwrap() error { return e.err }

// handle acts on one frame from the server.
func (x *h2Exchange) handle(ctx context.Context, frame http2.Frame) error {
	if _, ok := frame.(*http2.SettingsFrame); !ok && !x.settings {
		return x.malformed("the server's first frame is %s, not SETTINGS", frame.Header().Type)
	}
	switch f := frame.(type) {
	case *http2.SettingsFrame:
		return x.onSettings(f)
	case *http2.PingFrame:
		if f.IsAck() {
			return nil
		}
		return x.send(func() error { return x.fr.WritePing(true, f.Data) })
	case *http2.WindowUpdateFrame:
		x.onWindowUpdate(f)
		return nil
	case *http2.GoAwayFrame:
		if f.LastStreamID < h2Stream {
			return x.fail(StatusConnectionBroken, true, fmt.Sprintf("HTTP/2 GOAWAY (%v) before the request was processed by", f.ErrCode))
		}
		return nil // the stream is still answered; the connection ends after
	case *http2.RSTStreamFrame:
		if f.StreamID != h2Stream {
			return nil
		}
		return x.fail(StatusConnectionBroken, true, fmt.Sprintf("HTTP/2 stream reset (%v) by", f.ErrCode))
	case *http2.MetaHeadersFrame:
		return x.onHeaders(ctx, f)
	case *http2.DataFrame:
		return x.onData(f)
	case *http2.PushPromiseFrame:
		return x.malformed("PUSH_PROMISE although push is disabled")
	}
	return nil // PRIORITY and unknown frame types are ignored (RFC 9113 section 4.1)
}

// onSettings applies what limits our sending and acknowledges.
func (x *h2Exchange) onSettings(f *http2.SettingsFrame) error {
	x.settings = true
	if f.IsAck() {
		return nil
	}
	err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err // a frame size or window out of range (RFC 9113 section 6.5.2)
		}
		switch s.ID {
		case http2.SettingMaxFrameSize:
			x.peerFrame = s.Val
		case http2.SettingInitialWindowSize:
			x.streamWin += int64(s.Val) - x.peerInitialWindow
			x.peerInitialWindow = int64(s.Val)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return x.send(x.fr.WriteSettingsAck)
}

func (x *h2Exchange) onWindowUpdate(f *http2.WindowUpdateFrame) {
	switch f.StreamID {
	case 0:
		x.connWin += int64(f.Increment)
	case h2Stream:
		x.streamWin += int64(f.Increment)
	}
}

// onHeaders records an interim (1xx), final or trailing header block.
func (x *h2Exchange) onHeaders(ctx context.Context, f *http2.MetaHeadersFrame) error {
	if f.StreamID != h2Stream {
		return x.malformed("HEADERS on stream %d, which the client never opened", f.StreamID)
	}
	if f.Truncated {
		return errHeaderLimit
	}
	if x.head != nil { // trailers: an HTTP/1.1 body without chunking cannot carry them
		if !f.StreamEnded() {
			return x.malformed("a second header block that does not end the stream")
		}
		x.ended = true
		return nil
	}
	h, err := parseH2Head(f.Fields)
	if err != nil {
		return x.malformed("%v", err)
	}
	if err := x.writeRaw(h.text()); err != nil {
		return err
	}
	if lim := x.p.limits.MaxLengthBytes; lim > 0 && x.raw.Size() > lim {
		return errLengthLimit
	}
	if h.status < 200 { // interim, kept in Raw as the HTTP/1.x path keeps it
		if f.StreamEnded() {
			return x.malformed("a %d response ends the stream", h.status)
		}
		return nil
	}
	x.head, x.bodyStart = &h, x.raw.Size()
	keepCookies(ctx, x.p.req.Jar, x.p.target.u, &http.Response{Header: h.header()})
	x.ended = f.StreamEnded()
	return nil
}

// onData records body bytes up to MaxLengthBytes and gives the window back.
func (x *h2Exchange) onData(f *http2.DataFrame) error {
	if f.StreamID != h2Stream {
		return x.malformed("DATA on stream %d, which the client never opened", f.StreamID)
	}
	if x.head == nil {
		return x.malformed("DATA before the response headers")
	}
	data := f.Data()
	if lim := x.p.limits.MaxLengthBytes; lim > 0 && x.raw.Size()+int64(len(data)) > lim {
		data = data[:lim-x.raw.Size()]
		x.annots = append(x.annots, AnnotationLenTrunc)
		x.ended = true
	}
	if err := x.writeRaw(data); err != nil {
		return err
	}
	x.ph.Write(data)
	x.bodyN += int64(len(data))
	x.ended = x.ended || f.StreamEnded()
	x.unacked += f.Length
	if x.ended || x.unacked < h2Window/2 {
		return nil
	}
	n := x.unacked
	x.unacked = 0
	return x.send(func() error {
		if err := x.fr.WriteWindowUpdate(0, n); err != nil {
			return err
		}
		return x.fr.WriteWindowUpdate(h2Stream, n)
	})
}

// writeRaw appends to the recorded response; a failure is local.
func (x *h2Exchange) writeRaw(p []byte) error {
	if _, err := x.raw.Write(p); err != nil {
		return &writeErr{err}
	}
	return nil
}

// checkLength compares a complete body with its content-length, as an
// HTTP/1.1 reader does: a body cut short is a broken connection.
func (x *h2Exchange) checkLength() error {
	cl := x.head.header().Get("Content-Length")
	if cl == "" || len(x.annots) > 0 || x.p.method == http.MethodHead ||
		x.head.status == http.StatusNoContent || x.head.status == http.StatusNotModified {
		return nil
	}
	n, err := strconv.ParseInt(cl, 10, 64)
	if err != nil || n != x.bodyN {
		return x.fail(StatusConnectionBroken, true,
			fmt.Sprintf("HTTP/2 body of %d bytes against content-length %q from", x.bodyN, cl))
	}
	return nil
}

// response assembles the recorded exchange.
func (x *h2Exchange) response() (*Response, error) {
	payload, err := x.raw.Section(x.bodyStart, x.bodyN)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: payload: %w", x.p.req.URL, err)
	}
	h := x.head.header()
	return &Response{
		URL: x.p.req.URL, IP: x.conn.ip, Start: x.start, Duration: time.Since(x.start),
		RequestBytes: x.req.text, Raw: x.raw, Payload: payload, PayloadDigest: digestString(x.ph),
		StatusCode: x.head.status, Header: h, MIME: MediaType(h.Get("Content-Type")),
		Annotations: append(x.annots, AnnotationH2), Protocols: protocols(x.conn.Conn, ProtocolH2),
	}, nil
}

// goAway ends the connection politely: the stream is cancelled if we
// stopped reading it early, then GOAWAY. Failures do not matter any more.
func (x *h2Exchange) goAway() {
	_ = x.send(func() error {
		if len(x.annots) > 0 {
			if err := x.fr.WriteRSTStream(h2Stream, http2.ErrCodeCancel); err != nil {
				return err
			}
		}
		return x.fr.WriteGoAway(h2Stream, http2.ErrCodeNo, nil)
	})
}
