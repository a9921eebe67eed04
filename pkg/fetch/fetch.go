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
//
// With Config.HTTP2 it offers HTTP/2 by ALPN on https and speaks it when
// the server agrees (h2.go), recording the exchange in HTTP/1.1 text form
// as Heritrix's FetchHTTP2 does; Response.Protocols names what was spoken
// (WARC-Protocol).
//
// Beyond plain GETs it sends HEAD and POST (form logins), takes and keeps
// cookies through a caller's CookieJar, answers one HTTP Basic or Digest
// challenge per fetch from Config.Credentials, and can go through an HTTP
// or SOCKS5 proxy. The guard judges the target's resolved addresses even
// then, and tunnels are opened to the approved address, never the name.
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
	"sync"
	"time"

	"github.com/trawler-crawl/trawler/pkg/spool"
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
	// AllowAddresses are ranges allowed although the guard would refuse
	// them: one test site on loopback, while the rest of loopback, the
	// private ranges and the metadata address stay refused.
	AllowAddresses []netip.Prefix `yaml:"allowAddresses"`
	// KeepAlive sends HTTP/1.1 requests and reuses connections per host.
	// The default is HTTP/1.0 with "Connection: close", as Heritrix does.
	KeepAlive bool `yaml:"keepAlive"`
	// IdleTimeout is how long an idle keep-alive connection is kept for
	// reuse. Default 30s. Only used with KeepAlive.
	IdleTimeout time.Duration `yaml:"idleTimeout"`
	// MaxIdlePerHost is how many idle keep-alive connections one host may
	// keep. A host fetched by n parallel queues needs n, so the worker sets
	// it from the profile's frontier.parallelQueues. Default 4.
	MaxIdlePerHost int `yaml:"maxIdlePerHost"`
	// Credentials answer HTTP Basic and Digest challenges (401) by domain
	// and realm; see Credential.
	Credentials []Credential `yaml:"credentials"`
	// Proxy sends every fetch through a proxy: "http://host:port" (absolute
	// request target for http URLs, CONNECT tunnel for https) or
	// "socks5://[user:pass@]host:port". "" means direct connections. The
	// proxy's own address is not subject to the address guard.
	Proxy string `yaml:"proxy"`
	// HTTP2 offers HTTP/2 by ALPN on https connections and speaks it when
	// the server agrees (h2.go): one request per connection, recorded in
	// HTTP/1.1 text form as Heritrix's FetchHTTP2 does. Off, every fetch
	// is HTTP/1.x. The flag's default is on.
	HTTP2 bool `yaml:"http2"`
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
	// DefaultMaxIdlePerHost is MaxIdlePerHost when unset.
	DefaultMaxIdlePerHost = 4
	// maxIdleTotal bounds the keep-alive pool's descriptors across hosts.
	maxIdleTotal = 256
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
	fs.StringVar(&c.Proxy, prefix+"proxy", "", "fetch through this proxy: http://host:port or socks5://[user:pass@]host:port")
	fs.BoolVar(&c.HTTP2, prefix+"http2", true, "offer HTTP/2 by ALPN on https and use it when the server agrees")
}

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	if _, err := buildRequest(reqSpec{method: http.MethodGet, requestTarget: "/", userAgent: c.withDefaults().UserAgent}); err != nil {
		return fmt.Errorf("fetch config: %w", err)
	}
	if _, err := parseProxy(c.Proxy); err != nil {
		return fmt.Errorf("fetch config: %w", err)
	}
	for i, cr := range c.Credentials {
		if err := cr.validate(); err != nil {
			return fmt.Errorf("fetch config: credentials[%d]: %w", i, err)
		}
	}
	if c.ConnectTimeout < 0 || c.ReadTimeout < 0 || c.TotalTimeout < 0 || c.IdleTimeout < 0 {
		return errors.New("fetch config: timeouts must not be negative")
	}
	if c.MaxLengthBytes < 0 || c.SpoolThreshold < 0 || c.MaxIdlePerHost < 0 {
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
	if c.MaxIdlePerHost <= 0 {
		c.MaxIdlePerHost = DefaultMaxIdlePerHost
	}
	return c
}

