package dns

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/trawler-crawl/trawler/internal/lru"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults for Options.
const (
	DefaultTimeout    = 5 * time.Second
	DefaultAttempts   = 2
	DefaultMaxEntries = 100000
)

// Lookuper is the source of addresses in Static mode; *net.Resolver and the
// tests' fixed maps satisfy it.
type Lookuper interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Options configure a Resolver. The zero value resolves through the name
// servers of /etc/resolv.conf with the defaults below.
type Options struct {
	// Servers are the name servers to ask, "ip:port" (a bare IP means port
	// 53), in order. Empty: the nameserver lines of ResolvConf.
	Servers []string
	// ResolvConf is read when Servers is empty; default DefaultResolvConf.
	ResolvConf string
	// Static, when set, is used instead of DNS queries (tests, demo). Its
	// answers get TTL = MinValidity and Server "".
	Static Lookuper
	// MinValidity is Heritrix's ipValidityDurationSeconds: answers are
	// cached for max(TTL, MinValidity).
	MinValidity time.Duration
	// Timeout bounds each query (per server, per transport); default 5s.
	Timeout time.Duration
	// Attempts is how many rounds over Servers a query gets; default 2.
	Attempts int
	// MaxEntries bounds the cache (least recently used evicted first);
	// default 100000.
	MaxEntries int
	// Now is the clock for fetch times and cache expiry; default time.Now.
	Now func() time.Time
	// Logger receives warnings (bad resolv.conf lines); nil discards.
	Logger *slog.Logger
	// Registerer receives the metrics; nil leaves them unregistered.
	Registerer prometheus.Registerer
}

// Answer is the result of one lookup. Answers are shared between callers
// and the cache: treat them as read-only.
type Answer struct {
	// Host is the looked-up name, lower-cased, without a final dot.
	Host string
	// Addrs are the usable addresses, A records first, then AAAA, each in
	// the order the server gave (0.0.0.0 and :: are left out).
	Addrs []netip.Addr
	// TTL is the lowest TTL of the records used (aliases included).
	TTL time.Duration
	// Fetched is when the lookup started (the dns: capture's timestamp).
	Fetched time.Time
	// Expires is Fetched + max(TTL, MinValidity); zero for a literal IP,
	// which never expires.
	Expires time.Time
	// Server is the IP of the name server that answered ("" for Static
	// and literal IPs): the dns: record's WARC-IP-Address.
	Server string
	// Record is the text/dns block for the WARC dns record (format in the
	// package comment); nil for a literal IP.
	Record []byte
}

// Resolver resolves and caches host names. It is safe for concurrent use.
type Resolver struct {
	servers     []netip.AddrPort
	static      Lookuper
	minValidity time.Duration
	timeout     time.Duration
	attempts    int
	now         func() time.Time
	log         *slog.Logger
	metrics     *metrics

	mu      sync.Mutex
	cache   *lru.Cache[string, *lookupResult]
	flights map[string]*flight
}

// lookupResult is one lookup's outcome together with whether a caller of
// Resolve has taken it to record (its dns: capture). It is shared by the
// cache and the lookup's flight; recorded is guarded by Resolver.mu.
//
// The flag, rather than "whoever performed the lookup records it", is what
// keeps a lookup made through LookupIPAddr (the scope's GeoIP rule
// resolving a host before any URI of it is fetched, the fetcher's dial)
// from using up the answer's one dns: capture: the first Resolve after it
// records it, as Heritrix's FetchDNS records the lookup its prerequisite
// makes however often the host was resolved for scoping.
type lookupResult struct {
	ans      *Answer
	err      error
	recorded bool
}

// take reports whether the caller is the first to take res to record.
// r.mu must be held.
func (res *lookupResult) take(record bool) bool {
	if !record || res.recorded {
		return false
	}
	res.recorded = true
	return true
}

// Unrecorded hands a cached lookup of host back, after the caller that
// took it to record (Resolve's fresh) could not write its dns: capture:
// the next Resolve gets it as fresh again, so the host does not go
// without a dns: record for the whole cache period.
func (r *Resolver) Unrecorded(host string) {
	key := strings.ToLower(strings.TrimSuffix(host, "."))
	r.mu.Lock()
	defer r.mu.Unlock()
	if cached, ok := r.cache.Get(key, r.now()); ok {
		cached.recorded = false
	}
}

// flight is a lookup in progress, shared by every caller asking for the
// same host meanwhile.
type flight struct {
	done    chan struct{}
	waiters int // callers waiting besides the one looking up (for tests)
	res     *lookupResult
	// abandoned: the caller performing the lookup had its context end, so
	// the outcome says nothing about the host and waiters try again.
	abandoned bool
}

// New validates o and returns a Resolver. Unless Static is set, it reads the
// name servers from ResolvConf when Servers is empty, logging lines it
// cannot use, and fails when no server is left.
func New(o Options) (*Resolver, error) {
	if o.MinValidity < 0 || o.Timeout < 0 || o.Attempts < 0 || o.MaxEntries < 0 {
		return nil, fmt.Errorf("dns options: MinValidity, Timeout, Attempts and MaxEntries must not be negative")
	}
	r := &Resolver{
		static:      o.Static,
		minValidity: o.MinValidity,
		timeout:     cmp.Or(o.Timeout, DefaultTimeout),
		attempts:    cmp.Or(o.Attempts, DefaultAttempts),
		now:         o.Now,
		log:         o.Logger,
		cache:       lru.New[string, *lookupResult](cmp.Or(o.MaxEntries, DefaultMaxEntries)),
		flights:     make(map[string]*flight),
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, fmt.Errorf("dns metrics: %w", err)
	}
	r.metrics = m
	if r.static != nil {
		return r, nil
	}
	if r.servers, err = r.loadServers(o); err != nil {
		return nil, err
	}
	return r, nil
}

