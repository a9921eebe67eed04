package mitm

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testDeadline bounds every wait in these tests; nothing sleeps.
const testDeadline = 10 * time.Second

// echo is what echoHandler reports about the request it received.
type echo struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// echoHandler answers every request with a JSON echo of it.
func echoHandler() Handler {
	return HandlerFunc(func(_ context.Context, r *Request) (*Response, error) {
		b, err := json.Marshal(echo{Method: r.Method, URL: r.URL, Header: r.Header, Body: r.Body})
		if err != nil {
			return nil, err
		}
		return &Response{
			StatusCode: http.StatusOK,
			Header:     http.Header{"Content-Type": {"application/json"}},
			Body:       strings.NewReader(string(b)),
			BodyLength: int64(len(b)),
		}, nil
	})
}

type testProxy struct {
	srv  *Server
	ca   *CA
	addr string
}

// startProxy runs a Server on 127.0.0.1 until the test ends.
func startProxy(t *testing.T, h Handler, tweak func(*Config)) *testProxy {
	t.Helper()
	ca, err := NewCA()
	if err != nil {
		t.Fatalf("NewCA: %v", err)
	}
	cfg := Config{CA: ca, Handler: h}
	if tweak != nil {
		tweak(&cfg)
	}
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve returned %v after Close, want nil", err)
			}
		case <-time.After(testDeadline):
			t.Errorf("Serve did not return after Close")
		}
	})
	return &testProxy{srv: srv, ca: ca, addr: ln.Addr().String()}
}

// client returns an http.Client using the proxy, trusting pool (nil means
// the system roots), and a counter of the CONNECTs it made.
func (p *testProxy) client(t *testing.T, pool *x509.CertPool) (*http.Client, *atomic.Int64) {
	t.Helper()
	connects := new(atomic.Int64)
	tr := &http.Transport{
		Proxy:           http.ProxyURL(&url.URL{Scheme: "http", Host: p.addr}),
		TLSClientConfig: &tls.Config{RootCAs: pool},
		OnProxyConnectResponse: func(context.Context, *url.URL, *http.Request, *http.Response) error {
			connects.Add(1)
			return nil
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: testDeadline}, connects
}

// getEcho fetches u through c and decodes the echo.
func getEcho(t *testing.T, c *http.Client, req *http.Request) echo {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s: status %d: %s", req.Method, req.URL, resp.StatusCode, b)
	}
	var e echo
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatalf("%s %s: decode echo: %v", req.Method, req.URL, err)
	}
	return e
}

func newRequest(t *testing.T, method, u string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	return req
}

// dialRaw opens a plain TCP connection to the proxy with a deadline.
func (p *testProxy) dialRaw(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.addr, testDeadline)
	if err != nil {
		t.Fatalf("dial proxy: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(testDeadline)); err != nil {
		t.Fatalf("set deadline: %v", err)
	}
	return c
}

// connect sends CONNECT authority on a fresh connection and checks the 200.
func (p *testProxy) connect(t *testing.T, authority string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c := p.dialRaw(t)
	if _, err := io.WriteString(c, "CONNECT "+authority+" HTTP/1.1\r\nHost: "+authority+"\r\n\r\n"); err != nil {
		t.Fatalf("write CONNECT: %v", err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read CONNECT response: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("CONNECT status %d", resp.StatusCode)
	}
	return c, br
}

// waitClosed reads from c until the peer closes it, failing on a timeout.
func waitClosed(t *testing.T, r io.Reader, c net.Conn) {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(testDeadline)); err != nil {
		t.Fatalf("set deadline: %v", err)
	}
	_, err := io.Copy(io.Discard, r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v", testDeadline)
	}
}

// pollUntil polls cond until it holds or the deadline passes.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not a wait for an event
	}
}

// tlsClientOver runs a TLS client handshake for example.test over an
// established tunnel.
func tlsClientOver(t *testing.T, c net.Conn, br *bufio.Reader, ca *CA) *tls.Conn {
	t.Helper()
	tc := tls.Client(&readerConn{Conn: c, r: br}, &tls.Config{RootCAs: ca.Pool(), ServerName: "example.test"})
	if err := tc.Handshake(); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	return tc
}