// Resolver looks up a host's addresses; *net.Resolver satisfies it, and the
// worker passes its caching resolver (tests pass a fixed map).
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Request is one HTTP request to perform.
type Request struct {
	URL string
	// Method is "GET" (the default when empty), "HEAD" or "POST".
	Method string
	// Header holds extra request headers. Host, Connection, User-Agent,
	// Content-Length, Accept-Encoding and other hop-by-hop headers are
	// owned by the fetcher and ignored here; so is Cookie when Jar is set.
	// A Referer here wins over Referer below.
	Header http.Header
	// Referer is sent as the Referer header when not empty (see
	// RefererFor for what Heritrix sends).
	Referer string
	// AcceptCompression sends "Accept-Encoding: gzip,deflate", as
	// Heritrix's acceptCompression does. The response is recorded as
	// served, content-encoded, and PayloadDigest is over that entity (the
	// WARC payload); only the caller decodes it, for extraction.
	AcceptCompression bool
	// Body is sent after the headers with a Content-Length, e.g. the form
	// fields of a login POST. It is part of RequestBytes.
	Body []byte
	// Jar supplies the Cookie header and receives Set-Cookie values from
	// the response (whatever its status). nil sends and keeps no cookies.
	Jar CookieJar
	// Limits, when set, replace the Config's length and time limits for
	// this fetch: a sheet may give a site its own maxLengthBytes or
	// timeouts, as Heritrix's sheets override FetchHTTP per URI.
	Limits *Limits
}

// Limits are the per-fetch limits. MaxLengthBytes 0 means no limit, as
// in Config; zero timeouts take the Config's.
type Limits struct {
	MaxLengthBytes int64
	ReadTimeout    time.Duration
	TotalTimeout   time.Duration
}

// limits returns the limits that apply to req.
func (f *Fetcher) limits(req Request) Limits {
	l := Limits{MaxLengthBytes: f.cfg.MaxLengthBytes, ReadTimeout: f.cfg.ReadTimeout, TotalTimeout: f.cfg.TotalTimeout}
	if o := req.Limits; o != nil {
		l.MaxLengthBytes = max(o.MaxLengthBytes, 0)
		if o.ReadTimeout > 0 {
			l.ReadTimeout = o.ReadTimeout
		}
		if o.TotalTimeout > 0 {
			l.TotalTimeout = o.TotalTimeout
		}
	}
	return l
}

// Fetcher performs fetches. It is safe for concurrent use.
type Fetcher struct {
	cfg      Config
	resolver Resolver
	guard    *guard
	pool     *pool
	readers  sync.Pool   // *readBuffers, reused across exchanges
	spool    *spool.Pool // responses' memory, reused once they are closed
	tls      *tls.Config
	proxy    *proxySpec // nil for direct connections
	proxyErr error      // a Proxy setting New could not parse
	// dialHook, when set (tests only), sees every address a socket is
	// about to connect to, after the guard; an error aborts the dial.
	dialHook func(network, address string) error
}

// New returns a Fetcher. A nil resolver means net.DefaultResolver. Call
// Config.Validate first to catch bad settings at startup; a Proxy setting
// that does not parse makes every Fetch fail with a plain error.
func New(cfg Config, r Resolver) *Fetcher {
	cfg = cfg.withDefaults()
	if r == nil {
		r = net.DefaultResolver
	}
	f := &Fetcher{
		cfg:      cfg,
		resolver: r,
		guard:    newGuard(cfg.AllowPrivate, cfg.AllowAddresses),
		pool:     newPool(cfg.MaxIdlePerHost, maxIdleTotal, cfg.IdleTimeout),
		spool:    spool.NewPool(),
		tls: &tls.Config{
			// Archiving is not trusting: record whatever the site serves.
			InsecureSkipVerify: true, //nolint:gosec // deliberate, see above
			MinVersion:         tls.VersionTLS10,
			NextProtos:         []string{"http/1.1"},
			Renegotiation:      tls.RenegotiateOnceAsClient,
		},
	}
	if cfg.HTTP2 {
		f.tls.NextProtos = []string{alpnH2, "http/1.1"}
	}
	f.proxy, f.proxyErr = parseProxy(cfg.Proxy)
	return f
}

// Close drops idle keep-alive connections.
func (f *Fetcher) Close() error {
	f.pool.closeAll()
	return nil
}

// fetchPlan is a validated Request with the fetch's clock.
type fetchPlan struct {
	req      Request
	target   target
	method   string
	deadline time.Time
	limits   Limits
}

