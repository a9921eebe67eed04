package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Peer is the server side of a scripted HTTP/2 connection: it has read
// the client's preface and request headers, and writes whatever frames a
// test wants, well-formed or not.
type h2Peer struct {
	t    *testing.T
	conn *tls.Conn
	fr   *http2.Framer
	req  []hpack.HeaderField
}

// h2Scripted starts a TLS server that agrees to h2 by ALPN and runs script
// once the request's headers arrived.
func h2Scripted(t *testing.T, script func(p *h2Peer)) *rawServer {
	cert := selfSigned(t)
	return startServer(t, func(ss *session) {
		tc := tls.Server(ss.conn, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2"}})
		if tc.Handshake() != nil {
			return
		}
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(tc, preface); err != nil || string(preface) != http2.ClientPreface {
			return
		}
		p := &h2Peer{t: t, conn: tc, fr: http2.NewFramer(tc, tc)}
		p.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
		for p.req == nil {
			f, err := p.fr.ReadFrame()
			if err != nil {
				return
			}
			if mh, ok := f.(*http2.MetaHeadersFrame); ok {
				p.req = mh.Fields
			}
		}
		script(p)
		ss.waitClosed()
	})
}

// settings sends the server preface.
func (p *h2Peer) settings() { _ = p.fr.WriteSettings() }

// headers sends one header block on stream 1 from name/value pairs,
// split into CONTINUATION frames as needed.
func (p *h2Peer) headers(end bool, pairs ...string) {
	var b bytes.Buffer
	enc := hpack.NewEncoder(&b)
	enc.SetMaxDynamicTableSizeLimit(0)
	for i := 0; i+1 < len(pairs); i += 2 {
		_ = enc.WriteField(hpack.HeaderField{Name: pairs[i], Value: pairs[i+1]})
	}
	block := b.Bytes()
	first := true
	for first || len(block) > 0 {
		n := min(len(block), h2DefaultFrame)
		frag, rest := block[:n], block[n:]
		if first {
			_ = p.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: frag, EndStream: end, EndHeaders: len(rest) == 0})
		} else {
			_ = p.fr.WriteContinuation(1, len(rest) == 0, frag)
		}
		block, first = rest, false
	}
}

func (p *h2Peer) data(end bool, s string) { _ = p.fr.WriteData(1, end, []byte(s)) }

// The recorded response keeps the header fields in the order the server
// sent them, repeated fields included; the parsed Header is canonical.
func TestH2KeepsHeaderOrder(t *testing.T) {
	srv := h2Scripted(t, func(p *h2Peer) {
		p.settings()
		p.headers(false, ":status", "200", "zeta", "1", "set-cookie", "a=1", "alpha", "2", "set-cookie", "b=2",
			"content-type", "text/plain", "content-length", "5")
		p.data(true, "hello")
	})
	f := newFetcher(t, Config{AllowPrivate: true, HTTP2: true})
	r := fetchOK(t, f, "https://site.test:"+srv.port()+"/x", nil)
	want := "HTTP/1.1 200 OK\r\nzeta: 1\r\nset-cookie: a=1\r\nalpha: 2\r\nset-cookie: b=2\r\n" +
		"content-type: text/plain\r\ncontent-length: 5\r\n\r\nhello"
	if got := string(readAll(t, r.Raw)); got != want {
		t.Fatalf("raw\n%q\nwant\n%q", got, want)
	}
	if r.MIME != "text/plain" || strings.Join(r.Header.Values("Set-Cookie"), ",") != "a=1,b=2" {
		t.Fatalf("MIME %q header %v", r.MIME, r.Header)
	}
	if r.PayloadDigest != sha1Digest([]byte("hello")) {
		t.Fatalf("digest %s", r.PayloadDigest)
	}
}

// An interim 103 is kept in Raw before the final response, as the
// HTTP/1.x path keeps 1xx responses; trailers end the stream and are not
// recorded (an HTTP/1.1 body without chunking cannot carry them).
func TestH2InterimAndTrailers(t *testing.T) {
	srv := h2Scripted(t, func(p *h2Peer) {
		p.settings()
		p.headers(false, ":status", "103", "link", "</s.css>; rel=preload")
		p.headers(false, ":status", "200")
		p.data(false, "body")
		p.headers(true, "x-trailer", "t")
	})
	f := newFetcher(t, Config{AllowPrivate: true, HTTP2: true})
	r := fetchOK(t, f, "https://site.test:"+srv.port()+"/", nil)
	want := "HTTP/1.1 103 Early Hints\r\nlink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\n\r\nbody"
	if got := string(readAll(t, r.Raw)); got != want || string(readAll(t, r.Payload)) != "body" || r.StatusCode != 200 {
		t.Fatalf("raw %q status %d", got, r.StatusCode)
	}
}

