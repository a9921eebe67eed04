package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// conn is a connection with what the response needs to know about it.
type conn struct {
	net.Conn
	ip     net.IP
	reused bool
}

// connect returns a pooled connection (when pooled) or dials a new one.
func (f *Fetcher) connect(ctx context.Context, t target, deadline time.Time, pooled bool) (*conn, error) {
	if pooled {
		if c, ip, ok := f.pool.get(t.key()); ok {
			return &conn{Conn: c, ip: ip, reused: true}, nil
		}
	}
	addrs, err := f.resolve(ctx, t)
	if err != nil {
		return nil, err
	}
	if f.proxy != nil && f.proxy.kind == proxyHTTP && t.scheme == "http" {
		// The proxy connects by name; trying each address would just dial
		// the same proxy again.
		addrs = addrs[:1]
	}
	var lastErr error
	for _, a := range addrs {
		c, err := f.dial(ctx, t, a, deadline)
		if err == nil {
			return c, nil
		}
		lastErr = err
		var fe *Error
		if ctx.Err() != nil || (errors.As(err, &fe) && fe.Status == StatusTimeout && !time.Now().Before(deadline)) {
			break
		}
	}
	return nil, lastErr
}

// resolve returns the addresses to try, guard-approved, in resolver order.
func (f *Fetcher) resolve(ctx context.Context, t target) ([]netip.Addr, error) {
	found, err := f.lookup(ctx, t)
	if err != nil {
		return nil, err
	}
	var allowed []netip.Addr
	var refusals []error
	for _, a := range found {
		if err := f.guard.check(a); err != nil {
			refusals = append(refusals, err)
			continue
		}
		allowed = append(allowed, a)
	}
	if len(allowed) == 0 {
		return nil, &Error{Status: StatusConnectFailed,
			Err: fmt.Errorf("host %s: %w", t.host, errors.Join(refusals...))}
	}
	return allowed, nil
}

// lookup returns the host's addresses (the literal itself for an IP URL).
func (f *Fetcher) lookup(ctx context.Context, t target) ([]netip.Addr, error) {
	if t.ip.IsValid() {
		return []netip.Addr{t.ip}, nil
	}
	ipas, err := f.resolver.LookupIPAddr(ctx, t.host)
	if err != nil {
		var de *net.DNSError
		retriable := errors.As(err, &de) && (de.IsTimeout || de.IsTemporary)
		return nil, &Error{Status: StatusDomainLookupFailed, Retriable: retriable,
			Err: fmt.Errorf("resolve %s: %w", t.host, err)}
	}
	var found []netip.Addr
	for _, ipa := range ipas {
		if a, ok := netip.AddrFromSlice(ipa.IP); ok {
			// net.IP holds IPv4 in 16 bytes; judge and dial it as IPv4.
			found = append(found, a.Unmap().WithZone(ipa.Zone))
		}
	}
	if len(found) == 0 {
		return nil, failure(StatusDomainLookupFailed, false, "resolve %s: no addresses", t.host)
	}
	return found, nil
}

// dial connects to one guard-approved address, directly or through the
// proxy, with TLS for https.
func (f *Fetcher) dial(ctx context.Context, t target, a netip.Addr, deadline time.Time) (*conn, error) {
	var nc net.Conn
	var err error
	if f.proxy != nil {
		nc, err = f.dialViaProxy(ctx, t, a, deadline)
	} else {
		nc, err = f.dialDirect(ctx, t, a, deadline)
	}
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, ip: net.IP(a.AsSlice())}
	if t.scheme != "https" {
		return c, nil
	}
	cfg := f.tls.Clone()
	if !t.ip.IsValid() {
		cfg.ServerName = t.host
	}
	tc := tls.Client(nc, cfg)
	_ = nc.SetDeadline(earliest(time.Now().Add(f.cfg.ConnectTimeout), deadline))
	addr := net.JoinHostPort(a.String(), t.port)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = nc.Close()
		if isTimeout(err) {
			return nil, &Error{Status: StatusTimeout, Retriable: true, Err: fmt.Errorf("TLS handshake with %s: %w", addr, err)}
		}
		return nil, &Error{Status: StatusConnectFailed, Retriable: true, Err: fmt.Errorf("TLS handshake with %s: %w", addr, err)}
	}
	_ = nc.SetDeadline(time.Time{})
	c.Conn = tc
	return c, nil
}

// dialDirect opens a TCP connection to a with the guard in the dialer's
// Control hook, so the exact address connected to is checked.
func (f *Fetcher) dialDirect(ctx context.Context, t target, a netip.Addr, deadline time.Time) (net.Conn, error) {
	d := net.Dialer{
		Timeout:   f.cfg.ConnectTimeout,
		Deadline:  deadline,
		KeepAlive: -1, // fetches are short; no TCP keep-alive probes
		Control:   f.control,
	}
	addr := net.JoinHostPort(a.String(), t.port)
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, dialError(addr, err)
	}
	return nc, nil
}

// control runs the guard, then the test hook, on the address a socket is
// about to connect to.
func (f *Fetcher) control(network, address string, rc syscall.RawConn) error {
	if err := f.guard.control(network, address, rc); err != nil {
		return err
	}
	if f.dialHook != nil {
		return f.dialHook(network, address)
	}
	return nil
}

func dialError(addr string, err error) error {
	switch {
	case errors.Is(err, ErrAddressRefused):
		return &Error{Status: StatusConnectFailed, Err: fmt.Errorf("connect %s: %w", addr, err)}
	case isTimeout(err):
		return &Error{Status: StatusTimeout, Retriable: true, Err: fmt.Errorf("connect %s: %w", addr, err)}
	default:
		return &Error{Status: StatusConnectFailed, Retriable: true, Err: fmt.Errorf("connect %s: %w", addr, err)}
	}
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