// loadServers parses Options.Servers, or reads the resolv.conf file.
func (r *Resolver) loadServers(o Options) ([]netip.AddrPort, error) {
	if len(o.Servers) > 0 {
		servers := make([]netip.AddrPort, 0, len(o.Servers))
		for i, s := range o.Servers {
			ap, err := parseServer(s)
			if err != nil {
				return nil, fmt.Errorf("dns options: Servers[%d]: %w", i, err)
			}
			servers = append(servers, ap)
		}
		return servers, nil
	}
	name := cmp.Or(o.ResolvConf, DefaultResolvConf)
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("open resolv.conf: %w", err)
	}
	defer f.Close()
	servers, problems, err := parseResolvConf(name, f)
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		r.log.Warn("skipping resolv.conf line", "err", p)
	}
	if len(servers) == 0 {
		return nil, fmt.Errorf("%s: no usable nameserver line", name)
	}
	return servers, nil
}

// Resolve returns the cached answer, or looks the host up. fresh is true for
// exactly one caller of Resolve per actual lookup (concurrent callers share
// the lookup, the others get fresh=false), including a lookup that
// LookupIPAddr made and cached: that caller records the dns: capture,
// status 1 with Answer.Record on success, -1 when err is a *LookupError. A
// literal IP host returns an Answer with that address, fresh=false, no
// lookup. Failures are not cached beyond the shared lookup: the frontier's
// retry delay spaces the retries. Errors are *LookupError, except that when
// ctx ends first the error wraps ctx.Err() and fresh is false (nothing was
// learnt about the host; another caller waiting for the same lookup then
// performs it).
func (r *Resolver) Resolve(ctx context.Context, host string) (ans *Answer, fresh bool, err error) {
	return r.resolve(ctx, host, true)
}

// resolve is Resolve; record says whether the caller records the lookup
// (takes fresh), which only Resolve's callers do.
func (r *Resolver) resolve(ctx context.Context, host string, record bool) (ans *Answer, fresh bool, err error) {
	key := strings.ToLower(strings.TrimSuffix(host, "."))
	if ip, ok := literalIP(key); ok {
		return &Answer{Host: key, Addrs: []netip.Addr{ip}, Fetched: r.now()}, false, nil
	}
	if err := checkHostName(key); err != nil {
		r.metrics.lookups.WithLabelValues(resultNotFound).Inc()
		return nil, record, &LookupError{Host: key, NotFound: true, Err: err}
	}
	for {
		r.mu.Lock()
		if cached, ok := r.cache.Get(key, r.now()); ok {
			fresh := cached.take(record)
			r.mu.Unlock()
			r.metrics.cacheHits.Inc()
			return cached.ans, fresh, nil
		}
		if f := r.flights[key]; f != nil {
			f.waiters++
			r.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return nil, false, fmt.Errorf("resolve %s: %w", key, ctx.Err())
			}
			if f.abandoned {
				continue
			}
			r.mu.Lock()
			fresh := f.res.take(record)
			r.mu.Unlock()
			return f.res.ans, fresh, f.res.err
		}
		f := &flight{done: make(chan struct{})}
		r.flights[key] = f
		r.mu.Unlock()
		return r.lead(ctx, key, f, record)
	}
}

// lead performs the lookup for f and hands the outcome to its waiters.
func (r *Resolver) lead(ctx context.Context, key string, f *flight, record bool) (*Answer, bool, error) {
	ans, err := r.lookup(ctx, key)
	r.mu.Lock()
	delete(r.flights, key)
	f.res = &lookupResult{ans: ans, err: err, recorded: record}
	f.abandoned = err != nil && ctx.Err() != nil
	if err == nil {
		r.cache.Put(key, f.res, ans.Expires)
	}
	r.mu.Unlock()
	close(f.done)
	if f.abandoned {
		return nil, false, fmt.Errorf("resolve %s: %w", key, ctx.Err())
	}
	return ans, record, err
}

// LookupIPAddr satisfies pkg/fetch.Resolver (and, through the worker, the
// scope's GeoIP rule) through the same cache. It never records: a lookup
// it makes is left for the next Resolve to record, so the worker calls
// Resolve before each fetch. Failures are *net.DNSError with IsNotFound or
// IsTemporary set.
func (r *Resolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	ans, _, err := r.resolve(ctx, host, false)
	if err != nil {
		return nil, toNetError(host, err)
	}
	out := make([]net.IPAddr, 0, len(ans.Addrs))
	for _, a := range ans.Addrs {
		out = append(out, net.IPAddr{IP: net.IP(a.AsSlice()), Zone: a.Zone()})
	}
	return out, nil
}

// literalIP recognises "192.0.2.1", "2001:db8::1" and "[2001:db8::1]".
func literalIP(host string) (netip.Addr, bool) {
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	ip, err := netip.ParseAddr(host)
	return ip, err == nil
}

// checkHostName rejects names that cannot be put in a DNS query, so they
// fail as not found rather than as a temporary error retried for nothing.
func checkHostName(name string) error {
	if name == "" {
		return errors.New("empty host name")
	}
	if len(name) > 253 {
		return fmt.Errorf("host name is %d bytes, longer than 253", len(name))
	}
	for i, label := range strings.Split(name, ".") {
		if label == "" {
			return fmt.Errorf("label %d is empty", i+1)
		}
		if len(label) > 63 {
			return fmt.Errorf("label %d is %d bytes, longer than 63", i+1, len(label))
		}
	}
	return nil
}