// Bad HTTP/2 input gives a classified error (status, retriable, a reason
// naming what was wrong), never a hang or a crash; a body over
// maxLengthBytes is kept, cut and annotated, as over HTTP/1.1.
func TestH2BadInput(t *testing.T) {
	bigHeaders := []string{":status", "200"}
	for range 120 { // 120 fields of 10 KB: past the 1 MiB header limit
		bigHeaders = append(bigHeaders, "x-pad", strings.Repeat("p", 10_000))
	}
	cases := []struct {
		name      string
		script    func(p *h2Peer)
		status    int
		retriable bool
		reason    string
		cfg       Config
	}{
		{name: "HTTP/1.1 text instead of frames", status: StatusConnectionBroken, reason: "malformed HTTP/2",
			script: func(p *h2Peer) { _, _ = p.conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")) }},
		{name: "garbage frame header", status: StatusConnectionBroken, reason: "malformed HTTP/2",
			script: func(p *h2Peer) { _, _ = p.conn.Write(bytes.Repeat([]byte{0xff}, 64)) }},
		{name: "no SETTINGS first", status: StatusConnectionBroken, reason: "not SETTINGS",
			script: func(p *h2Peer) { p.headers(true, ":status", "200") }},
		{name: "bad setting", status: StatusConnectionBroken, reason: "malformed HTTP/2",
			script: func(p *h2Peer) { _ = p.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1}) }},
		{name: "closed after SETTINGS", status: StatusConnectionBroken, retriable: true, reason: "connection broken",
			script: func(p *h2Peer) { p.settings(); _ = p.conn.Close() }},
		{name: "DATA before HEADERS", status: StatusConnectionBroken, reason: "DATA before the response headers",
			script: func(p *h2Peer) { p.settings(); p.data(true, "x") }},
		{name: "bad status", status: StatusConnectionBroken, reason: `bad :status "2000"`,
			script: func(p *h2Peer) { p.settings(); p.headers(true, ":status", "2000") }},
		{name: "no status", status: StatusConnectionBroken, reason: "without :status",
			script: func(p *h2Peer) { p.settings(); p.headers(true, "content-type", "text/plain") }},
		{name: "push promise", status: StatusConnectionBroken, reason: "PUSH_PROMISE",
			script: func(p *h2Peer) {
				p.settings()
				_ = p.fr.WritePushPromise(http2.PushPromiseParam{StreamID: 1, PromiseID: 2, EndHeaders: true})
			}},
		{name: "RST_STREAM", status: StatusConnectionBroken, retriable: true, reason: "stream reset (REFUSED_STREAM)",
			script: func(p *h2Peer) { p.settings(); _ = p.fr.WriteRSTStream(1, http2.ErrCodeRefusedStream) }},
		{name: "RST_STREAM mid-body", status: StatusConnectionBroken, retriable: true, reason: "stream reset (INTERNAL_ERROR)",
			script: func(p *h2Peer) {
				p.settings()
				p.headers(false, ":status", "200")
				p.data(false, "part")
				_ = p.fr.WriteRSTStream(1, http2.ErrCodeInternal)
			}},
		{name: "GOAWAY before the stream", status: StatusConnectionBroken, retriable: true, reason: "GOAWAY (ENHANCE_YOUR_CALM)",
			script: func(p *h2Peer) { p.settings(); _ = p.fr.WriteGoAway(0, http2.ErrCodeEnhanceYourCalm, nil) }},
		{name: "GOAWAY then close mid-body", status: StatusConnectionBroken, retriable: true, reason: "connection broken",
			script: func(p *h2Peer) {
				p.settings()
				p.headers(false, ":status", "200")
				_ = p.fr.WriteGoAway(1, http2.ErrCodeNo, nil)
				p.data(false, "part")
				_ = p.conn.Close()
			}},
		{name: "headers over 1 MiB", status: StatusConnectionBroken, reason: "headers over 1 MiB",
			script: func(p *h2Peer) { p.settings(); p.headers(true, bigHeaders...) }},
		{name: "headers over maxLengthBytes", status: StatusConnectionBroken, reason: "over maxLengthBytes",
			cfg:    Config{MaxLengthBytes: 20},
			script: func(p *h2Peer) { p.settings(); p.headers(true, ":status", "200", "x-long", strings.Repeat("l", 40)) }},
		{name: "truncated body, connection closed", status: StatusConnectionBroken, retriable: true, reason: "connection broken reading",
			script: func(p *h2Peer) {
				p.settings()
				p.headers(false, ":status", "200", "content-length", "1000")
				p.data(false, "only this")
				_ = p.conn.Close()
			}},
		{name: "body shorter than content-length", status: StatusConnectionBroken, retriable: true, reason: `against content-length "1000"`,
			script: func(p *h2Peer) {
				p.settings()
				p.headers(false, ":status", "200", "content-length", "1000")
				p.data(true, "only this")
			}},
		{name: "garbage frame mid-body", status: StatusConnectionBroken, retriable: true, reason: "connection broken reading",
			script: func(p *h2Peer) {
				p.settings()
				p.headers(false, ":status", "200")
				p.data(false, "part")
				_, _ = p.conn.Write(bytes.Repeat([]byte{0xff}, 64))
			}},
		{name: "closed without a byte", status: StatusEmptyResponse, reason: "empty response",
			script: func(p *h2Peer) { _ = p.conn.Close() }},
		{name: "silent server", status: StatusTimeout, retriable: true, reason: "timeout reading",
			cfg:    Config{ReadTimeout: 300 * time.Millisecond},
			script: func(p *h2Peer) { p.settings() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := h2Scripted(t, tc.script)
			cfg := tc.cfg
			cfg.AllowPrivate, cfg.HTTP2 = true, true
			f := newFetcher(t, cfg)
			resp, err := f.Fetch(context.Background(), Request{URL: "https://site.test:" + srv.port() + "/"})
			if err == nil {
				_ = resp.Close()
				t.Fatalf("fetched %d, want status %d", resp.StatusCode, tc.status)
			}
			fe := fetchErr(t, err, tc.status, tc.retriable)
			if !strings.Contains(fe.Error(), tc.reason) || !strings.Contains(fe.Error(), "https://site.test:"+srv.port()+"/") {
				t.Fatalf("error %q lacks %q or the URL", fe, tc.reason)
			}
		})
	}
}

