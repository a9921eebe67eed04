package worker

import (
	"context"
	"crypto/sha1" //nolint:gosec // SHA-1 is what WARC and CDX digests use
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/trawler-crawl/trawler/pkg/dns"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/robots"
)

// Heritrix statuses of the preconditions.
const (
	statusDNSFailed        = -1
	statusDNSOK            = 1
	statusRobotsFailed     = -61
	statusRobotsPrecluded  = -9998
	annotationRobotExclude = "robotExcluded"
	// maxRobotsBytes is how much of robots.txt is read (RFC 9309 allows a
	// crawler to stop at 500 KiB).
	maxRobotsBytes = 500 << 10
)

// preconditions runs what must hold before t is fetched, as Heritrix's
// PreconditionEnforcer does: the host's DNS lookup, its robots.txt, and a
// form login. Each prerequisite fetch is a URI of its own (hop P, via t's
// URI) with its own WARC records, crawled event and crawl.log line.
func (w *Worker) preconditions(ctx context.Context, t *task) step {
	if s := w.lookupHost(ctx, t); s != proceed {
		return s
	}
	if s := w.checkRobots(ctx, t); s != proceed {
		return s
	}
	return w.formLogin(ctx, t)
}

// lookupHost resolves t's host through the TTL cache. A fresh lookup is
// recorded as a dns: capture, including one the scope's GeoIP rule made
// when the URI was scoped (the resolver leaves those for Resolve to hand
// out); a failed one ends t with -6 (retried while a temporary failure has
// retries left; NXDOMAIN is final at once).
func (w *Worker) lookupHost(ctx context.Context, t *task) step {
	host := hostOf(t.l.URL)
	if host == "" {
		return proceed
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return proceed // a literal address needs no lookup (no dns: record, as Heritrix)
	}
	if w.failed.recent("dns:" + host) {
		t.prerequisiteFailed(fetch.StatusDomainLookupFailed, false, true)
		return finished
	}
	ans, fresh, err := w.dns.Resolve(ctx, host)
	if ctx.Err() != nil {
		return interrupted
	}
	if err != nil {
		var le *dns.LookupError
		t.prerequisiteFailed(fetch.StatusDomainLookupFailed, !(errors.As(err, &le) && le.NotFound), true)
		if t.dec.Retry {
			return finished
		}
		w.failed.mark("dns:"+host, retryDelay(t))
		dl := messages.ChildLaunch(t.l, "dns:"+host, "P", time.Now())
		if s := w.publish(ctx, dl, t.thread, &outcome{status: statusDNSFailed, mime: "unknown", start: time.Now(), notFetched: true}); s != proceed {
			return s
		}
		return finished
	}
	if !fresh {
		return proceed
	}
	if s := w.recordDNS(ctx, t, host, ans); s != proceed {
		w.dns.Unrecorded(host) // the URI's next attempt records it
		return s
	}
	// The lookup went through the host's queue, as Heritrix's dns: URI
	// does: t waits the politeness delay after it (from minDelayMs: the
	// lookup did not load the host, and a cached answer handed out long
	// after it was fetched has no meaningful duration). Unless the answer
	// expires before t comes back, when deferring would only look it up
	// again.
	if ans.Expires.IsZero() || time.Until(ans.Expires) > maxPoliteness(t) {
		t.deferAfter(&outcome{start: ans.Fetched})
		return finished
	}
	return proceed
}

// maxPoliteness bounds the politeness delay after a prerequisite of t.
func maxPoliteness(t *task) time.Duration {
	p := t.pol.Politeness
	return max(time.Duration(p.MaxDelayMs)*time.Millisecond, seconds(p.RespectCrawlDelayUpToSeconds))
}

// recordDNS writes a lookup as a dns: capture and publishes its event. Its
// WARC-IP-Address is the name server that answered, as Heritrix's FetchDNS
// writes; with a static resolver (tests, demo) no server was asked and the
// field is left out rather than filled with an address nobody queried.
func (w *Worker) recordDNS(ctx context.Context, t *task, host string, ans *dns.Answer) step {
	loc, err := w.warc.WriteDNS(ctx, host, ans.Fetched, ans.Server, ans.Record)
	if err != nil {
		w.metrics.warcErrors.Inc()
		return w.writeFailed(ctx, writeWARC, "dns:"+host, fmt.Errorf("write dns record: %w", err))
	}
	n := int64(len(ans.Record))
	out := &outcome{status: statusDNSOK, size: n, length: n, digest: sha1Digest(ans.Record), mime: "text/dns",
		start: ans.Fetched, loc: &loc}
	return w.publish(ctx, messages.ChildLaunch(t.l, "dns:"+host, "P", time.Now()), t.thread, out)
}

