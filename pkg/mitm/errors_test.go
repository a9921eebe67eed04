package mitm

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestHandlerOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		handler     HandlerFunc
		body        string
		header      http.Header
		wantStatus  int
		wantBody    string // substring
		wantRefused string
		wantCalled  bool
	}{
		{
			name: "refused",
			handler: func(context.Context, *Request) (*Response, error) {
				return nil, &RefusedError{Reason: "excluded by robots.txt"}
			},
			wantStatus: http.StatusForbidden, wantBody: "excluded by robots.txt",
			wantRefused: "excluded by robots.txt", wantCalled: true,
		},
		{
			name: "wrapped refusal",
			handler: func(context.Context, *Request) (*Response, error) {
				return nil, errors.Join(errors.New("scope"), &RefusedError{Reason: "out of scope"})
			},
			wantStatus: http.StatusForbidden, wantRefused: "out of scope", wantCalled: true,
		},
		{
			name: "error",
			handler: func(context.Context, *Request) (*Response, error) {
				return nil, errors.New("dial upstream: connection refused")
			},
			wantStatus: http.StatusBadGateway, wantBody: "Bad Gateway", wantCalled: true,
		},
		{
			name: "panic",
			handler: func(context.Context, *Request) (*Response, error) {
				panic("handler bug")
			},
			wantStatus: http.StatusBadGateway, wantCalled: true,
		},
		{
			name: "nil response",
			handler: func(context.Context, *Request) (*Response, error) {
				return nil, nil
			},
			wantStatus: http.StatusBadGateway, wantCalled: true,
		},
		{
			name:       "oversize body",
			handler:    func(context.Context, *Request) (*Response, error) { return &Response{StatusCode: 200}, nil },
			body:       strings.Repeat("x", 101),
			wantStatus: http.StatusRequestEntityTooLarge,
		},
		{
			name:       "upgrade",
			handler:    func(context.Context, *Request) (*Response, error) { return &Response{StatusCode: 200}, nil },
			header:     http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}},
			wantStatus: http.StatusNotImplemented,
		},
	}
	for _, tt := range tests {
		for _, scheme := range []string{"http", "https"} {
			t.Run(tt.name+"/"+scheme, func(t *testing.T) {
				var called atomic.Int64
				p := startProxy(t, HandlerFunc(func(ctx context.Context, r *Request) (*Response, error) {
					called.Add(1)
					return tt.handler(ctx, r)
				}), func(c *Config) { c.MaxBodyBytes = 100 })
				c, connects := p.client(t, p.ca.Pool())
				// Twice: the connection must stay usable after an error.
				for range 2 {
					var body io.Reader
					if tt.body != "" {
						body = strings.NewReader(tt.body)
					}
					req := newRequest(t, http.MethodPost, scheme+"://example.test/x", body)
					for k, v := range tt.header {
						req.Header[k] = v
					}
					resp, err := c.Do(req)
					if err != nil {
						t.Fatalf("request: %v", err)
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						t.Fatalf("read body: %v", err)
					}
					if resp.StatusCode != tt.wantStatus || !strings.Contains(string(b), tt.wantBody) {
						t.Errorf("got %d %q, want %d containing %q", resp.StatusCode, b, tt.wantStatus, tt.wantBody)
					}
					if got := resp.Header.Get("X-Trawler-Refused"); got != tt.wantRefused {
						t.Errorf("X-Trawler-Refused %q, want %q", got, tt.wantRefused)
					}
				}
				if got := called.Load() > 0; got != tt.wantCalled {
					t.Errorf("handler called: %v, want %v", got, tt.wantCalled)
				}
				if got := p.srv.Requests(); got != called.Load() {
					t.Errorf("Requests() = %d, handler called %d times", got, called.Load())
				}
				if scheme == "https" && connects.Load() != 1 {
					t.Errorf("%d CONNECTs for 2 requests: connection not kept", connects.Load())
				}
			})
		}
	}
}

