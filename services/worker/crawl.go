package worker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/sheets"
	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// outcome is what a fetch came to, before it is published.
type outcome struct {
	status int
	// size is the bytes recorded (HTTP: status line, headers and body as
	// received; dns: the record): Heritrix's getContentSize, the crawled
	// event's size as UKWA's crawl log feed sends it.
	size int64
	// length is the entity body after transfer decoding (the payload).
	length int64
	// http marks an HTTP response (Heritrix's isHttpTransaction with a
	// recorded response); bodySize is then its message body as received,
	// chunk framing included (Heritrix's getContentLength, the
	// Recorder's bytes after the headers): crawl.log's size column and
	// the event's content_length.
	http       bool
	bodySize   int64
	digest     string
	mime       string
	notes      []string
	loc        *warcwriter.Location
	inscope    []*kgo.Record
	start      time.Time // fetch start: the WARC-Date and the CDX timestamp
	duration   time.Duration
	notFetched bool // the host was not contacted
	// scopeDecision is the scope's answer at fetch time, for extra_info.
	scopeDecision string
	// etag and lastModified are the response's validators, passed on in
	// extra_info for the recently-crawled DB's conditional requests.
	etag, lastModified string
	// location is a 3xx response's Location, resolved against the URL, for
	// the live index's redirect field (extra_info, cdx.ExtraLocation).
	location string
	// original is the full record a 304 confirmed, for the event's
	// extra_info (cdx.ExtraOriginal): the 304's index line points there.
	original *cdx.Original
	// adaptiveInterval is the URL's next adaptive recrawl interval, for
	// extra_info (recentdb.ExtraAdaptiveInterval); zero when not adaptive.
	adaptiveInterval time.Duration
}

// Heritrix statuses the preselector gives.
const (
	statusOutOfScope = -5000
	statusBlocked    = -5001
)

// preselect is the first step of the fetch chain: a URI under a blockAll
// sheet finishes with -5001, and one the excluded-SURTs file now covers with
// -5000, so a site blocked after its URIs were queued stops being fetched
// at once.
func (w *Worker) preselect(eff *sheets.Effective, d scope.Decision, url string) (status int, note string) {
	if eff.Profile.Preselector.BlockAll {
		return statusBlocked, "blockAll"
	}
	if eff.Profile.Preselector.RecheckScope && w.chain.engine.Excluded(surt.Heritrix(url)) {
		return statusOutOfScope, ""
	}
	return 0, ""
}

func closeResp(r *fetch.Response) {
	if r != nil {
		r.Close()
	}
}

// publish journals the admitted outlinks, then the crawled event: an event
// is only ever published once the URIs it discovered are in the journal,
// so a rebuild after a crash loses none of them. It returns proceed once
// the event is out, unrecorded when it could not be (the URI will be
// crawled again), interrupted on shutdown; a URI published in full tells
// the write guard that writes work.
func (w *Worker) publish(ctx context.Context, l messages.Launch, thread int, out *outcome) step {
	ev := w.event(l, thread, out)
	b, err := messages.AppendCrawled(nil, ev)
	if err != nil {
		return w.writeFailed(ctx, writePublish, l.URL, fmt.Errorf("encode crawled event: %w", err))
	}
	if len(out.inscope) > 0 {
		if err := w.producer.ProduceSync(ctx, out.inscope...).FirstErr(); err != nil {
			return w.writeFailed(ctx, writePublish, l.URL, fmt.Errorf("publish inscope journal: %w", err))
		}
	}
	if out.loc != nil {
		// A capture's line is written before its event is published: a
		// capture whose event never is (a crash, the broker down, no
		// line written) is crawled again, and each capture in the WARCs
		// has its own line.
		if err := w.logCrawl(ev, out); err != nil {
			return w.writeFailed(ctx, writeCrawlLog, l.URL, err)
		}
	}
	rec := &kgo.Record{Topic: w.cfg.CrawledTopic(), Key: []byte(eventKey(l.URL)), Value: b}
	if err := w.producer.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return w.writeFailed(ctx, writePublish, l.URL, fmt.Errorf("publish crawled event: %w", err))
	}
	if out.loc == nil {
		// Nothing captured: one line per finished URI. The event is out,
		// so the URI is finished; only its line is lost.
		if err := w.logCrawl(ev, out); err != nil {
			w.writes.fail(writeCrawlLog, l.URL, err)
			return proceed
		}
	}
	w.writes.ok()
	return proceed
}

// eventKey is the crawled event's partition key: the host key
// (ARCHITECTURE.md 3), so one host's events stay in order and on one
// partition; a dns: URI gets the key of the host it looked up, like the
// host's other events.
func eventKey(url string) string {
	key, _ := hostkey.ForURL(url)
	return key
}

