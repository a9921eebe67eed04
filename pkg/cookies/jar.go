package cookies

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/internal/coalesce"
)

// Defaults for Options fields left zero.
const (
	DefaultMaxPerDomain  = 50
	DefaultMaxValueBytes = 4096
	DefaultTTL           = 30 * 24 * time.Hour
)

// Options configure a Jar. Zero fields take the defaults.
type Options struct {
	// MaxPerDomain caps the cookies kept per registrable domain; past it
	// the oldest are dropped (RFC 6265 asks for at least 50).
	MaxPerDomain int
	// MaxValueBytes caps a cookie's name plus value; longer cookies are
	// ignored rather than truncated, since a cut value is useless.
	MaxValueBytes int
	// TTL is the expiry of a domain's Redis key, refreshed on every write.
	// Session cookies have no expiry of their own, so they live until the
	// domain goes untouched this long; a crawl has no browser session end.
	TTL time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Logger receives Redis errors and ignored cookies (names only, never
	// values). Nil discards.
	Logger *slog.Logger
}

// Jar is a cookie jar stored in Redis. It is safe for concurrent use, and
// any number of Jars (in any number of processes) sharing a Redis and
// prefix see the same cookies.
type Jar struct {
	rdb    redis.UniversalClient
	prefix string
	opts   Options
	now    func() time.Time
	log    *slog.Logger
	// reads coalesces the reads of concurrent fetches into shared
	// pipelines: every fetch reads its domain's cookies.
	reads *coalesce.Group[string, stored]
}

// stored is one domain's hash as read, or the error reading it.
type stored struct {
	fields map[string]string
	err    error
}

// maxReadBatch caps the domains of one coalesced read.
const maxReadBatch = 500

// New returns a jar keeping its cookies in rdb under keys prefix +
// registrable domain, e.g. prefix "fc:cookies:" gives "fc:cookies:bbc.co.uk".
func New(rdb redis.UniversalClient, prefix string, o Options) *Jar {
	if o.MaxPerDomain <= 0 {
		o.MaxPerDomain = DefaultMaxPerDomain
	}
	if o.MaxValueBytes <= 0 {
		o.MaxValueBytes = DefaultMaxValueBytes
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	j := &Jar{rdb: rdb, prefix: prefix, opts: o, now: o.Now, log: o.Logger}
	j.reads = &coalesce.Group[string, stored]{Run: j.readDomains, MaxBatch: maxReadBatch}
	if j.now == nil {
		j.now = time.Now
	}
	if j.log == nil {
		j.log = slog.New(slog.DiscardHandler)
	}
	return j
}

// Cookies returns the cookies to send with a request for u, longest path
// first, then oldest first (RFC 6265 5.4). It costs one Redis round trip
// (HGETALL of u's registrable domain), shared with concurrent calls. Non-http(s) URLs get none; so does
// every URL when Redis fails (the error is logged).
func (j *Jar) Cookies(ctx context.Context, u *url.URL) []*http.Cookie {
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil
	}
	host, err := canonicalHost(u)
	if err != nil {
		return nil
	}
	key := jarKey(host)
	read, err := j.reads.Do(ctx, []string{key})
	if err == nil {
		err = read[0].err
	}
	if err != nil {
		j.logRedisError(ctx, "read cookies", key, err)
		return nil
	}
	stored := read[0].fields
	if len(stored) == 0 {
		return nil
	}
	now, https, path := j.now().Unix(), u.Scheme == "https", requestPath(u)
	matched := make([]entry, 0, len(stored))
	for field, v := range stored {
		e, err := decodeEntry(v)
		if err != nil {
			j.log.WarnContext(ctx, "skip stored cookie", "domain", key, "field", field, "err", err)
			continue
		}
		if e.expired(now) || (e.Secure && !https) || !e.domainMatch(host) || !e.pathMatch(path) {
			continue
		}
		matched = append(matched, e)
	}
	slices.SortFunc(matched, func(a, b entry) int {
		return cmp.Or(cmp.Compare(len(b.Path), len(a.Path)), cmp.Compare(a.Created, b.Created), cmp.Compare(a.field(), b.field()))
	})
	out := make([]*http.Cookie, len(matched))
	for i := range matched {
		out[i] = matched[i].cookie()
	}
	return out
}

// readDomains reads the hashes of domains in one pipeline. A reply that
// is an error (a key of the wrong type) fails its domain only.
func (j *Jar) readDomains(ctx context.Context, domains []string) ([]stored, error) {
	cmds := make([]*redis.MapStringStringCmd, len(domains))
	_, err := j.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, d := range domains {
			cmds[i] = p.HGetAll(ctx, j.prefix+d)
		}
		return nil
	})
	out := make([]stored, len(domains))
	for i, c := range cmds {
		out[i] = stored{fields: c.Val(), err: c.Err()}
		if out[i].err != nil && !isReply(out[i].err) {
			return nil, err // Redis unreachable: every domain fails alike
		}
	}
	return out, nil
}