func TestBadClientInput(t *testing.T) {
	p := startProxy(t, echoHandler(), nil)
	tests := []struct {
		name, send string
		wantStatus int
	}{
		{"garbage request line", "\x00\x01garbage\x7f\r\n\r\n", http.StatusBadRequest},
		{"origin form", "GET /path HTTP/1.1\r\nHost: example.test\r\n\r\n", http.StatusBadRequest},
		{"https absolute form", "GET https://example.test/ HTTP/1.1\r\nHost: example.test\r\n\r\n", http.StatusBadRequest},
		{"asterisk", "OPTIONS * HTTP/1.1\r\nHost: example.test\r\n\r\n", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := p.dialRaw(t)
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatalf("write: %v", err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("read response: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.wantStatus)
			}
		})
	}
	// The server survived all of that.
	c, _ := p.client(t, p.ca.Pool())
	getEcho(t, c, newRequest(t, http.MethodGet, "https://example.test/still-up", nil))
	if p.srv.Requests() != 1 {
		t.Errorf("Requests() = %d, want 1", p.srv.Requests())
	}
}

func TestNonTLSTunnelClosed(t *testing.T) {
	p := startProxy(t, echoHandler(), nil)
	c, br := p.connect(t, "example.test:443")
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: example.test\r\n\r\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	waitClosed(t, br, c)
	if p.srv.Requests() != 0 {
		t.Errorf("plain bytes in a tunnel reached the handler")
	}
}

func TestCloseWithOpenTunnel(t *testing.T) {
	before := runtime.NumGoroutine()

	started := make(chan struct{})
	ctxErr := make(chan error, 1)
	p := startProxy(t, HandlerFunc(func(ctx context.Context, r *Request) (*Response, error) {
		close(started)
		<-ctx.Done()
		ctxErr <- ctx.Err()
		return nil, ctx.Err()
	}), nil)

	c, br := p.connect(t, "example.test:443")
	tc := tlsClientOver(t, c, br, p.ca)
	if _, err := io.WriteString(tc, "GET /block HTTP/1.1\r\nHost: example.test\r\n\r\n"); err != nil {
		t.Fatalf("write request: %v", err)
	}
	select {
	case <-started:
	case <-time.After(testDeadline):
		t.Fatalf("handler not called")
	}

	closed := make(chan error, 1)
	go func() { closed <- p.srv.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(testDeadline):
		t.Fatalf("Close did not return")
	}
	select {
	case err := <-ctxErr:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("handler ctx err %v, want context.Canceled", err)
		}
	default:
		t.Errorf("Close returned before the handler did")
	}
	waitClosed(t, tc, c)
	c.Close()

	pollUntil(t, "goroutines to exit", func() bool {
		return runtime.NumGoroutine() <= before+2
	})
}

func TestClientDisconnectCancelsHandler(t *testing.T) {
	for _, scheme := range []string{"http", "https"} {
		t.Run(scheme, func(t *testing.T) {
			started := make(chan struct{})
			ctxErr := make(chan error, 1)
			p := startProxy(t, HandlerFunc(func(ctx context.Context, r *Request) (*Response, error) {
				close(started)
				select {
				case <-ctx.Done():
					ctxErr <- ctx.Err()
				case <-time.After(testDeadline):
					ctxErr <- errors.New("ctx not cancelled")
				}
				return nil, ctx.Err()
			}), nil)
			var conn io.Writer
			var closeConn func() error
			if scheme == "http" {
				c := p.dialRaw(t)
				conn, closeConn = c, c.Close
			} else {
				c, br := p.connect(t, "example.test:443")
				tc := tlsClientOver(t, c, br, p.ca)
				conn, closeConn = tc, c.Close
			}
			if _, err := io.WriteString(conn, "GET "+scheme+"://example.test/slow HTTP/1.1\r\nHost: example.test\r\n\r\n"); err != nil {
				t.Fatalf("write: %v", err)
			}
			select {
			case <-started:
			case <-time.After(testDeadline):
				t.Fatalf("handler not called")
			}
			if err := closeConn(); err != nil {
				t.Fatalf("close client conn: %v", err)
			}
			if err := <-ctxErr; !errors.Is(err, context.Canceled) {
				t.Errorf("handler ctx: %v, want context.Canceled", err)
			}
		})
	}
}

func TestIdleTunnelClosed(t *testing.T) {
	p := startProxy(t, echoHandler(), func(c *Config) { c.IdleTimeout = 200 * time.Millisecond })
	c, br := p.connect(t, "example.test:443")
	tc := tlsClientOver(t, c, br, p.ca)
	if _, err := io.WriteString(tc, "GET /once HTTP/1.1\r\nHost: example.test\r\n\r\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	tbr := bufio.NewReader(tc)
	resp, err := http.ReadResponse(tbr, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("read body: %v", err)
	}
	resp.Body.Close()
	// The server must hang up on its own, well before waitClosed's deadline.
	waitClosed(t, tbr, c)
}
