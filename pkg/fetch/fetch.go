// Package fetch performs archival HTTP(S) fetches: it writes the request
// itself on a raw connection and records the request and response bytes
// exactly as they crossed the wire, so they can go into WARC request and
// response records unchanged (ARCHITECTURE.md section 6).
//
// Unlike net/http's client it never follows redirects, never decompresses,
// never retries on its own (except once on a stale keep-alive connection),
// accepts any TLS certificate (archiving is not trusting), and refuses
// loopback, private, link-local and metadata addresses unless told
// otherwise. Failures are *Error values carrying Heritrix status codes.
package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// Config holds the fetcher's settings. Zero durations and sizes take the
// defaults documented on each field.
type Config struct {
	// UserAgent is sent on every request; it should carry the operator's
	// contact URL. Default "Mozilla/5.0 (compatible; trawler)".
	UserAgent string `yaml:"userAgent"`
	// ConnectTimeout bounds the TCP connect and TLS handshake. Default 20s.
	ConnectTimeout time.Duration `yaml:"connectTimeout"`
	// ReadTimeout bounds each wait for bytes from the server (and each
	// write of the request). Default 20s.
	ReadTimeout time.Duration `yaml:"readTimeout"`
	// TotalTimeout bounds the whole fetch from the start of Fetch. When it
	// expires after the response headers arrived, what was read is kept and
	// annotated timeTrunc; before that, the fetch fails with -4. Default 20m.
	TotalTimeout time.Duration `yaml:"totalTimeout"`
	// MaxLengthBytes caps the recorded response (headers included); reading
	// stops there and the response is annotated lenTrunc. 0 means no limit.
	MaxLengthBytes int64 `yaml:"maxLengthBytes"`
	// SpoolThreshold is how many bytes of a response (and separately of its
	// payload) are kept in memory before spooling to SpoolDir. Default 1 MiB.
	SpoolThreshold int64 `yaml:"spoolThreshold"`
	// SpoolDir receives spool files; "" means os.TempDir().
	SpoolDir string `yaml:"spoolDir"`
	// AllowPrivate disables the address guard, for tests and the demo.
	AllowPrivate bool `yaml:"allowPrivate"`
	// KeepAlive sends HTTP/1.1 requests and reuses connections per host.
	// The default is HTTP/1.0 with "Connection: close", as Heritrix does.
	KeepAlive bool `yaml:"keepAlive"`
	// IdleTimeout is how long an idle keep-alive connection is kept for
	// reuse. Default 30s. Only used with KeepAlive.
	IdleTimeout time.Duration `yaml:"idleTimeout"`
}

// Defaults for Config fields left zero.
const (
	DefaultUserAgent      = "Mozilla/5.0 (compatible; trawler)"
	DefaultConnectTimeout = 20 * time.Second
	DefaultReadTimeout    = 20 * time.Second
	DefaultTotalTimeout   = 20 * time.Minute
	DefaultSpoolThreshold = 1 << 20
	DefaultIdleTimeout    = 30 * time.Second
	// maxHeaderBytes bounds response headers so a hostile server cannot make
	// the parser buffer without limit when MaxLengthBytes is unset.
	maxHeaderBytes = 1 << 20
	// maxIdlePerHost and maxIdleTotal bound the keep-alive pool.
	maxIdlePerHost = 4
	maxIdleTotal   = 256
)