// isReply tells an error reply about one key from a failure to reach
// Redis.
func isReply(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr)
}

// SetCookies stores the cookies a response for u set (RFC 6265 5.3), in one
// Redis pipeline. Cookies that RFC 6265 says to ignore (a Domain attribute
// that is a public suffix or does not domain-match u's host), that have an
// invalid name or value, or that exceed MaxValueBytes are dropped and
// logged by name; an expired cookie deletes the stored one.
func (j *Jar) SetCookies(ctx context.Context, u *url.URL, cookies []*http.Cookie) {
	if len(cookies) == 0 || (u.Scheme != "http" && u.Scheme != "https") {
		return
	}
	host, err := canonicalHost(u)
	if err != nil {
		j.log.DebugContext(ctx, "ignore cookies", "url", u.Redacted(), "err", err)
		return
	}
	now := j.now()
	key, reqPath := jarKey(host), requestPath(u)
	w := &write{key: key}
	for i, c := range cookies {
		if c == nil {
			continue
		}
		e, remove, err := j.newEntry(c, host, reqPath, now)
		if err != nil {
			j.log.DebugContext(ctx, "ignore cookie", "url", u.Redacted(), "err", err)
			continue
		}
		// Cookies of one response are created in order (step 11.3 keeps
		// this order among equal paths when they are sent back).
		e.Created = now.UnixMicro() + int64(i)
		if remove {
			w.del(&e)
		} else {
			w.set(&e)
		}
	}
	if len(w.args) == 0 {
		return
	}
	evicted, err := j.store(ctx, []*write{w})
	if err != nil {
		j.logRedisError(ctx, "store cookies", key, err)
		return
	}
	if n := evicted[key]; n > 0 {
		j.log.DebugContext(ctx, "evicted oldest cookies", "domain", key, "count", n, "max", j.opts.MaxPerDomain)
	}
}

// newEntry turns a Set-Cookie received from host into the entry to store,
// or says it deletes the stored one.
func (j *Jar) newEntry(c *http.Cookie, host, reqPath string, now time.Time) (e entry, remove bool, err error) {
	if err := checkNameValue(c.Name, c.Value, j.opts.MaxValueBytes); err != nil {
		return entry{}, false, err
	}
	domain, hostOnly, err := cookieDomain(host, c.Domain)
	if err != nil {
		return entry{}, false, err
	}
	expires, remove := expiry(c, now)
	return entry{
		Name: c.Name, Value: c.Value, Quoted: c.Quoted,
		Domain: domain, HostOnly: hostOnly, Path: cookiePath(reqPath, c.Path),
		Secure: c.Secure, HTTPOnly: c.HttpOnly, Expires: expires,
	}, remove, nil
}

// logRedisError logs a failed Redis call: a warning, except when the
// caller's context ended (shutdown), which is not worth one per fetch.
func (j *Jar) logRedisError(ctx context.Context, msg, key string, err error) {
	level := slog.LevelWarn
	if ctx.Err() != nil {
		level = slog.LevelDebug
	}
	j.log.Log(ctx, level, msg, "domain", key, "err", err)
}