// logCrawl writes the crawl.log line of an event. The size column is
// Heritrix's: an HTTP response's message body as received, otherwise the
// bytes recorded (a dns: record), "-" when nothing was.
func (w *Worker) logCrawl(ev messages.Crawled, out *outcome) error {
	if w.clog == nil {
		return nil
	}
	e := crawllog.Entry{
		Logged: crawllog.EventTime(ev), Status: ev.StatusCode, Size: out.size, URL: ev.URL, HopPath: ev.HopPath, Via: ev.Via,
		MIME: ev.Mimetype, Thread: ev.Thread, Duration: out.duration, Digest: out.digest, Source: ev.Seed,
	}
	if out.http {
		e.Size, e.HTTP = out.bodySize, true
	}
	if !out.notFetched {
		e.FetchStart = out.start
	}
	if ev.Annotations != "" {
		// The event joins them with ','; the line escapes what would
		// add columns in each one.
		e.Annotations = strings.Split(ev.Annotations, ",")
	}
	if err := w.clog.Write(e); err != nil {
		return fmt.Errorf("write crawl.log: %w", err)
	}
	return nil
}

// complete settles the claim with its politeness delay (through the
// Batcher, so concurrent threads share one round trip).
func (w *Worker) complete(ctx context.Context, t *task) {
	defer w.done(t.c)
	o := frontier.Outcome{
		Claim: t.c, Status: t.out.status, Bytes: t.out.size, Duration: t.out.duration, NotFetched: t.out.notFetched,
		Policy: t.pol, CrawlDelay: t.crawlDelay, CrawlDelayKnown: t.crawlDelayKnown,
		Revisit: isRevisit(t.out.notes),
	}
	if t.decided {
		d := t.dec
		o.Decision = &d
	}
	var res []bool
	var err error
	stage(ctx, "frontier", func(ctx context.Context) { res, err = w.batch.Complete(ctx, []frontier.Outcome{o}) })
	if err != nil {
		w.log.Error("complete; the lease will expire and the URI be crawled again", "url", t.l.URL, "err", err)
		return
	}
	if !res[0] {
		w.log.Warn("lease had expired before completion; the URI was returned to the frontier", "url", t.l.URL)
	}
	if !t.dec.Retry {
		w.metrics.observe(t.out)
	}
}

// release returns an unfinished claim to its queue, uncharged.
func (w *Worker) release(ctx context.Context, c *frontier.Claim, why string) {
	defer w.done(c)
	if err := w.front.Release(context.WithoutCancel(ctx), []*frontier.Claim{c}); err != nil {
		w.log.Error("release unfinished URI; its lease will expire", "url", c.Launch.URL, "why", why, "err", err)
	}
}

func (w *Worker) event(l messages.Launch, thread int, o *outcome) messages.Crawled {
	host, _ := hostkey.Authority(l.URL)
	via := l.ParentURL
	if l.IsSeed && via == l.URL {
		via = ""
	}
	notes := append([]string{}, o.notes...)
	notes = append(notes, l.ParentURLMetadata.HeritableData.Annotations...)
	ev := messages.Crawled{
		Timestamp: messages.FormatTimestamp(time.Now()), URL: l.URL, StatusCode: o.status,
		Mimetype: o.mime, HopPath: l.HopPath(), Via: via, Seed: l.Source(), Host: host, Thread: thread,
		StartTimePlusDuration: messages.FormatStartPlusDuration(o.start, o.duration),
		Annotations:           strings.Join(notes, ","), CrawlName: w.prof.Crawl.Name,
		ExtraInfo: map[string]any{
			"scopeDecision": o.scopeDecision,
			"warcPrefix":    w.prof.WARC.Prefix,
		},
	}
	if s := w.cfg.stream(); s != "" {
		ev.ExtraInfo[recentdb.ExtraStream] = s
	}
	if id := l.LaunchID(); id != "" {
		ev.ExtraInfo[messages.ExtraLaunchID] = id
	}
	if o.size > 0 {
		ev.Size = &o.size
	}
	if o.loc != nil {
		if o.http { // as UKWA's feed: null for a dns: record
			ev.ContentLength = &o.bodySize
		}
		ev.WarcFilename, ev.WarcOffset, ev.WarcLength = &o.loc.Filename, &o.loc.Offset, &o.loc.Length
		ev.WarcID = o.loc.RecordID
	}
	if o.digest != "" {
		ev.ContentDigest = &o.digest
	}
	if o.etag != "" {
		ev.ExtraInfo[recentdb.ExtraETag] = o.etag
	}
	if o.lastModified != "" {
		ev.ExtraInfo[recentdb.ExtraLastModified] = o.lastModified
	}
	if o.location != "" {
		ev.ExtraInfo[cdx.ExtraLocation] = o.location
	}
	if o.adaptiveInterval > 0 {
		ev.ExtraInfo[recentdb.ExtraAdaptiveInterval] = int64(o.adaptiveInterval / time.Second)
	}
	if o.original != nil {
		ev.ExtraInfo[cdx.ExtraOriginal] = o.original.Extra()
	}
	return ev
}
