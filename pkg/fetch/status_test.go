package fetch

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/refusedport"
)

// TestStatusMapping drives one real failure per row of the table in
// errors.go and checks its status and Retriable flag.
func TestStatusMapping(t *testing.T) {
	deadPort := strconv.Itoa(refusedport.Port(t))
	silent := func(ss *session) { ss.waitClosed() }
	stall := func(ss *session) {
		if _, err := ss.readRequest(); err == nil {
			ss.waitClosed()
		}
	}
	resetAfter := func(sent string) func(*session) {
		return func(ss *session) {
			if _, err := ss.readRequest(); err == nil {
				_ = ss.write([]byte(sent))
				ss.reset()
			}
		}
	}
	fast := Config{ConnectTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond}
	cases := []struct {
		name      string
		handler   func(*session) // nil: no server
		cfg       Config
		flaky     bool // use a resolver that fails temporarily
		req       func(port string) Request
		status    int
		retriable bool
	}{
		{"unsupported scheme", nil, Config{}, false, func(string) Request { return Request{URL: "gopher://site.test/"} }, StatusIllegalURI, false},
		{"bad header value", nil, Config{}, false, func(string) Request {
			return Request{URL: "http://site.test/", Header: http.Header{"X": {"a\nb"}}}
		}, StatusIllegalURI, false},
		{"unsupported method", nil, Config{}, false, func(string) Request { return Request{URL: "http://site.test/", Method: "DELETE"} }, StatusIllegalURI, false},
		{"body on GET", nil, Config{}, false, func(string) Request { return Request{URL: "http://site.test/", Body: []byte("x")} }, StatusIllegalURI, false},
		{"NXDOMAIN", nil, Config{}, false, func(string) Request { return Request{URL: "http://nowhere.test/"} }, StatusDomainLookupFailed, false},
		{"DNS temporary failure", nil, Config{}, true, func(string) Request { return Request{URL: "http://site.test/"} }, StatusDomainLookupFailed, true},
		{"guard refused", nil, Config{AllowPrivate: false}, false, func(p string) Request { return Request{URL: "http://127.0.0.1:" + p + "/"} }, StatusConnectFailed, false},
		{"connection refused", nil, Config{}, false, func(string) Request { return Request{URL: "http://site.test:" + deadPort + "/"} }, StatusConnectFailed, true},
		{"TLS handshake failed", func(ss *session) {
			_ = ss.write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))
			ss.waitClosed()
		}, Config{}, false, func(p string) Request { return Request{URL: "https://site.test:" + p + "/"} }, StatusConnectFailed, true},
		{"proxy unreachable", nil, Config{Proxy: "http://127.0.0.1:" + deadPort}, false, func(string) Request { return Request{URL: "http://site.test/"} }, StatusConnectFailed, true},
		{"TLS handshake timeout", silent, fast, false, func(p string) Request { return Request{URL: "https://site.test:" + p + "/"} }, StatusTimeout, true},
		{"proxy handshake timeout", silent, fast, false, func(p string) Request {
			return Request{URL: "https://site.test/", Header: http.Header{"X-Proxy": {p}}}
		}, StatusTimeout, true},
		{"read timeout before headers", stall, fast, false, func(p string) Request { return Request{URL: "http://site.test:" + p + "/"} }, StatusTimeout, true},
		{"total timeout before headers", stall, Config{TotalTimeout: 200 * time.Millisecond}, false, func(p string) Request { return Request{URL: "http://site.test:" + p + "/"} }, StatusTimeout, true},
		{"request not written", func(ss *session) {
			if _, err := ss.readRequest(); err == nil {
				ss.reset() // while the body is still being written
			}
		}, Config{}, false, func(p string) Request {
			return Request{URL: "http://site.test:" + p + "/", Method: "POST", Body: make([]byte, 16<<20)}
		}, StatusConnectionBroken, true},
		{"reset in headers", resetAfter("HTTP/1.1 200 OK\r\nContent-"), Config{}, false, func(p string) Request { return Request{URL: "http://site.test:" + p + "/"} }, StatusConnectionBroken, true},
		{"reset in body", resetAfter("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"), Config{}, false, func(p string) Request { return Request{URL: "http://site.test:" + p + "/"} }, StatusConnectionBroken, true},
		{"malformed HTTP", respond("SSH-2.0-OpenSSH\r\n\r\n"), Config{}, false, func(p string) Request { return Request{URL: "http://site.test:" + p + "/"} }, StatusConnectionBroken, false},
		{"headers over maxLengthBytes", respond("HTTP/1.0 200 OK\r\nX-Long: " + strings.Repeat("a", 200) + "\r\n\r\n"), Config{MaxLengthBytes: 64}, false, func(p string) Request { return Request{URL: "http://site.test:" + p + "/"} }, StatusConnectionBroken, false},
		{"empty response", func(ss *session) { _, _ = ss.readRequest() }, Config{}, false, func(p string) Request { return Request{URL: "http://site.test:" + p + "/"} }, StatusEmptyResponse, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			port := deadPort
			if tc.handler != nil {
				port = startServer(t, tc.handler).port()
			}
			req := tc.req(port)
			cfg := tc.cfg
			cfg.AllowPrivate = tc.name != "guard refused"
			if p := req.Header.Get("X-Proxy"); p != "" {
				// The silent server plays a SOCKS5 proxy that never answers.
				cfg.Proxy = "socks5://127.0.0.1:" + p
			}
			cfg.SpoolDir = t.TempDir()
			var r Resolver = testResolver
			if tc.flaky {
				r = flakyResolver{}
			}
			f := New(cfg, r)
			t.Cleanup(func() { _ = f.Close() })
			resp, err := f.Fetch(context.Background(), req)
			if err == nil {
				_ = resp.Close()
			}
			fe := fetchErr(t, err, tc.status, tc.retriable)
			if tc.name == "request not written" && !strings.Contains(fe.Error(), "writing request") {
				t.Fatalf("%v: the failure was not in writing the request", fe)
			}
		})
	}
}
