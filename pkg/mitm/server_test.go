package mitm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

func TestNewServerRequiresCAAndHandler(t *testing.T) {
	ca, err := NewCA()
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	for _, cfg := range []Config{{Handler: echoHandler()}, {CA: ca}} {
		if _, err := NewServer(cfg); err == nil {
			t.Errorf("NewServer(%+v) succeeded", cfg)
		}
	}
}

func TestProxyURLs(t *testing.T) {
	p := startProxy(t, echoHandler(), nil)
	c, _ := p.client(t, p.ca.Pool())
	tests := []struct {
		in, want string
	}{
		{"http://example.test/p?q=1&r=%2F", "http://example.test/p?q=1&r=%2F"},
		{"http://example.test", "http://example.test/"},
		{"http://example.test:8080/p", "http://example.test:8080/p"},
		{"https://example.test/a/b?c=d", "https://example.test/a/b?c=d"},
		{"https://example.test:443/x", "https://example.test/x"},
		{"https://example.test:8443/x", "https://example.test:8443/x"},
		{"https://127.0.0.1:9443/ip", "https://127.0.0.1:9443/ip"},
		{"https://[::1]/v6", "https://[::1]/v6"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			req := newRequest(t, http.MethodGet, tt.in, nil)
			req.Header.Set("X-Test", "yes")
			e := getEcho(t, c, req)
			if e.Method != http.MethodGet || e.URL != tt.want {
				t.Errorf("got %s %s, want GET %s", e.Method, e.URL, tt.want)
			}
			if e.Header.Get("X-Test") != "yes" || e.Header.Get("Host") == "" {
				t.Errorf("headers not passed: %v", e.Header)
			}
			if e.Body != nil {
				t.Errorf("body %q, want nil", e.Body)
			}
		})
	}
}

func TestHopByHopHeadersRemoved(t *testing.T) {
	p := startProxy(t, echoHandler(), nil)
	c := p.dialRaw(t)
	req := "GET http://example.test/h HTTP/1.1\r\n" +
		"Host: example.test\r\n" +
		"Connection: keep-alive, X-Private\r\n" +
		"X-Private: secret\r\n" +
		"Proxy-Connection: keep-alive\r\n" +
		"Proxy-Authorization: Basic Zm9vOmJhcg==\r\n" +
		"Keep-Alive: timeout=5\r\n" +
		"TE: trailers\r\n" +
		"Trailer: X-T\r\n" +
		"X-Kept: 1\r\n" +
		"\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatalf("write: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	defer resp.Body.Close()
	var e echo
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("decode: %v", err)
	}
	for _, h := range []string{"Connection", "X-Private", "Proxy-Connection", "Proxy-Authorization", "Keep-Alive", "Te", "Trailer"} {
		if v, ok := e.Header[h]; ok {
			t.Errorf("hop-by-hop header %s: %v passed to handler", h, v)
		}
	}
	if e.Header.Get("X-Kept") != "1" || e.Header.Get("Host") != "example.test" {
		t.Errorf("end-to-end headers lost: %v", e.Header)
	}
}

func TestResponseHeadersCleaned(t *testing.T) {
	p := startProxy(t, HandlerFunc(func(context.Context, *Request) (*Response, error) {
		return &Response{
			StatusCode: http.StatusOK,
			Header: http.Header{
				"Connection":        {"X-Hop"},
				"X-Hop":             {"1"},
				"Keep-Alive":        {"timeout=1"},
				"Content-Length":    {"999"},
				"Transfer-Encoding": {"gzip"},
				"X-End":             {"2"},
			},
			Body:       strings.NewReader("abc"),
			BodyLength: 3,
		}, nil
	}), nil)
	c, _ := p.client(t, p.ca.Pool())
	resp, err := c.Get("https://example.test/")
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "abc" || resp.ContentLength != 3 {
		t.Fatalf("body %q (len %d), err %v", b, resp.ContentLength, err)
	}
	for _, h := range []string{"X-Hop", "Keep-Alive", "Content-Type"} {
		if v, ok := resp.Header[h]; ok {
			t.Errorf("response header %s: %v should not be sent", h, v)
		}
	}
	if resp.Header.Get("X-End") != "2" {
		t.Errorf("X-End lost: %v", resp.Header)
	}
}

func TestKeepAliveOneTunnel(t *testing.T) {
	p := startProxy(t, echoHandler(), nil)
	c, connects := p.client(t, p.ca.Pool())
	const n = 5
	for i := range n {
		e := getEcho(t, c, newRequest(t, http.MethodGet, "https://example.test/k?i="+string(rune('0'+i)), nil))
		if want := "https://example.test/k?i=" + string(rune('0'+i)); e.URL != want {
			t.Errorf("URL %s, want %s", e.URL, want)
		}
	}
	if got := connects.Load(); got != 1 {
		t.Errorf("%d CONNECTs for %d requests, want 1", got, n)
	}
	if got := p.srv.Requests(); got != n {
		t.Errorf("Requests() = %d, want %d", got, n)
	}
}

func TestMethodsAndBodies(t *testing.T) {
	p := startProxy(t, echoHandler(), nil)
	c, _ := p.client(t, p.ca.Pool())
	tests := []struct {
		method, url, body string
	}{
		{http.MethodPost, "http://example.test/form", "a=1&b=2"},
		{http.MethodPost, "https://example.test/form", "x=" + strings.Repeat("y", 100000)},
		{http.MethodPut, "https://example.test/put", "put body"},
		{http.MethodOptions, "https://example.test/opt", ""},
		{http.MethodDelete, "http://example.test/del", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.url, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			e := getEcho(t, c, newRequest(t, tt.method, tt.url, body))
			if e.Method != tt.method || e.URL != tt.url || string(e.Body) != tt.body {
				t.Errorf("got %s %s body %d bytes, want %s %s body %d bytes",
					e.Method, e.URL, len(e.Body), tt.method, tt.url, len(tt.body))
			}
		})
	}
}

