package robots

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/internal/lru"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

// DefaultMaxLocal is the default bound of a Cache's in-process LRU.
const DefaultMaxLocal = 10000

// Redis hash fields of one cached robots.txt.
const (
	fieldStatus  = "status"
	fieldBody    = "body"
	fieldFetched = "fetched" // Unix milliseconds, the worker's clock
)

// CacheOptions configures a Cache.
type CacheOptions struct {
	// Validity is how long a fetched robots.txt is used before it is
	// fetched again (profile robots.validityDurationSeconds). Zero means
	// forever, as in Heritrix: Redis keys then never expire.
	Validity time.Duration
	// MaxLocal bounds the in-process LRU of parsed rules; zero means
	// DefaultMaxLocal.
	MaxLocal int
	// Logger receives warnings about unreadable cache entries; nil
	// discards them.
	Logger *slog.Logger
	// Registerer receives trawler_robots_cache_hits_total and
	// trawler_robots_cache_misses_total; nil registers nothing.
	Registerer prometheus.Registerer
}

// Cache keeps robots.txt per origin in Redis, so stateless workers share one
// fetch per host and validity period, with a bounded in-process LRU of
// parsed Rules in front so a busy host's file is not re-parsed per URI.
//
// Each origin is a Redis hash <prefix><origin> with the status, the body
// (at most MaxBodyBytes) and the fetch time, expiring Validity after the
// fetch. The TTL is computed from the worker's clock and set relative
// (PEXPIRE), so Redis's clock never matters. A Cache is safe for concurrent
// use.
type Cache struct {
	rdb      redis.UniversalClient
	prefix   string
	validity time.Duration
	log      *slog.Logger
	metrics  *metrics
	local    *lru.Cache[string, *Rules]
}

// NewCache returns a Cache over rdb whose keys start with prefix (e.g.
// "robots:fc:"; one key per origin, so it works unchanged on Redis
// Cluster).
func NewCache(rdb redis.UniversalClient, prefix string, o CacheOptions) (*Cache, error) {
	if rdb == nil {
		return nil, errors.New("robots cache: nil redis client")
	}
	if o.Validity < 0 {
		return nil, fmt.Errorf("robots cache: validity %v is negative", o.Validity)
	}
	if o.MaxLocal < 0 {
		return nil, fmt.Errorf("robots cache: MaxLocal %d is negative", o.MaxLocal)
	}
	if o.MaxLocal == 0 {
		o.MaxLocal = DefaultMaxLocal
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(o.Registerer)
	if err != nil {
		return nil, err
	}
	return &Cache{
		rdb: rdb, prefix: prefix, validity: o.Validity, log: o.Logger,
		metrics: m, local: lru.New[string, *Rules](o.MaxLocal),
	}, nil
}

// Get returns the rules cached for origin (see Origin). ok is false when
// none are cached or they have expired: the caller then fetches robots.txt
// and calls Put. An unreadable entry is logged and reported as absent, so
// the next Put repairs it.
func (c *Cache) Get(ctx context.Context, origin string) (*Rules, bool, error) {
	now := time.Now()
	if r, ok := c.local.Get(origin, now); ok {
		c.metrics.hits.WithLabelValues(tierLocal).Inc()
		return r, true, nil
	}
	vals, err := c.rdb.HMGet(ctx, c.prefix+origin, fieldStatus, fieldBody, fieldFetched).Result()
	if err != nil {
		return nil, false, fmt.Errorf("robots cache get %s: %w", origin, err)
	}
	if vals[0] == nil && vals[1] == nil && vals[2] == nil {
		c.metrics.misses.Inc()
		return nil, false, nil
	}
	status, body, fetched, err := decodeEntry(vals)
	if err != nil {
		c.log.Warn("unreadable robots cache entry; refetching", "origin", origin, "key", c.prefix+origin, "err", err)
		c.metrics.misses.Inc()
		return nil, false, nil
	}
	expires, forever := fetched.Add(c.validity), c.validity == 0
	if !forever && !now.Before(expires) {
		// The key outlived the fetch time: another worker's clock runs
		// behind ours, or Redis has not expired it yet. The fetch time
		// is what counts.
		c.metrics.misses.Inc()
		return nil, false, nil
	}
	r := Parse(status, body)
	r.fetched = fetched
	c.local.Put(origin, r, localExpiry(expires, forever))
	c.metrics.hits.WithLabelValues(tierRedis).Inc()
	return r, true, nil
}

// Put records the outcome of fetching origin's robots.txt at fetched (zero
// means now) and returns its rules. Failed fetches (FetchFailed) are
// rejected: they are retried, never cached. A fetch already older than the
// validity is parsed but not cached. When Redis fails, Put still returns the
// rules, with the error, so the caller can use them for the URI at hand.
func (c *Cache) Put(ctx context.Context, origin string, status int, body []byte, fetched time.Time) (*Rules, error) {
	if FetchFailed(status) {
		return nil, fmt.Errorf("robots cache put %s: status %d is a failed fetch, not cacheable", origin, status)
	}
	if len(body) > MaxBodyBytes {
		body = body[:MaxBodyBytes]
	}
	r := Parse(status, body)
	if fetched.IsZero() {
		fetched = time.Now()
	}
	r.fetched = fetched
	forever := c.validity == 0
	ttl := c.validity - time.Since(fetched)
	if !forever && ttl <= 0 {
		return r, nil
	}
	c.local.Put(origin, r, localExpiry(fetched.Add(c.validity), forever))
	key := c.prefix + origin
	_, err := c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, fieldStatus, status, fieldBody, body, fieldFetched, fetched.UnixMilli())
		if forever {
			p.Persist(ctx, key)
		} else {
			p.PExpire(ctx, key, ttl)
		}
		return nil
	})
	if err != nil {
		return r, fmt.Errorf("robots cache put %s: %w", origin, err)
	}
	return r, nil
}

// decodeEntry reads the HMGET reply of one entry.
func decodeEntry(vals []any) (status int, body []byte, fetched time.Time, err error) {
	s, ok1 := vals[0].(string)
	b, ok2 := vals[1].(string)
	f, ok3 := vals[2].(string)
	if !ok1 || !ok2 || !ok3 {
		return 0, nil, time.Time{}, errors.New("missing field")
	}
	if status, err = strconv.Atoi(s); err != nil {
		return 0, nil, time.Time{}, fmt.Errorf("field %s: %w", fieldStatus, err)
	}
	if FetchFailed(status) {
		return 0, nil, time.Time{}, fmt.Errorf("field %s: failed-fetch status %d", fieldStatus, status)
	}
	ms, err := strconv.ParseInt(f, 10, 64)
	if err != nil {
		return 0, nil, time.Time{}, fmt.Errorf("field %s: %w", fieldFetched, err)
	}
	return status, []byte(b), time.UnixMilli(ms), nil
}

// Origin returns the robots.txt origin of an http or https URL:
// scheme://host[:port], normalised by pkg/uri (lower-case, punycoded host;
// a port only when it is not the scheme's default). RFC 9309 scopes a
// robots.txt to exactly this triple, so http and https are distinct.
func Origin(rawURL string) (string, error) {
	if a, ok := hostkey.NormalAuthority(rawURL); ok {
		scheme, _, _ := strings.Cut(rawURL, ":")
		return scheme + "://" + a, nil
	}
	u, err := uri.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("robots origin: %w", err)
	}
	return u.Scheme() + "://" + u.Host(), nil
}

// localExpiry is the in-process cache's expiry: none for rules that never
// expire (validity 0).
func localExpiry(expires time.Time, forever bool) time.Time {
	if forever {
		return time.Time{}
	}
	return expires
}
