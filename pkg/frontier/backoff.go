package frontier

import (
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

// Host back-off (issue 26): a server answering 429 Too Many Requests or 503
// Service Unavailable asks the crawl to slow down. Heritrix has no such
// rule (a 503 is an ordinary response there, and it reads no Retry-After),
// so Trawler adds one in the frontier, where politeness lives: the host
// waits the server's Retry-After (capped by
// politeness.maxRetryAfterSeconds) or, without one, an exponential
// back-off with jitter (politeness.backOffBaseMs doubling per back-off in
// a row, up to politeness.backOffMaxMs). The URI is deferred, not charged
// a retry. The state is in the host's hash in Redis (bo, bu, bs; see
// lua/backoff.lua), written by the completion script that settles the
// URI, so it costs no extra round trip and survives a worker restart.

// StatusDeferred is Heritrix's S_DEFERRED (-50): a URI put back to wait
// for its prerequisite or its host's back-off. It never finishes a URI,
// so it is neither logged nor published.
const StatusDeferred = -50

// Throttled reports whether an HTTP status asks the crawl to slow down.
func Throttled(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// RetryAfter reads an HTTP Retry-After value, delta-seconds or an
// HTTP-date, as a wait from now, capped at limit. ok is false when the
// header is missing, malformed, or names no time in the future (a date
// in the past, 0): the frontier's own back-off applies then, since the
// server did ask the crawl to slow down.
func RetryAfter(v string, now time.Time, limit time.Duration) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseUint(v, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return limit, limit > 0 // more seconds than a uint64 holds
		}
		if err != nil {
			return 0, false
		}
		if n > uint64(limit/time.Second)+1 {
			return limit, limit > 0
		}
		d = time.Duration(n) * time.Second
	} else {
		t, err := http.ParseTime(v)
		if err != nil {
			return 0, false
		}
		d = t.Sub(now)
	}
	if d = min(d, limit); d <= 0 {
		return 0, false
	}
	return d, true
}

// backOffQuiet is the least quiet spell after which a host's back-offs
// count from zero again (QUIET_MS in backoff.lua).
const backOffQuiet = 24 * time.Hour

// DecideThrottle is the decision for a response asking the crawl to slow
// down (Throttled), with the server's capped Retry-After (0: none). The
// URI is deferred, not charged a retry, while its host has backed off
// fewer than maxRetries times in a row; past that the back-offs are
// charged like a transient failure (then -8), so a host that never stops
// throttling cannot keep its URIs in the frontier for ever. A host whose
// last back-off ended more than the larger of backOffMaxMs and a day ago
// counts from zero again, as the completion script does (backoff.lua says
// why not sooner).
func (p Policy) DecideThrottle(c *Claim, status int, retryAfter time.Duration, now time.Time) Decision {
	d := Decision{Status: status, Attempts: c.Retries + 1, Retry: true, Throttle: status, RetryAfter: max(retryAfter, 0)}
	n := c.BackOffs
	if n > 0 && now.Sub(c.BackOffUntil) > max(time.Duration(p.Politeness.BackOffMaxMs)*time.Millisecond, backOffQuiet) {
		n = 0
	}
	switch {
	case n < p.Frontier.MaxRetries:
		d.Defer = true
	case c.Retries >= p.Frontier.MaxRetries:
		d.Retry, d.Status = false, StatusRetriesExhausted
	}
	return d
}

// BackOffChallenge is the back-off reason of a host that served a
// bot-challenge page (Decision.ThrottleReason).
const BackOffChallenge = "challenge"

// backOffArg is the completion script's back-off argument for d: "" when
// the server did not ask to slow down, else "<status or reason> <retry-
// after ms, -1 none> <base ms> <cap ms> <jitter>".
func backOffArg(d Decision, pol profile.Politeness) string {
	if d.Throttle == 0 {
		return ""
	}
	ra := int64(-1)
	if d.RetryAfter > 0 {
		ra = d.RetryAfter.Milliseconds()
	}
	base := max(pol.BackOffBaseMs, 0)
	why := strconv.Itoa(d.Throttle)
	if d.ThrottleReason != "" {
		why = d.ThrottleReason
	}
	return why + " " + strconv.FormatInt(ra, 10) + " " + strconv.FormatInt(base, 10) + " " +
		strconv.FormatInt(max(pol.BackOffMaxMs, base), 10) + " " + strconv.FormatFloat(rand.Float64(), 'f', 4, 64)
}
