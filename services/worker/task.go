package worker

import (
	"context"
	"errors"
	"net/http"
	"runtime/pprof"
	"time"

	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/sheets"
)

// task is one claimed URI on its way through the fetch chain:
// preselector → preconditions → fetch → scan → WARC write → extraction →
// disposition (ARCHITECTURE.md section 6).
type task struct {
	c      *frontier.Claim
	l      messages.Launch
	eff    *sheets.Effective
	pol    frontier.Policy
	scope  scope.Decision
	thread int

	out *outcome
	dec frontier.Decision
	// decided marks a decision made by the worker rather than
	// Policy.Decide (prerequisite failures, a held scan).
	decided bool
	// crawlDelay is the host's robots.txt Crawl-delay, for the frontier.
	crawlDelay      time.Duration
	crawlDelayKnown bool
	// prereq marks a prerequisite URI (robots.txt, a login form): fetched
	// unconditionally, since a 304 would leave nothing to parse.
	prereq bool
	// method and body are set for a form login (POST); "" means GET.
	method string
	body   []byte
	// notes are annotations for t's event found before the fetch
	// (calculateRobotsOnly's robotExcluded).
	notes []string
	// prior is what the recently-crawled DB knew of the URL before this
	// fetch: validators for conditional requests, digest for revisits.
	prior recentdb.Entry
	// final marks a fetch failure the fetcher says is not worth retrying
	// (an address the guard refuses, an illegal URI, oversized headers).
	final bool
}

// step is how a stage of the chain ended.
type step int

const (
	// proceed to the next stage.
	proceed step = iota
	// finished: t.out and t.dec say how the URI ends (or is retried).
	finished
	// interrupted by shutdown: the URI goes back to the frontier
	// uncharged, its host free at once.
	interrupted
	// unrecorded: the URI's capture, log line or events could not be
	// recorded (local disk, broker): the URI is deferred uncharged and
	// its host backs off (writeguard.go).
	unrecorded
)

// stage runs f under a pprof label naming the stage, so a CPU profile of a
// crawl splits by stage (`go tool pprof -tags`, `trawler bench`).
func stage(ctx context.Context, name string, f func(context.Context)) {
	pprof.Do(ctx, pprof.Labels("stage", name), f)
}

// crawl works on one claimed URI and settles it: a URI over quota finishes
// with -5003; a transient failure with retries left goes back to the
// frontier without a crawled event; anything else is recorded and gets
// exactly one crawled event before its claim is completed.
func (w *Worker) crawl(ctx context.Context, c *frontier.Claim, thread int) {
	t := &task{c: c, l: c.Launch, thread: thread}
	d, eff, err := w.chain.judge(ctx, t.l)
	if err != nil {
		eff = w.chain.settings(t.l.URL)
	}
	t.scope, t.eff, t.pol = d, eff, w.chain.policy(eff)
	switch w.run(ctx, t) {
	case interrupted:
		w.release(ctx, c, "interrupted")
		return
	case unrecorded:
		w.deferUnrecorded(ctx, t)
		return
	}
	if t.dec.Retry {
		if !t.dec.Defer { // a deferral is not a failed attempt
			w.metrics.retries.Inc()
		}
		w.complete(ctx, t)
		return
	}
	if a := t.dec.Annotation(); a != "" {
		t.out.notes = append(t.out.notes, a)
	}
	t.out.notes = append(t.out.notes, t.notes...)
	t.out.notes = append(t.out.notes, d.Annotations...)
	t.out.scopeDecision = d.String()
	s := proceed
	stage(ctx, "publish", func(ctx context.Context) { s = w.publish(ctx, t.l, thread, t.out) })
	switch s {
	case interrupted:
		w.release(ctx, c, "publish interrupted")
	case unrecorded:
		w.deferUnrecorded(ctx, t)
	default:
		w.complete(ctx, t)
	}
}