func TestHead(t *testing.T) {
	var method atomic.Value
	p := startProxy(t, HandlerFunc(func(_ context.Context, r *Request) (*Response, error) {
		method.Store(r.Method)
		return &Response{StatusCode: http.StatusOK, Body: strings.NewReader("hello"), BodyLength: 5}, nil
	}), nil)
	c, connects := p.client(t, p.ca.Pool())
	for _, u := range []string{"http://example.test/h", "https://example.test/h", "https://example.test/h2"} {
		resp, err := c.Head(u)
		if err != nil {
			t.Fatalf("HEAD %s: %v", u, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(b) != 0 || resp.ContentLength != 5 {
			t.Errorf("HEAD %s: body %q, Content-Length %d, err %v", u, b, resp.ContentLength, err)
		}
		if got := method.Load(); got != http.MethodHead {
			t.Errorf("handler saw %v, want HEAD", got)
		}
	}
	if got := connects.Load(); got != 1 {
		t.Errorf("HEADs used %d tunnels, want 1", got)
	}
}

func TestTLSAgainstCA(t *testing.T) {
	p := startProxy(t, echoHandler(), nil)
	for _, host := range []string{"example.test", "127.0.0.1"} {
		t.Run(host, func(t *testing.T) {
			c, br := p.connect(t, host+":443")
			conf := &tls.Config{RootCAs: p.ca.Pool(), ServerName: host, NextProtos: []string{"h2", "http/1.1"}}
			tc := tls.Client(&readerConn{Conn: c, r: br}, conf)
			if err := tc.Handshake(); err != nil {
				t.Fatalf("handshake: %v", err)
			}
			st := tc.ConnectionState()
			if st.NegotiatedProtocol != "http/1.1" {
				t.Errorf("ALPN %q, want http/1.1", st.NegotiatedProtocol)
			}
			leaf := st.PeerCertificates[0]
			sum := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
			if got := base64.StdEncoding.EncodeToString(sum[:]); got != p.ca.SPKIHash() {
				t.Errorf("served leaf SPKI %s, want %s", got, p.ca.SPKIHash())
			}
			if err := leaf.VerifyHostname(host); err != nil {
				t.Errorf("leaf does not cover %s: %v", host, err)
			}
		})
	}
	t.Run("untrusted", func(t *testing.T) {
		c, _ := p.client(t, x509.NewCertPool())
		_, err := c.Get("https://example.test/")
		var verr *tls.CertificateVerificationError
		if !errors.As(err, &verr) {
			t.Errorf("GET without the CA: err %v, want a certificate verification error", err)
		}
	})
}

func TestChunkedAndLargeBodies(t *testing.T) {
	small := []byte("tiny body")
	large := bytes.Repeat([]byte("0123456789abcdef"), 5<<20/16)
	p := startProxy(t, HandlerFunc(func(_ context.Context, r *Request) (*Response, error) {
		switch {
		case strings.HasSuffix(r.URL, "/chunked-small"):
			return &Response{StatusCode: 200, Body: bytes.NewReader(small), BodyLength: -1}, nil
		case strings.HasSuffix(r.URL, "/chunked-large"):
			return &Response{StatusCode: 200, Body: io.MultiReader(bytes.NewReader(large)), BodyLength: -1}, nil
		default:
			return &Response{StatusCode: 200, Body: bytes.NewReader(large), BodyLength: int64(len(large))}, nil
		}
	}), nil)
	c, _ := p.client(t, p.ca.Pool())
	tests := []struct {
		url     string
		want    []byte
		chunked bool
	}{
		{"https://example.test/chunked-small", small, true},
		{"http://example.test/chunked-small", small, true},
		{"https://example.test/chunked-large", large, true},
		{"https://example.test/large", large, false},
		{"http://example.test/large", large, false},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			resp, err := c.Get(tt.url)
			if err != nil {
				t.Fatalf("GET: %v", err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("read body: %v", err)
			}
			if !bytes.Equal(b, tt.want) {
				t.Errorf("body %d bytes, want %d intact", len(b), len(tt.want))
			}
			isChunked := len(resp.TransferEncoding) == 1 && resp.TransferEncoding[0] == "chunked"
			if isChunked != tt.chunked {
				t.Errorf("Transfer-Encoding %v, Content-Length %d; chunked want %v",
					resp.TransferEncoding, resp.ContentLength, tt.chunked)
			}
			if !tt.chunked && resp.ContentLength != int64(len(tt.want)) {
				t.Errorf("Content-Length %d, want %d", resp.ContentLength, len(tt.want))
			}
		})
	}
}

func TestShortBodyAbortsConnection(t *testing.T) {
	p := startProxy(t, HandlerFunc(func(context.Context, *Request) (*Response, error) {
		return &Response{StatusCode: 200, Body: strings.NewReader("only ten b"), BodyLength: 100}, nil
	}), nil)
	c, _ := p.client(t, p.ca.Pool())
	// Depending on how much was buffered, the abort shows before or after
	// the headers; either way the client must not get a clean response.
	resp, err := c.Get("https://example.test/short")
	if err == nil {
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
	}
	if err == nil {
		t.Errorf("short body arrived as a complete response")
	}
}

// readerConn reads through r (which may hold buffered bytes) but writes to
// the connection directly.
type readerConn struct {
	net.Conn
	r io.Reader
}

func (c *readerConn) Read(p []byte) (int, error) { return c.r.Read(p) }