// Limits that keep a response: maxLengthBytes cuts the body (lenTrunc),
// the total timeout after the headers keeps what came (timeTrunc).
func TestH2TruncationsKept(t *testing.T) {
	t.Run("lenTrunc", func(t *testing.T) {
		srv := h2Scripted(t, func(p *h2Peer) {
			p.settings()
			p.headers(false, ":status", "200")
			for range 10 {
				p.data(false, strings.Repeat("b", 100))
			}
			p.data(true, "")
		})
		f := newFetcher(t, Config{AllowPrivate: true, HTTP2: true, MaxLengthBytes: 250})
		r := fetchOK(t, f, "https://site.test:"+srv.port()+"/", nil)
		head := "HTTP/1.1 200 OK\r\n\r\n"
		if r.Raw.Size() != 250 || r.Payload.Size() != int64(250-len(head)) || strings.Join(r.Annotations, ",") != AnnotationLenTrunc+",h2" {
			t.Fatalf("raw %d payload %d annotations %v", r.Raw.Size(), r.Payload.Size(), r.Annotations)
		}
	})
	t.Run("timeTrunc", func(t *testing.T) {
		srv := h2Scripted(t, func(p *h2Peer) {
			p.settings()
			p.headers(false, ":status", "200")
			p.data(false, "started")
		})
		f := newFetcher(t, Config{AllowPrivate: true, HTTP2: true, TotalTimeout: 500 * time.Millisecond})
		r := fetchOK(t, f, "https://site.test:"+srv.port()+"/", nil)
		if string(readAll(t, r.Payload)) != "started" || strings.Join(r.Annotations, ",") != AnnotationTimeTrunc+",h2" {
			t.Fatalf("payload %q annotations %v", readAll(t, r.Payload), r.Annotations)
		}
	})
}

// Cancelling the fetch is not a fetch result, over HTTP/2 too.
func TestH2Cancellation(t *testing.T) {
	started := make(chan struct{})
	srv := h2Scripted(t, func(p *h2Peer) {
		p.settings()
		p.headers(false, ":status", "200")
		close(started)
	})
	f := newFetcher(t, Config{AllowPrivate: true, HTTP2: true})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err := f.Fetch(ctx, Request{URL: "https://site.test:" + srv.port() + "/"})
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Fatalf("err %v, want the cancellation", err)
	}
	if fe := (*Error)(nil); errors.As(err, &fe) {
		t.Fatalf("cancellation reported as fetch status %d", fe.Status)
	}
}