// checkRobots applies the robots policy to t, fetching the host's
// robots.txt first when the cache has no fresh copy.
func (w *Worker) checkRobots(ctx context.Context, t *task) step {
	policy := t.eff.Profile.Robots.Policy
	if !robots.NeedsRobots(policy) {
		return proceed
	}
	origin, err := robots.Origin(t.l.URL)
	pathq := pathAndQuery(t.l.URL)
	if err != nil || pathq == "/robots.txt" {
		return proceed
	}
	rules, ok, err := w.robots.Get(ctx, origin)
	if err != nil {
		w.log.Warn("robots cache read; fetching robots.txt again", "origin", origin, "err", err)
	}
	if ok && fetchedBeforeLaunch(t.l, rules.Fetched(), time.Now()) {
		ok = false // a new launch fetches robots.txt (and its sitemaps) anew
	}
	var pre *outcome // robots.txt's fetch, when it was fetched now and cached
	if !ok {
		if w.failed.recent("robots:" + origin) {
			t.prerequisiteFailed(statusRobotsFailed, false, true)
			return finished
		}
		var s step
		if rules, pre, s = w.fetchRobots(ctx, t, origin); s != proceed {
			return s
		}
	}
	if d, ok := rules.CrawlDelay(w.ua); ok {
		t.crawlDelay, t.crawlDelayKnown = d, true
	}
	allowed, note := robots.Evaluate(policy, rules, w.ua, pathq)
	if !allowed {
		// As Heritrix's PreconditionEnforcer: the status says it all; only
		// calculateRobotsOnly, which fetches anyway, adds robotExcluded.
		t.finish(&outcome{status: statusRobotsPrecluded}, true)
		return finished
	}
	if pre != nil {
		// robots.txt was fetched through the host's queue: t waits its
		// turn, the politeness delay after that fetch (with the
		// Crawl-delay just read), as in Heritrix. It finds the rules
		// cached when it comes back.
		t.deferAfter(pre)
		return finished
	}
	if note != "" {
		t.notes = append(t.notes, note) // calculateRobotsOnly: fetched, but marked
	}
	return proceed
}

// fetchRobots fetches and records origin's robots.txt as a prerequisite
// of t. A failed fetch (no answer, or 5xx) is retried with t, which ends
// with -61 once its retries are spent, as in Heritrix. pre is the fetch's
// outcome when the rules are now in the cache, so that t can wait its
// turn; nil when they could not be stored (t then goes on at once, since
// it would otherwise fetch robots.txt again when it came back).
func (w *Worker) fetchRobots(ctx context.Context, t *task, origin string) (rules *robots.Rules, pre *outcome, s step) {
	pt := w.prerequisite(t, origin+"/robots.txt")
	resp, fs := w.fetch(ctx, pt)
	if fs != proceed {
		return nil, nil, fs
	}
	if robots.FetchFailed(pt.out.status) {
		t.prerequisiteFailed(statusRobotsFailed, !pt.final, false)
		if t.dec.Retry {
			closeResp(resp)
			return nil, nil, finished
		}
		// The robots.txt URI itself is logged with its own status (-2,
		// 503 ...); the URI that needed it finishes with -61.
		w.failed.mark("robots:"+origin, retryDelay(t))
		if resp != nil {
			defer resp.Close()
			if s := w.recordPrerequisite(ctx, pt, resp); s != finished {
				return nil, nil, s
			}
			return nil, nil, finished
		}
		if s := w.publish(ctx, pt.l, t.thread, pt.out); s != proceed {
			return nil, nil, s
		}
		return nil, nil, finished
	}
	defer resp.Close()
	body, err := readBody(resp, maxRobotsBytes)
	if err != nil {
		w.log.Debug("read robots.txt body; treating it as empty", "url", pt.l.URL, "err", err)
	}
	// Recorded first, cached after: rules cached for a robots.txt that
	// could not be recorded would keep the next attempt from fetching
	// (and archiving) it again.
	if s := w.recordPrerequisite(ctx, pt, resp); s != finished {
		return nil, nil, s
	}
	rules, err = w.robots.Put(ctx, origin, resp.StatusCode, body, resp.Start)
	cached := err == nil
	if err != nil {
		w.log.Warn("robots cache write; the rules apply to this URI only", "origin", origin, "err", err)
		rules = robots.Parse(resp.StatusCode, body)
	}
	if cached {
		pre = pt.out
	}
	return rules, pre, proceed
}