// RegisterFlags registers the settings on fs with names prefixed by prefix
// (e.g. "fetch."), with the defaults as flag defaults.
func (c *Config) RegisterFlags(prefix string, fs *flag.FlagSet) {
	fs.StringVar(&c.UserAgent, prefix+"user-agent", DefaultUserAgent, "User-Agent sent on every request; include the operator contact URL")
	fs.DurationVar(&c.ConnectTimeout, prefix+"connect-timeout", DefaultConnectTimeout, "TCP connect and TLS handshake timeout")
	fs.DurationVar(&c.ReadTimeout, prefix+"read-timeout", DefaultReadTimeout, "timeout for each read from the server")
	fs.DurationVar(&c.TotalTimeout, prefix+"total-timeout", DefaultTotalTimeout, "timeout for a whole fetch; a body cut by it is kept and annotated timeTrunc")
	fs.Int64Var(&c.MaxLengthBytes, prefix+"max-length-bytes", 0, "truncate responses at this many bytes (lenTrunc); 0 means no limit")
	fs.Int64Var(&c.SpoolThreshold, prefix+"spool-threshold", DefaultSpoolThreshold, "bytes of a response kept in memory before spooling to disk")
	fs.StringVar(&c.SpoolDir, prefix+"spool-dir", "", "directory for spool files (default: system temp dir)")
	fs.BoolVar(&c.AllowPrivate, prefix+"allow-private", false, "allow fetching loopback, private and link-local addresses (tests, demo)")
	fs.BoolVar(&c.KeepAlive, prefix+"keep-alive", false, "use HTTP/1.1 keep-alive instead of HTTP/1.0 with Connection: close")
	fs.DurationVar(&c.IdleTimeout, prefix+"idle-timeout", DefaultIdleTimeout, "how long idle keep-alive connections are kept")
}

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	if _, err := buildRequest(target{requestURI: "/"}, c.withDefaults().UserAgent, false, nil); err != nil {
		return fmt.Errorf("fetch config: %w", err)
	}
	if c.ConnectTimeout < 0 || c.ReadTimeout < 0 || c.TotalTimeout < 0 || c.IdleTimeout < 0 {
		return errors.New("fetch config: timeouts must not be negative")
	}
	if c.MaxLengthBytes < 0 || c.SpoolThreshold < 0 {
		return errors.New("fetch config: sizes must not be negative")
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.TotalTimeout <= 0 {
		c.TotalTimeout = DefaultTotalTimeout
	}
	if c.SpoolThreshold <= 0 {
		c.SpoolThreshold = DefaultSpoolThreshold
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	return c
}

// Resolver looks up a host's addresses; *net.Resolver satisfies it, and the
// worker passes its caching resolver (tests pass a fixed map).
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Request is one GET to perform.
type Request struct {
	URL string
	// Header holds extra request headers. Host, Connection, User-Agent and
	// other hop-by-hop headers are owned by the fetcher and ignored here.
	Header http.Header
}

// Fetcher performs fetches. It is safe for concurrent use.
type Fetcher struct {
	cfg      Config
	resolver Resolver
	guard    *guard
	pool     *pool
	tls      *tls.Config
}

// New returns a Fetcher. A nil resolver means net.DefaultResolver. Call
// Config.Validate first to catch bad settings at startup.
func New(cfg Config, r Resolver) *Fetcher {
	cfg = cfg.withDefaults()
	if r == nil {
		r = net.DefaultResolver
	}
	return &Fetcher{
		cfg:      cfg,
		resolver: r,
		guard:    newGuard(cfg.AllowPrivate),
		pool:     newPool(maxIdlePerHost, maxIdleTotal, cfg.IdleTimeout),
		tls: &tls.Config{
			// Archiving is not trusting: record whatever the site serves.
			InsecureSkipVerify: true, //nolint:gosec // deliberate, see above
			MinVersion:         tls.VersionTLS10,
			NextProtos:         []string{"http/1.1"},
			Renegotiation:      tls.RenegotiateOnceAsClient,
		},
	}
}

// Close drops idle keep-alive connections.
func (f *Fetcher) Close() error {
	f.pool.closeAll()
	return nil
}

// Fetch performs req. On success the caller owns the Response and must
// Close it. Failures are *Error with a Heritrix status, except that
// cancellation of ctx returns an error wrapping ctx's error (the URI was not
// finished and should go back to the frontier uncharged), and a local spool
// failure returns a plain error.
func (f *Fetcher) Fetch(ctx context.Context, req Request) (*Response, error) {
	start := time.Now()
	t, err := parseTarget(req.URL)
	if err != nil {
		return nil, &Error{Status: StatusIllegalURI, Err: err}
	}
	reqBytes, err := buildRequest(t, f.cfg.UserAgent, f.cfg.KeepAlive, req.Header)
	if err != nil {
		return nil, &Error{Status: StatusIllegalURI, Err: err}
	}
	deadline := start.Add(f.cfg.TotalTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	// Resolution and dialing stop at the whole-fetch deadline too; ctx
	// itself is kept to tell cancellation apart from a timeout.
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	for attempt := 0; ; attempt++ {
		c, err := f.connect(dctx, t, deadline)
		if err != nil {
			return nil, f.finalErr(ctx, req.URL, err)
		}
		x := &exchange{f: f, conn: c, target: t, url: req.URL, reqBytes: reqBytes, start: start, deadline: deadline}
		resp, err := x.run(ctx)
		if err != nil && c.reused && attempt == 0 && x.stale(err) {
			continue // the server dropped an idle connection; dial afresh
		}
		if err != nil {
			return nil, f.finalErr(ctx, req.URL, err)
		}
		return resp, nil
	}
}

// finalErr turns cancellation into a plain wrapped context error.
func (f *Fetcher) finalErr(ctx context.Context, rawURL string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("fetch %s: %w", rawURL, context.Cause(ctx))
	}
	return err
}

// conn is a connection with what the response needs to know about it.
type conn struct {
	net.Conn
	ip     net.IP
	reused bool
}

// connect returns a pooled connection or dials a new one.
func (f *Fetcher) connect(ctx context.Context, t target, deadline time.Time) (*conn, error) {
	if f.cfg.KeepAlive {
		if c, ip, ok := f.pool.get(t.key()); ok {
			return &conn{Conn: c, ip: ip, reused: true}, nil
		}
	}
	addrs, err := f.resolve(ctx, t)
	if err != nil {
		return nil, err
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
	var found []netip.Addr
	if t.ip.IsValid() {
		found = []netip.Addr{t.ip}
	} else {
		ipas, err := f.resolver.LookupIPAddr(ctx, t.host)
		if err != nil {
			var de *net.DNSError
			retriable := errors.As(err, &de) && (de.IsTimeout || de.IsTemporary)
			return nil, &Error{Status: StatusDomainLookupFailed, Retriable: retriable,
				Err: fmt.Errorf("resolve %s: %w", t.host, err)}
		}
		for _, ipa := range ipas {
			if a, ok := netip.AddrFromSlice(ipa.IP); ok {
				// net.IP holds IPv4 in 16 bytes; judge and dial it as IPv4.
				found = append(found, a.Unmap().WithZone(ipa.Zone))
			}
		}
		if len(found) == 0 {
			return nil, failure(StatusDomainLookupFailed, false, "resolve %s: no addresses", t.host)
		}
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

// dial connects to one address, with TLS for https.
func (f *Fetcher) dial(ctx context.Context, t target, a netip.Addr, deadline time.Time) (*conn, error) {
	d := net.Dialer{
		Timeout:   f.cfg.ConnectTimeout,
		Deadline:  deadline,
		KeepAlive: -1, // fetches are short; no TCP keep-alive probes
		Control:   f.guard.control,
	}
	addr := net.JoinHostPort(a.String(), t.port)
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, dialError(addr, err)
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
