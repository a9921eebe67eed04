package mitm

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// fuzzMaxBody is the proxy's body cap in the fuzz targets.
const fuzzMaxBody = 4 << 10

// fuzzProxy is one proxy on loopback shared by every exec of a target. Its
// handler checks what the proxy hands on (an absolute http(s) URL with a
// host, no hop-by-hop header, a body within the cap) and its log catches
// panics that net/http would otherwise recover and hide.
type fuzzProxy struct {
	addr string
	mu   sync.Mutex
	bad  []string
}

func (p *fuzzProxy) fail(format string, args ...any) {
	p.mu.Lock()
	p.bad = append(p.bad, fmt.Sprintf(format, args...))
	p.mu.Unlock()
}

// take returns and clears the problems seen so far.
func (p *fuzzProxy) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	bad := p.bad
	p.bad = nil
	return bad
}

type panicCatcher struct{ p *fuzzProxy }

func (h panicCatcher) Enabled(context.Context, slog.Level) bool { return true }
func (h panicCatcher) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panic") {
		h.p.fail("logged: %s", r.Message)
	}
	return nil
}
func (h panicCatcher) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h panicCatcher) WithGroup(string) slog.Handler      { return h }

func startFuzzProxy(f *testing.F) *fuzzProxy {
	f.Helper()
	p := &fuzzProxy{}
	ca, err := NewCA()
	if err != nil {
		f.Fatal(err)
	}
	h := HandlerFunc(func(_ context.Context, r *Request) (*Response, error) {
		u, err := url.Parse(r.URL)
		switch {
		case err != nil:
			p.fail("handler got URL %q that does not parse: %v", r.URL, err)
		case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
			p.fail("handler got URL %q, want absolute http(s) with a host", r.URL)
		}
		for name := range r.Header {
			if isHopByHop(http.CanonicalHeaderKey(name)) {
				p.fail("hop-by-hop header %q reached the handler", name)
			}
		}
		if len(r.Body) > fuzzMaxBody {
			p.fail("body of %d bytes over the %d cap", len(r.Body), fuzzMaxBody)
		}
		return &Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/plain"}},
			Body: strings.NewReader("ok"), BodyLength: 2}, nil
	})
	srv, err := NewServer(Config{CA: ca, Handler: h, MaxBodyBytes: fuzzMaxBody,
		IdleTimeout: 500 * time.Millisecond, Log: slog.New(panicCatcher{p})})
	if err != nil {
		f.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	f.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	p.addr = ln.Addr().String()
	return p
}

// exchange writes in to conn, half-closes it and reads everything the
// proxy answers; the proxy must finish well within the deadline.
func exchange(t *testing.T, conn net.Conn, in []byte) []byte {
	t.Helper()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = conn.Write(in)
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	out, err := io.ReadAll(conn)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("proxy still holding the connection after 5s; sent %q", in)
	}
	return out
}

// checkAnswer checks that what the proxy wrote is HTTP responses.
func checkAnswer(t *testing.T, in, out []byte) {
	t.Helper()
	if len(out) == 0 {
		return // a connection closed without an answer is allowed
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(out))), nil)
	if err != nil {
		t.Fatalf("answer to %q is not an HTTP response: %v\n%q", in, err, out)
	}
	_ = resp.Body.Close()
	if resp.StatusCode == http.StatusInternalServerError {
		t.Fatalf("500 for client input %q:\n%q", in, out)
	}
}

// FuzzProxyRequest writes fuzzed bytes to the proxy's listener: request
// lines, headers, bodies, CONNECT requests followed by whatever. The proxy
// answers or closes, quickly, and never panics.
func FuzzProxyRequest(f *testing.F) {
	for _, s := range []string{
		"GET http://example.com/a?b HTTP/1.1\r\nHost: example.com\r\nConnection: keep-alive, X-Foo\r\nX-Foo: 1\r\n\r\n",
		"POST http://example.com/form HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\n\r\na=b",
		"POST http://example.com/ HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		"GET /origin-form HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET http://[::1]:8080/ HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
		"GET http://example.com/ HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n\x16\x03\x01\x00\x05hello",
		"CONNECT example.com:443 HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n",
		"CONNECT [::1] HTTP/1.1\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://example.com/ HTTP/1.0\r\n\r\nGET http://example.com/2 HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"POST http://example.com/ HTTP/1.1\r\nContent-Length: 99999\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	p := startFuzzProxy(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		conn, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		out := exchange(t, conn, in)
		checkAnswer(t, in, out)
		for _, b := range p.take() {
			t.Errorf("request %q: %s", in, b)
		}
	})
}

// FuzzTunnelRequest opens an intercepted tunnel to a fuzzed authority and
// writes fuzzed bytes inside it, so the request parsing of the decrypted
// side (and the URL built from the CONNECT authority) is fuzzed too.
func FuzzTunnelRequest(f *testing.F) {
	for _, s := range [][2]string{
		{"example.com:443", "GET /a?b HTTP/1.1\r\nHost: example.com\r\n\r\n"},
		{"example.com:8443", "POST /f HTTP/1.1\r\nHost: example.com\r\nContent-Length: 2\r\n\r\nab"},
		{"[::1]:443", "GET http://other.example/x HTTP/1.1\r\nHost: other\r\n\r\n"},
		{"192.0.2.1:443", "CONNECT a:1 HTTP/1.1\r\n\r\n"},
		{"example.com", "GET * HTTP/1.1\r\nHost: example.com\r\n\r\n"},
	} {
		f.Add(s[0], []byte(s[1]))
	}
	p := startFuzzProxy(f)
	f.Fuzz(func(t *testing.T, authority string, in []byte) {
		if strings.ContainsAny(authority, "\r\n ") {
			return // not one request line
		}
		conn, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", authority, authority)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return // closed: a CONNECT it would not take
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			if resp.StatusCode == http.StatusInternalServerError {
				t.Fatalf("CONNECT %q: 500", authority)
			}
			return
		}
		host, _ := splitAuthority(authority, "443")
		tc := tls.Client(&bufferedConn{Conn: conn, r: br}, &tls.Config{InsecureSkipVerify: true, ServerName: sni(host)}) //nolint:gosec // a test of the proxy, not of its certificates
		if err := tc.Handshake(); err != nil {
			return // e.g. a name no certificate can be minted for
		}
		_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = tc.Write(in)
		_ = tc.CloseWrite()
		out, err := io.ReadAll(tc)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("tunnel to %q still open after 5s; sent %q", authority, in)
		}
		checkAnswer(t, in, out)
		for _, b := range p.take() {
			t.Errorf("tunnel %q request %q: %s", authority, in, b)
		}
	})
}

// sni is the server name a client would send for host: none for an IP.
func sni(host string) string {
	if net.ParseIP(host) != nil {
		return ""
	}
	return host
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
