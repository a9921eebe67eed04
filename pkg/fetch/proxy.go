package fetch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/proxy"
)

// Proxy kinds understood in Config.Proxy.
const (
	proxyHTTP   = "http"
	proxySOCKS5 = "socks5"
)

// maxConnectResponse bounds an HTTP proxy's answer to CONNECT.
const maxConnectResponse = 64 << 10

// proxySpec is a parsed Config.Proxy.
type proxySpec struct {
	kind string
	addr string      // host:port of the proxy
	auth *proxy.Auth // SOCKS5 user/password, nil for none
}

// String names the proxy for errors, without any password.
func (p *proxySpec) String() string { return p.kind + "://" + p.addr }

// parseProxy parses Config.Proxy; "" gives nil.
func parseProxy(raw string) (*proxySpec, error) {
	if raw == "" {
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the whole URL, password included.
		return nil, fmt.Errorf("proxy: unparseable URL (userinfo not shown): %w", redactedURLError(err))
	}
	p := &proxySpec{kind: strings.ToLower(u.Scheme), addr: u.Host}
	if p.kind != proxyHTTP && p.kind != proxySOCKS5 {
		return nil, fmt.Errorf("proxy: scheme %q not supported (want http or socks5)", u.Scheme)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("proxy %s: unexpected path, query or fragment", p)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil || host == "" {
		return nil, fmt.Errorf("proxy %s: want host:port", p)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("proxy %s: bad port %q", p, port)
	}
	if u.User != nil {
		if p.kind == proxyHTTP {
			// Proxy-Authorization would end up in WARC request records.
			return nil, fmt.Errorf("proxy %s: user info is only supported for socks5", p)
		}
		pw, _ := u.User.Password()
		p.auth = &proxy.Auth{User: u.User.Username(), Password: pw}
		if p.auth.User == "" || len(p.auth.User) > 255 || len(pw) > 255 {
			return nil, fmt.Errorf("proxy %s: socks5 user name must be 1-255 bytes and password at most 255", p)
		}
	}
	return p, nil
}

// redactedURLError drops the URL (which may hold a password) from a
// url.Parse failure, keeping the reason.
func redactedURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// dialViaProxy returns a connection on which bytes reach the target at a:
// the proxy connection itself for http URLs through an HTTP proxy, else a
// tunnel (CONNECT or SOCKS5) to the guard-approved address a, never to the
// name, so the proxy's own resolution cannot be rebound elsewhere.
func (f *Fetcher) dialViaProxy(ctx context.Context, t target, a netip.Addr, deadline time.Time) (net.Conn, error) {
	dest := net.JoinHostPort(a.String(), t.port)
	cctx, cancel := context.WithDeadline(ctx, earliest(time.Now().Add(f.cfg.ConnectTimeout), deadline))
	defer cancel()
	if f.proxy.kind == proxySOCKS5 {
		return f.dialSOCKS(cctx, dest)
	}
	nc, err := f.proxyDialer().DialContext(cctx, "tcp", f.proxy.addr)
	if err != nil {
		return nil, proxyError(f.proxy, dest, err)
	}
	if t.scheme == "http" {
		return nc, nil
	}
	if err := f.connectTunnel(cctx, nc, dest); err != nil {
		_ = nc.Close()
		return nil, err
	}
	return nc, nil
}

// proxyDialer dials the proxy itself. It has no guard: operators run
// proxies on their own (often private) addresses.
func (f *Fetcher) proxyDialer() *net.Dialer {
	return &net.Dialer{KeepAlive: -1}
}

func (f *Fetcher) dialSOCKS(ctx context.Context, dest string) (net.Conn, error) {
	d, err := proxy.SOCKS5("tcp", f.proxy.addr, f.proxy.auth, f.proxyDialer())
	if err != nil {
		return nil, proxyError(f.proxy, dest, err)
	}
	cd, ok := d.(proxy.ContextDialer)
	if !ok {
		return nil, proxyError(f.proxy, dest, fmt.Errorf("SOCKS5 dialer %T cannot take a context", d))
	}
	nc, err := cd.DialContext(ctx, "tcp", dest)
	if err != nil {
		return nil, proxyError(f.proxy, dest, err)
	}
	return nc, nil
}

// connectTunnel asks an HTTP proxy to open a tunnel to dest.
func (f *Fetcher) connectTunnel(ctx context.Context, nc net.Conn, dest string) error {
	if d, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req := fmt.Sprintf("CONNECT %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\n\r\n", dest, dest, f.cfg.UserAgent)
	if _, err := io.WriteString(nc, req); err != nil {
		return proxyError(f.proxy, dest, err)
	}
	br := bufio.NewReader(io.LimitReader(nc, maxConnectResponse))
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return proxyError(f.proxy, dest, fmt.Errorf("reading CONNECT response: %w", err))
	}
	if resp.StatusCode != http.StatusOK {
		return &Error{Status: StatusConnectFailed, Retriable: true,
			Err: fmt.Errorf("proxy %s refused CONNECT %s: %s", f.proxy, dest, resp.Status)}
	}
	if br.Buffered() > 0 {
		return &Error{Status: StatusConnectFailed, Retriable: true,
			Err: fmt.Errorf("proxy %s sent %d bytes after its CONNECT %s response", f.proxy, br.Buffered(), dest)}
	}
	_ = nc.SetDeadline(time.Time{})
	return nil
}

// proxyError maps a failure to reach the target through the proxy: -4 on
// timeout, else -2 (the target was never reached).
func proxyError(p *proxySpec, dest string, err error) error {
	status := StatusConnectFailed
	if isTimeout(err) {
		status = StatusTimeout
	}
	return &Error{Status: status, Retriable: true, Err: fmt.Errorf("connect %s via proxy %s: %w", dest, p, err)}
}