// run takes t through the chain until it is finished or interrupted.
func (w *Worker) run(ctx context.Context, t *task) step {
	if status, note := w.preselect(t.eff, t.scope, t.l.URL); status != 0 {
		t.finish(&outcome{status: status, notes: notes(note)}, true)
		return finished
	}
	if q, over := t.pol.OverQuota(t.c.Usage); over {
		t.finish(&outcome{status: frontier.StatusBlockedByQuota, notes: []string{"Q:" + q}}, true)
		return finished
	}
	var s step
	stage(ctx, "precondition", func(ctx context.Context) { s = w.preconditions(ctx, t) })
	if s != proceed {
		return s
	}
	if w.wantsRender(t) {
		stage(ctx, "handoff", func(ctx context.Context) { s = w.handOff(ctx, t) })
		if s != proceed {
			return s
		}
	}
	var resp *fetch.Response
	stage(ctx, "fetch", func(ctx context.Context) { resp, s = w.fetch(ctx, t) })
	if s != proceed {
		return s
	}
	t.dec = t.pol.Decide(t.out.status, t.c.Retries)
	if t.final {
		t.dec = frontier.Decision{Status: t.out.status, Attempts: t.c.Retries + 1}
		t.decided = true
	}
	if resp != nil && w.challenged(t, resp) {
		ra, _ := frontier.RetryAfter(resp.Header.Get("Retry-After"), time.Now(), seconds(t.pol.Politeness.MaxRetryAfterSeconds))
		t.dec, t.decided = t.pol.DecideThrottle(t.c, t.out.status, ra, time.Now()), true
		t.dec.ThrottleReason = frontier.BackOffChallenge
	} else if resp != nil && frontier.Throttled(t.out.status) {
		// The server asks the crawl to slow down: the host backs off and
		// the URI is deferred. Nothing is written or published for this
		// attempt (an archive of 429 pages helps nobody), as for a retry.
		now := time.Now()
		ra, _ := frontier.RetryAfter(resp.Header.Get("Retry-After"), now, seconds(t.pol.Politeness.MaxRetryAfterSeconds))
		t.dec, t.decided = t.pol.DecideThrottle(t.c, t.out.status, ra, now), true
	}
	switch {
	case t.dec.Retry:
		closeResp(resp)
		return finished
	case t.dec.Status != t.out.status: // retries exhausted: -8, nothing recorded
		closeResp(resp)
		t.out.status, t.out.mime = t.dec.Status, "unknown"
		return finished
	case resp == nil:
		return finished
	}
	defer resp.Close()
	return w.record(ctx, t, resp)
}

// finish ends t with out at the first attempt's decision; notFetched says
// the host was not contacted (no politeness delay follows).
func (t *task) finish(out *outcome, notFetched bool) {
	if out.mime == "" {
		out.mime = "unknown"
	}
	if out.start.IsZero() {
		out.start = time.Now()
	}
	out.notFetched = notFetched
	t.out = out
	t.dec = frontier.Decision{Status: out.status, Attempts: t.c.Retries + 1}
}

// deferAfter puts t back at the head of its queue, uncharged, after a
// prerequisite fetched through the host's queue (pre, the prerequisite's
// outcome): the host waits the politeness delay that fetch earns, as
// Heritrix's frontier snoozes the queue after the prerequisite it put
// ahead of the URI, and t comes back when it is over (Heritrix's
// S_DEFERRED). No event is published and nothing logged for t now.
func (t *task) deferAfter(pre *outcome) {
	t.finish(&outcome{status: frontier.StatusDeferred, size: pre.size, start: pre.start, duration: pre.duration}, false)
	t.dec.Retry, t.dec.Defer, t.decided = true, true, true
}

// prerequisiteFailed ends t with a failed prerequisite's status, retried
// while the policy allows.
func (t *task) prerequisiteFailed(status int, retriable bool, notFetched bool) {
	t.finish(&outcome{status: status}, notFetched)
	t.dec = t.pol.DecidePrerequisite(status, t.c.Retries, retriable)
	t.decided = true
}

func notes(n string) []string {
	if n == "" {
		return nil
	}
	return []string{n}
}