// formLogin submits the profile's login form for t's host once per login
// validity, before the host's first URI, so its session cookies are in the
// jar. A login that fails is logged and the crawl goes on without it.
func (w *Worker) formLogin(ctx context.Context, t *task) step {
	p := t.eff.Profile
	if len(p.Credentials.Forms) == 0 || p.Fetch.IgnoreCookies {
		return proceed
	}
	u, err := url.Parse(t.l.URL)
	if err != nil {
		return proceed
	}
	for _, f := range p.Credentials.Forms {
		if !strings.EqualFold(f.Domain, u.Host) && !strings.EqualFold(f.Domain, u.Hostname()) {
			continue
		}
		if t.l.URL == f.LoginURI {
			return proceed
		}
		key := w.statePrefix + "login:" + strings.ToLower(f.Domain)
		first, err := w.rdb.SetNX(ctx, key, time.Now().Unix(), time.Duration(p.Robots.ValidityDurationSeconds)*time.Second).Result()
		if err != nil || !first {
			return proceed
		}
		pt := w.prerequisite(t, f.LoginURI)
		vals := url.Values{}
		for k, v := range f.FormItems {
			vals.Set(k, v.Reveal())
		}
		if strings.EqualFold(f.Method, "GET") {
			pt.l.URL = withQuery(f.LoginURI, vals.Encode())
		} else {
			pt.method, pt.body = "POST", []byte(vals.Encode())
		}
		resp, s := w.fetch(ctx, pt)
		if s != proceed {
			return s
		}
		if resp == nil {
			w.log.Warn("form login failed; crawling without it", "domain", f.Domain, "status", pt.out.status)
			return proceed
		}
		defer resp.Close()
		if s := w.recordPrerequisite(ctx, pt, resp); s != finished {
			return s
		}
		// Like robots.txt, the login went through the host's queue: t
		// waits the politeness delay it earned (the SETNX above keeps t
		// from logging in again when it comes back).
		t.deferAfter(pt.out)
		return finished
	}
	return proceed
}

// prerequisite makes the task of a prerequisite URI of t.
func (w *Worker) prerequisite(t *task, target string) *task {
	return &task{c: t.c, l: messages.ChildLaunch(t.l, target, "P", time.Now()), eff: t.eff, pol: t.pol, thread: t.thread, prereq: true}
}

// recordPrerequisite records a prerequisite's capture and publishes its
// event; anything but finished means t cannot go on now.
func (w *Worker) recordPrerequisite(ctx context.Context, pt *task, resp *fetch.Response) step {
	switch s := w.record(ctx, pt, resp); {
	case s == unrecorded:
		return s
	case s != finished || pt.dec.Retry:
		return interrupted
	}
	if s := w.publish(ctx, pt.l, pt.thread, pt.out); s != proceed {
		return s
	}
	return finished
}

func readBody(resp *fetch.Response, limit int64) ([]byte, error) {
	body, err := decodedBody(resp)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return io.ReadAll(io.LimitReader(body, limit))
}

func retryDelay(t *task) time.Duration {
	return time.Duration(t.pol.Frontier.RetryDelaySeconds) * time.Second
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

func pathAndQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "/"
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

func withQuery(raw, q string) string {
	if strings.Contains(raw, "?") {
		return raw + "&" + q
	}
	return raw + "?" + q
}

func sha1Digest(b []byte) string {
	sum := sha1.Sum(b) //nolint:gosec // WARC digest
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// failMemo remembers prerequisites that failed for good (a host that does
// not resolve, a robots.txt that cannot be fetched) for the retry delay, so
// the host's other URIs finish at once instead of each repeating the
// failing fetch and its retries. It is a bounded cache, not crawl state.
type failMemo struct {
	mu sync.Mutex
	m  map[string]time.Time
}

const maxFailMemo = 100000

func (f *failMemo) recent(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	until, ok := f.m[key]
	if ok && time.Now().After(until) {
		delete(f.m, key)
		return false
	}
	return ok
}

func (f *failMemo) mark(key string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil || len(f.m) >= maxFailMemo {
		f.m = map[string]time.Time{}
	}
	f.m[key] = time.Now().Add(d)
}
