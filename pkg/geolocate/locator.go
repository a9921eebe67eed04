package geolocate

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Resolver looks host names up. net.Resolver and the synthetic web's
// resolver (pkg/testweb) both satisfy it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Countries maps an address to a country code; DB satisfies it.
type Countries interface {
	Country(ip netip.Addr) (string, error)
}

// Options tune a Locator. Zero fields take the defaults.
type Options struct {
	// CacheSize bounds the number of hosts remembered (default 100000).
	// The cache keeps two generations of at most CacheSize/2 hosts and
	// drops the older one when the newer fills: no per-entry bookkeeping,
	// and a host in use survives because a hit moves it forward.
	CacheSize int
	// TTL is how long a located host is remembered (default 6 h, Heritrix's
	// DNS validity).
	TTL time.Duration
	// FailureTTL is how long a failed resolution is remembered (default
	// 1 min), so a host that does not resolve is not retried for every URI
	// while a transient failure is soon retried.
	FailureTTL time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Locator finds the country of a host's first address, with a per-host
// cache. It is safe for concurrent use.
type Locator struct {
	db   Countries
	res  Resolver
	opts Options

	mu       sync.Mutex
	cur, old map[string]entry
}

type entry struct {
	country string
	err     error
	expires time.Time
}

// NewLocator builds a locator over db, resolving names with res.
func NewLocator(db Countries, res Resolver, opts Options) *Locator {
	if opts.CacheSize <= 0 {
		opts.CacheSize = 100_000
	}
	if opts.TTL <= 0 {
		opts.TTL = 6 * time.Hour
	}
	if opts.FailureTTL <= 0 {
		opts.FailureTTL = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Locator{db: db, res: res, opts: opts, cur: map[string]entry{}, old: map[string]entry{}}
}

// HostCountry returns the ISO country code of host ("" when the database
// does not know its address). A host name that does not resolve is an
// error; so is a cancelled context, which is not cached.
func (l *Locator) HostCountry(ctx context.Context, host string) (string, error) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return "", errors.New("geolocate: empty host")
	}
	now := l.opts.Now()
	if e, ok := l.get(host, now); ok {
		return e.country, e.err
	}
	country, err := l.locate(ctx, host)
	if err != nil && ctx.Err() != nil {
		return "", err
	}
	ttl := l.opts.TTL
	if err != nil {
		ttl = l.opts.FailureTTL
	}
	l.put(host, entry{country: country, err: err, expires: now.Add(ttl)})
	return country, err
}

func (l *Locator) locate(ctx context.Context, host string) (string, error) {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		ips, err := l.res.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return "", fmt.Errorf("geolocate %s: %w", host, err)
		}
		if len(ips) == 0 {
			return "", fmt.Errorf("geolocate %s: no addresses", host)
		}
		ip = ips[0]
	}
	return l.db.Country(ip)
}

func (l *Locator) get(host string, now time.Time) (entry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.cur[host]
	if !ok {
		if e, ok = l.old[host]; ok {
			delete(l.old, host)
			l.putLocked(host, e)
		}
	}
	if !ok || !now.Before(e.expires) {
		return entry{}, false
	}
	return e, true
}

func (l *Locator) put(host string, e entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.putLocked(host, e)
}

func (l *Locator) putLocked(host string, e entry) {
	if len(l.cur) >= l.opts.CacheSize/2+1 {
		l.old, l.cur = l.cur, make(map[string]entry, len(l.cur))
	}
	l.cur[host] = e
}
