package worker

import (
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/extract"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/sheets"
	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/uri"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// defaultResolver is the system resolver.
type defaultResolver struct{}

func (defaultResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	return net.DefaultResolver.LookupIPAddr(ctx, host)
}

// outcome is what a fetch came to, before it is published.
type outcome struct {
	status     int
	size       int64
	length     int64
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

// crawl works on one claimed URI and settles it: a URI over quota finishes
// with -5003; a transient failure with retries left goes back to the
// frontier without a crawled event; anything else is recorded and gets
// exactly one crawled event before its claim is completed.
func (w *Worker) crawl(ctx context.Context, c *frontier.Claim, thread int) {
	l := c.Launch
	d, eff, err := w.chain.judge(ctx, l)
	if err != nil {
		eff = w.chain.settings(l.URL)
	}
	pol := w.chain.policy(eff)
	var out *outcome
	var dec frontier.Decision
	if status, note := w.preselect(eff, d, l.URL); status != 0 {
		out = &outcome{status: status, mime: "unknown", start: time.Now(), notFetched: true}
		if note != "" {
			out.notes = []string{note}
		}
		dec = frontier.Decision{Status: status, Attempts: c.Retries + 1}
	} else if q, over := pol.OverQuota(c.Usage); over {
		out = &outcome{status: frontier.StatusBlockedByQuota, mime: "unknown", notes: []string{"Q:" + q}, start: time.Now(), notFetched: true}
		dec = frontier.Decision{Status: out.status, Attempts: c.Retries + 1}
	} else {
		var resp *fetch.Response
		resp, out = w.fetch(ctx, l)
		if out == nil {
			w.release(ctx, c, "fetch interrupted")
			return
		}
		dec = pol.Decide(out.status, c.Retries)
		if dec.Retry {
			closeResp(resp)
			w.metrics.retries.Inc()
			w.complete(ctx, c, pol, out, dec)
			return
		}
		if dec.Status != out.status { // retries exhausted: -8, nothing recorded
			closeResp(resp)
			out.status, out.mime = dec.Status, "unknown"
		} else if resp != nil {
			ok := w.record(ctx, c, resp, out)
			resp.Close()
			if !ok {
				w.release(ctx, c, "capture not recorded")
				return
			}
		}
	}
	if a := dec.Annotation(); a != "" {
		out.notes = append(out.notes, a)
	}
	out.notes = append(out.notes, d.Annotations...)
	out.scopeDecision = d.String()
	if !w.publish(ctx, l, thread, out) {
		w.release(ctx, c, "publish failed")
		return
	}
	w.complete(ctx, c, pol, out, dec)
}

func closeResp(r *fetch.Response) {
	if r != nil {
		r.Close()
	}
}

// publish journals the admitted outlinks, then the crawled event: an event
// is only ever published once the URIs it discovered are in the journal,
// so a rebuild after a crash loses none of them.
func (w *Worker) publish(ctx context.Context, l messages.Launch, thread int, out *outcome) bool {
	ev := w.event(l, thread, out)
	b, err := jsonMarshal(ev)
	if err != nil {
		w.log.Error("encode crawled event", "url", l.URL, "err", err)
		return false
	}
	if len(out.inscope) > 0 {
		if err := w.producer.ProduceSync(ctx, out.inscope...).FirstErr(); err != nil {
			w.log.Error("publish inscope journal; the URI will be crawled again", "url", l.URL, "err", err)
			return false
		}
	}
	key, _ := hostkey.ForURL(l.URL)
	rec := &kgo.Record{Topic: w.cfg.CrawledTopic(), Key: []byte(key), Value: b}
	if err := w.producer.ProduceSync(ctx, rec).FirstErr(); err != nil {
		w.log.Error("publish crawled event; the URI will be crawled again", "url", l.URL, "err", err)
		return false
	}
	return true
}

// complete settles the claim with its politeness delay (through the
// Batcher, so concurrent threads share one round trip).
func (w *Worker) complete(ctx context.Context, c *frontier.Claim, pol frontier.Policy, out *outcome, dec frontier.Decision) {
	defer w.done(c)
	res, err := w.batch.Complete(ctx, []frontier.Outcome{{
		Claim: c, Status: out.status, Bytes: out.size, Duration: out.duration, NotFetched: out.notFetched, Policy: pol,
	}})
	if err != nil {
		w.log.Error("complete; the lease will expire and the URI be crawled again", "url", c.Launch.URL, "err", err)
		return
	}
	if !res[0] {
		w.log.Warn("lease had expired before completion; the URI was returned to the frontier", "url", c.Launch.URL)
	}
	if !dec.Retry {
		w.metrics.observe(out)
	}
}

// release returns an unfinished claim to its queue, uncharged.
func (w *Worker) release(ctx context.Context, c *frontier.Claim, why string) {
	defer w.done(c)
	if err := w.front.Release(context.WithoutCancel(ctx), []*frontier.Claim{c}); err != nil {
		w.log.Error("release unfinished URI; its lease will expire", "url", c.Launch.URL, "why", why, "err", err)
	}
}

// fetch gets the URI. A nil outcome means the work was interrupted by
// something other than the site (shutdown, local disk): the URI goes back
// uncharged. A failed fetch has an outcome with its status and no
// response.
func (w *Worker) fetch(ctx context.Context, l messages.Launch) (*fetch.Response, *outcome) {
	hdr := http.Header{}
	for k, v := range l.RequestHeaders() {
		hdr.Set(k, v)
	}
	t0 := time.Now()
	resp, err := w.fetcher.Fetch(ctx, fetch.Request{URL: l.URL, Header: hdr})
	if err != nil {
		var fe *fetch.Error
		if !errors.As(err, &fe) {
			w.log.Warn("fetch interrupted; URI returned to the frontier", "url", l.URL, "err", err)
			return nil, nil
		}
		w.log.Debug("fetch failed", "url", l.URL, "status", fe.Status, "err", err)
		return nil, &outcome{status: fe.Status, mime: "unknown", start: t0, duration: time.Since(t0)}
	}
	return resp, &outcome{
		status: resp.StatusCode, size: resp.Raw.Size(), length: resp.Payload.Size(),
		digest: resp.PayloadDigest, mime: resp.MIME, notes: resp.Annotations, start: resp.Start, duration: resp.Duration,
	}
}

// record writes the capture to WARC, extracts its links and admits them;
// false means it could not be recorded and the URI must be crawled again.
func (w *Worker) record(ctx context.Context, c *frontier.Claim, resp *fetch.Response, out *outcome) bool {
	l := c.Launch
	links := w.extract(l, resp)
	outlinks := make([]warcwriter.Outlink, len(links))
	for i, k := range links {
		outlinks[i] = warcwriter.Outlink{URL: k.URL, Hop: string(rune(k.Hop)), Context: k.Context}
	}
	ip := ""
	if resp.IP != nil {
		ip = resp.IP.String()
	}
	capt := warcwriter.Capture{
		URL: l.URL, Date: resp.Start, IP: ip, Request: resp.RequestBytes,
		Response: resp.Raw.NewReader(), ResponseLength: resp.Raw.Size(),
		PayloadDigest: resp.PayloadDigest, BlockDigest: resp.BlockDigest,
		Metadata: &warcwriter.Metadata{
			Via: l.ParentURL, HopsFromSeed: l.HopPath(), SourceTag: l.Source(),
			FetchTimeMs: resp.Duration.Milliseconds(), Outlinks: outlinks,
		},
	}
	if rv := w.revisitOf(ctx, l.URL, resp); rv != nil {
		capt.Revisit = rv
		out.notes = append(out.notes, "duplicate:digest")
	}
	out.etag, out.lastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	loc, err := w.warc.WriteCapture(ctx, capt)
	if err != nil {
		w.log.Error("write WARC records", "url", l.URL, "err", err)
		w.metrics.warcErrors.Inc()
		return false
	}
	out.loc = &loc
	now := time.Now()
	children := make([]messages.Launch, 0, len(links))
	for _, k := range links {
		children = append(children, child(l, k.URL, string(rune(k.Hop)), now))
	}
	w.refreshScope(ctx, l.IsSeed)
	recs, err := w.admit(ctx, children, false, c.Interrupted)
	if err != nil {
		w.log.Error("admit outlinks", "url", l.URL, "err", err)
		return false
	}
	out.inscope = recs
	return true
}

// refreshScope reloads the shared seed prefixes before outlinks are
// judged: at most once a second (it costs a Redis round trip), but always
// when crawling a seed, whose prefix another worker may have added a
// moment ago. Threads wait for a refresh in progress rather than judge
// with a set not yet loaded.
func (w *Worker) refreshScope(ctx context.Context, seed bool) { w.chain.refresh(ctx, seed) }

// extract finds links in the response headers and, for HTML and CSS, in the
// body. Extraction problems are logged, never fatal: the capture stands.
func (w *Worker) extract(l messages.Launch, resp *fetch.Response) []extract.Link {
	opts := extract.Options{Resolve: uri.Resolve}
	links := extract.Headers(resp.Header, l.URL, opts)
	isHTML, isCSS := strings.Contains(resp.MIME, "html"), resp.MIME == "text/css"
	if !isHTML && !isCSS {
		return links
	}
	body, err := decodedBody(resp)
	if err != nil {
		w.log.Debug("decode body for extraction", "url", l.URL, "err", err)
		return links
	}
	defer body.Close()
	var found []extract.Link
	if isHTML {
		found, _, err = extract.HTML(body, l.URL, extract.HTMLOptions{Options: opts})
	} else {
		found, err = extract.CSS(body, l.URL, opts)
	}
	if err != nil {
		w.log.Debug("extract links", "url", l.URL, "err", err)
	}
	return append(links, found...)
}

// decodedBody undoes gzip or deflate content coding for the extractors;
// the extractors' own byte limit bounds a decompression bomb.
func decodedBody(resp *fetch.Response) (io.ReadCloser, error) {
	r := resp.Payload.NewReader()
	switch strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))) {
	case "gzip", "x-gzip":
		return gzip.NewReader(r)
	case "deflate":
		return flate.NewReader(r), nil
	default:
		return io.NopCloser(r), nil
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
	if o.size > 0 {
		ev.Size = &o.size
	}
	if o.loc != nil {
		ev.ContentLength = &o.length
		ev.WarcFilename, ev.WarcOffset, ev.WarcLength = &o.loc.Filename, &o.loc.Offset, &o.loc.Length
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
	return ev
}