// fetch gets the URI, with conditional-request validators from the
// recently-crawled DB when the profile asks for them.
func (w *Worker) fetch(ctx context.Context, t *task) (*fetch.Response, step) {
	t.prior = w.prior(ctx, t.l.URL)
	hdr := http.Header{}
	for k, v := range t.l.RequestHeaders() {
		hdr.Set(k, v)
	}
	conditional(hdr, t.eff, t.prior, t.l.ForceFetch || t.prereq)
	pf := t.eff.Profile.Fetch
	req := fetch.Request{URL: t.l.URL, Header: hdr, Method: t.method, Body: t.body, Limits: &fetch.Limits{
		MaxLengthBytes: pf.MaxLengthBytes, ReadTimeout: seconds(int64(pf.ReadTimeoutSeconds)),
		TotalTimeout: seconds(int64(pf.TotalTimeoutSeconds)),
	}, AcceptCompression: pf.AcceptCompression}
	// Heritrix sends the via as Referer, but not for a seed (a launched
	// seed is its own parent here: no via) nor a prerequisite (via
	// context PREREQ_MISC).
	if via := t.l.ParentURL; pf.SendReferer && !t.prereq && t.l.Hop != "P" && !(t.l.IsSeed && via == t.l.URL) {
		req.Referer = fetch.RefererFor(via, t.l.URL)
	}
	if t.method == "POST" {
		hdr.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if !t.eff.Profile.Fetch.IgnoreCookies {
		req.Jar = w.jar
	}
	t0 := time.Now()
	resp, err := w.fetcher.Fetch(ctx, req)
	if err != nil {
		var fe *fetch.Error
		if !errors.As(err, &fe) {
			if ctx.Err() != nil {
				w.log.Warn("fetch interrupted; URI returned to the frontier", "url", t.l.URL, "err", err)
				return nil, interrupted
			}
			// The fetcher's own failure (its spool, its proxy setting),
			// perhaps after the host answered: as a failed write.
			t.out = &outcome{status: frontier.StatusDeferred, mime: "unknown", start: t0, duration: time.Since(t0)}
			return nil, w.writeFailed(ctx, writeSpool, t.l.URL, err)
		}
		w.log.Debug("fetch failed", "url", t.l.URL, "status", fe.Status, "err", err)
		w.noteRefusal(t.l.URL, err)
		t.final = !fe.Retriable
		t.out = &outcome{status: fe.Status, mime: "unknown", start: t0, duration: time.Since(t0)}
		return nil, proceed
	}
	t.out = &outcome{
		status: resp.StatusCode, size: resp.Raw.Size(), length: resp.Payload.Size(),
		http: true, bodySize: messageBodySize(resp),
		digest: resp.PayloadDigest, mime: resp.MIME, notes: resp.Annotations, start: resp.Start, duration: resp.Duration,
	}
	return resp, proceed
}

// conditional adds If-None-Match and If-Modified-Since from the last
// capture of the URL, as Heritrix's FetchHTTP does with its history. A
// forced fetch (a relaunch) asks for the whole document. Only a URL with a
// known full record is asked: a 304 is written as a revisit of that
// record, and without one it could only be archived as an empty 304.
func conditional(hdr http.Header, eff *sheets.Effective, prior recentdb.Entry, forced bool) {
	c := prior.Capture
	if c == nil || forced || c.Status < 200 || c.Status >= 400 || prior.Original == nil || prior.Original.Digest == "" {
		return
	}
	// Past the dedup horizon the page is fetched whole, so that the
	// period's WARCs hold it.
	if !eff.Profile.Dedup.SamePeriod(prior.Original.Time, time.Now()) {
		return
	}
	if eff.Profile.Fetch.SendIfNoneMatch && c.ETag != "" {
		hdr.Set("If-None-Match", c.ETag)
	}
	if eff.Profile.Fetch.SendIfModifiedSince && c.LastModified != "" {
		hdr.Set("If-Modified-Since", c.LastModified)
	}
}

// prior reads the recently-crawled DB's entry for url; an unreadable DB
// gives an empty entry (no conditional request, a full record written).
func (w *Worker) prior(ctx context.Context, url string) recentdb.Entry {
	es, err := w.lookups.Do(ctx, []string{url})
	if err != nil || len(es) == 0 {
		if err != nil {
			w.log.Warn("recently-crawled lookup; fetching without history", "url", url, "err", err)
		}
		return recentdb.Entry{}
	}
	return es[0]
}
