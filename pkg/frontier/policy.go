package frontier

import (
	"strconv"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// Heritrix status codes the frontier itself assigns.
const (
	// StatusRetriesExhausted finishes a URI whose transient failures ran
	// past maxRetries.
	StatusRetriesExhausted = -8
	// StatusBlockedByQuota finishes a URI over one of its quotas.
	StatusBlockedByQuota = -5003
)

// Policy is the frontier's share of one URI's effective settings. Every
// call that needs a setting takes it from the Policy carried by the
// candidate or outcome, so sheets can make settings differ per URI.
type Policy struct {
	Politeness profile.Politeness
	Frontier   profile.Frontier
	Quotas     profile.Quotas
}

// PolicyOf takes the frontier settings of a profile (an effective, per-URI
// profile once sheets apply).
func PolicyOf(p profile.Profile) Policy {
	return Policy{Politeness: p.Politeness, Frontier: p.Frontier, Quotas: p.Quotas}
}

// Precedence levels inside a host queue; lower goes first, arrival order
// within a level.
const (
	LevelForced    = 0 // seeds and forceFetch URIs
	LevelPreferred = 1 // within preferenceDepthHops of a seed
	LevelNormal    = 2
)

// Level is the precedence of a URI in its host queue: seeds and forced
// URIs first; then, when preferenceDepthHops >= 0, URIs at most that many
// hops from their seed and redirects (as Heritrix's FrontierPreparer
// schedules them HIGH); then everything else.
func Level(l messages.Launch, preferenceDepthHops int) int {
	if l.IsSeed || l.ForceFetch {
		return LevelForced
	}
	if preferenceDepthHops < 0 {
		return LevelNormal
	}
	hops := l.HopPath()
	if len(hops) <= preferenceDepthHops || hops[len(hops)-1] == messages.HopRedirect {
		return LevelPreferred
	}
	return LevelNormal
}

// Delay is the politeness delay after a fetch (ARCHITECTURE.md 5.2):
// delayFactor × fetch duration clamped to [minDelayMs, maxDelayMs], raised
// to the robots.txt Crawl-delay but no further than
// respectCrawlDelayUpToSeconds, and raised again so that the host's
// average download rate stays under maxKBps (0: no cap) after bytes.
func Delay(p profile.Politeness, fetch time.Duration, crawlDelay time.Duration, bytes int64, maxKBps int64) time.Duration {
	return max(baseDelay(p, fetch, bytes, maxKBps), crawlDelayPart(p, crawlDelay))
}

// baseDelay is Delay without the Crawl-delay, which the completion script
// applies from the host's stored value when the outcome does not carry it.
func baseDelay(p profile.Politeness, fetch time.Duration, bytes int64, maxKBps int64) time.Duration {
	d := time.Duration(float64(fetch) * p.DelayFactor)
	d = min(max(d, time.Duration(p.MinDelayMs)*time.Millisecond), time.Duration(p.MaxDelayMs)*time.Millisecond)
	if maxKBps > 0 && bytes > 0 {
		// Heritrix's maxPerHostBandwidthUsageKbSec: KB are 1024 bytes.
		bw := time.Duration(float64(bytes) / float64(maxKBps*1024) * float64(time.Second))
		d = max(d, bw)
	}
	return d
}

func crawlDelayPart(p profile.Politeness, crawlDelay time.Duration) time.Duration {
	return max(0, min(crawlDelay, crawlDelayCap(p)))
}

func crawlDelayCap(p profile.Politeness) time.Duration {
	return time.Duration(p.RespectCrawlDelayUpToSeconds) * time.Second
}

// Decision is what becomes of a URI after one fetch attempt.
type Decision struct {
	// Retry: the URI goes back to its queue for another attempt after
	// retryDelaySeconds; no crawled event is published for this attempt.
	Retry bool
	// Status is the status to report when the URI finishes (-8 when its
	// retries ran out).
	Status int
	// Attempts counts fetch attempts including this one.
	Attempts int
	// Defer (with Retry) puts the URI back at the head of its queue
	// without charging a retry, after the politeness delay: Heritrix's
	// S_DEFERRED (see backoff.go).
	Defer bool
	// Throttle is the status (429, 503) of a response asking the crawl to
	// slow down: the host backs off. RetryAfter is the server's
	// Retry-After, capped; 0 means the frontier's exponential back-off.
	Throttle   int
	RetryAfter time.Duration
	// ThrottleReason, when set, is what the host's back-off records
	// instead of the status: "challenge" for a bot-challenge page
	// (pkg/challenge), so the operator sees the host as challenged.
	ThrottleReason string
	// Wait, when positive, is the least time the host waits before its
	// next fetch, however short its politeness delay: a worker's back-off
	// after a capture it could not record. Unlike Throttle it is not the
	// server's doing, so nothing of it is kept as the host's back-off.
	Wait time.Duration
}

// Annotation is Heritrix's "Nt" annotation (N fetch attempts), or "" for
// a URI fetched at the first attempt.
func (d Decision) Annotation() string {
	if d.Attempts <= 1 {
		return ""
	}
	return strconv.Itoa(d.Attempts) + "t"
}

// Decide applies the retry policy to one attempt's status, given how many
// times the URI was retried before.
func (p Policy) Decide(status, retries int) Decision {
	d := Decision{Status: status, Attempts: retries + 1}
	if !p.transient(status) {
		return d
	}
	if retries < p.Frontier.MaxRetries {
		d.Retry = true
		return d
	}
	d.Status = StatusRetriesExhausted
	return d
}

// transient reports failures worth retrying: DNS failure, connection
// failed or broken, timeout, and 5xx when retryServerErrors is set.
func (p Policy) transient(status int) bool {
	if status >= -4 && status <= -1 {
		return true
	}
	return p.Frontier.RetryServerErrors && status >= 500 && status < 600
}

// Usage is what one quota subject (server, host or source) has fetched:
// Heritrix's FetchStats as QuotaEnforcer reads them.
type Usage struct {
	FetchSuccesses int64 // 2xx responses
	SuccessBytes   int64
	FetchResponses int64 // any HTTP status
	AllBytes       int64
}

// Usages are the counters a claim carries for its quota check.
type Usages struct {
	Server Usage // host:port, the queue
	Host   Usage // host name, over all ports
	Source Usage // source tag (target) of the URI's seed
}

// OverQuota checks the quotas in Heritrix's order (server, host, source;
// successes, success KB, responses, all KB) and returns the name of the
// first one reached, for the "Q:<name>" annotation.
func (p Policy) OverQuota(u Usages) (string, bool) {
	q := p.Quotas
	checks := []struct {
		name   string
		limit  int64
		actual int64
	}{
		{"serverMaxFetchSuccesses", q.ServerMaxFetchSuccesses, u.Server.FetchSuccesses},
		{"serverMaxSuccessKb", q.ServerMaxSuccessKb, u.Server.SuccessBytes / 1024},
		{"serverMaxFetchResponses", q.ServerMaxFetchResponses, u.Server.FetchResponses},
		{"serverMaxAllKb", q.ServerMaxAllKb, u.Server.AllBytes / 1024},
		{"hostMaxFetchSuccesses", q.HostMaxFetchSuccesses, u.Host.FetchSuccesses},
		{"hostMaxSuccessKb", q.HostMaxSuccessKb, u.Host.SuccessBytes / 1024},
		{"hostMaxFetchResponses", q.HostMaxFetchResponses, u.Host.FetchResponses},
		{"hostMaxAllKb", q.HostMaxAllKb, u.Host.AllBytes / 1024},
		{"sourceMaxFetchSuccesses", q.SourceMaxFetchSuccesses, u.Source.FetchSuccesses},
		{"sourceMaxSuccessKb", q.SourceMaxSuccessKb, u.Source.SuccessBytes / 1024},
		{"sourceMaxFetchResponses", q.SourceMaxFetchResponses, u.Source.FetchResponses},
		{"sourceMaxAllKb", q.SourceMaxAllKb, u.Source.AllBytes / 1024},
	}
	for _, c := range checks {
		if c.limit >= 0 && c.actual >= c.limit {
			return c.name, true
		}
	}
	return "", false
}

// Limit names, as Heritrix's CrawlLimitEnforcer settings.
const (
	LimitDocuments = "maxDocumentsDownload"
	LimitBytes     = "maxBytesDownload"
	LimitTime      = "maxTimeSeconds"
	LimitNovelURIs = "maxNovelUrls"
	LimitNovelSize = "maxNovelBytes"
)

// LimitReached returns the crawl limit that the totals (and the time since
// the crawl started) reached, or "" when none is; 0 limits are off. The
// order is Heritrix's CrawlLimitEnforcer's.
func LimitReached(l profile.Limits, t Totals, elapsed time.Duration) string {
	switch {
	case l.MaxBytesDownload > 0 && t.Bytes >= l.MaxBytesDownload:
		return LimitBytes
	case l.MaxNovelBytes > 0 && t.NovelBytes >= l.MaxNovelBytes:
		return LimitNovelSize
	case l.MaxDocumentsDownload > 0 && t.Downloaded >= l.MaxDocumentsDownload:
		return LimitDocuments
	case l.MaxNovelUrls > 0 && t.Novel >= l.MaxNovelUrls:
		return LimitNovelURIs
	case l.MaxTimeSeconds > 0 && elapsed >= time.Duration(l.MaxTimeSeconds)*time.Second:
		return LimitTime
	}
	return ""
}

// DecidePrerequisite applies the retry policy to a failed prerequisite
// (DNS lookup, robots.txt): a retriable failure is retried like a fetch
// failure, but when the retries run out the URI finishes with status itself
// (-6, -61), as Heritrix reports it, not -8.
func (p Policy) DecidePrerequisite(status, retries int, retriable bool) Decision {
	d := Decision{Status: status, Attempts: retries + 1}
	d.Retry = retriable && retries < p.Frontier.MaxRetries
	return d
}