// Fetch performs req. On success the caller owns the Response and must
// Close it. Failures are *Error with a Heritrix status, except that
// cancellation of ctx returns an error wrapping ctx's error (the URI was not
// finished and should go back to the frontier uncharged), and a local spool
// failure or unusable Proxy setting returns a plain error.
//
// A 401 whose challenge matches one of Config.Credentials is answered once:
// the 401 is discarded and the second exchange is returned.
func (f *Fetcher) Fetch(ctx context.Context, req Request) (*Response, error) {
	start := time.Now()
	if f.proxyErr != nil {
		return nil, fmt.Errorf("fetch %s: %w", req.URL, f.proxyErr)
	}
	t, err := parseTarget(req.URL)
	if err != nil {
		return nil, &Error{Status: StatusIllegalURI, Err: err}
	}
	method, err := requestMethod(req)
	if err != nil {
		return nil, &Error{Status: StatusIllegalURI, Err: fmt.Errorf("request %s: %w", req.URL, err)}
	}
	lim := f.limits(req)
	p := fetchPlan{req: req, target: t, method: method, deadline: start.Add(lim.TotalTimeout), limits: lim}
	if d, ok := ctx.Deadline(); ok && d.Before(p.deadline) {
		p.deadline = d
	}
	// Resolution and dialing stop at the whole-fetch deadline too; ctx
	// itself is kept to tell cancellation apart from a timeout.
	dctx, cancel := context.WithDeadline(ctx, p.deadline)
	defer cancel()
	resp, err := f.roundTrip(ctx, dctx, p, "", start)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || req.Header.Get("Authorization") != "" {
		return resp, err
	}
	authz, ok := f.answerChallenge(resp.Header.Values("Www-Authenticate"), p)
	if !ok {
		return resp, nil
	}
	if err := resp.Close(); err != nil {
		return nil, fmt.Errorf("fetch %s: release 401 response: %w", req.URL, err)
	}
	return f.roundTrip(ctx, dctx, p, authz, time.Now())
}

// roundTrip sends one request (with authz as Authorization when set) and
// records the response, redialing once if a pooled connection was stale.
func (f *Fetcher) roundTrip(ctx, dctx context.Context, p fetchPlan, authz string, start time.Time) (*Response, error) {
	spec := f.requestSpec(ctx, p, authz)
	reqBytes, err := buildRequest(spec)
	if err != nil {
		return nil, &Error{Status: StatusIllegalURI, Err: fmt.Errorf("request %s: %w", p.req.URL, err)}
	}
	// A POST is never sent on a pooled connection: if that connection had
	// gone stale the server might have acted on it, and it must not be
	// sent twice.
	pooled := f.cfg.KeepAlive && p.method != http.MethodPost
	for attempt := 0; ; attempt++ {
		c, err := f.connect(dctx, p.target, p.deadline, pooled)
		if err != nil {
			return nil, f.finalErr(ctx, p.req.URL, err)
		}
		if negotiatedH2(c.Conn) {
			resp, err := f.roundTripH2(ctx, c, p, spec, start)
			return resp, f.finalErr(ctx, p.req.URL, err)
		}
		x := &exchange{f: f, conn: c, target: p.target, url: p.req.URL, method: p.method, jar: p.req.Jar,
			reqBytes: reqBytes, start: start, deadline: p.deadline, limits: p.limits}
		resp, err := x.run(ctx)
		if err != nil && c.reused && attempt == 0 && x.stale(err) {
			continue // the server dropped an idle connection; dial afresh
		}
		if err != nil {
			return nil, f.finalErr(ctx, p.req.URL, err)
		}
		resp.Protocols = protocols(c.Conn, f.h1Protocol())
		return resp, nil
	}
}

// requestSpec is what goes into the request, cookies taken from the jar.
func (f *Fetcher) requestSpec(ctx context.Context, p fetchPlan, authz string) reqSpec {
	return reqSpec{
		method: p.method, requestTarget: f.requestTarget(p.target), hostHeader: p.target.hostHeader,
		userAgent: f.cfg.UserAgent, keepAlive: f.cfg.KeepAlive, header: p.req.Header,
		dropCookie: p.req.Jar != nil, cookie: jarCookies(ctx, p.req.Jar, p.target.u),
		authorization: authz, referer: p.req.Referer, compression: p.req.AcceptCompression, body: p.req.Body,
	}
}

// finalErr turns cancellation into a plain wrapped context error.
func (f *Fetcher) finalErr(ctx context.Context, rawURL string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("fetch %s: %w", rawURL, context.Cause(ctx))
	}
	return err
}
