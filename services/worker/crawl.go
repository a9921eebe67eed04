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
	status   int
	size     int64
	length   int64
	digest   string
	mime     string
	notes    []string
	loc      *warcwriter.Location
	inscope  []*kgo.Record
	start    time.Time // fetch start: the WARC-Date and the CDX timestamp
	duration time.Duration
}

// crawl fetches one claimed URI and finishes it: exactly one crawled event,
// then the host is released with its politeness delay.
func (w *Worker) crawl(ctx context.Context, c *frontier.Claim, thread int) {
	l := c.Launch
	stopRenew := w.renewWhileBusy(ctx, c)
	out := w.fetchAndRecord(ctx, l)
	stopRenew()
	if out == nil {
		// Unfinished (interrupted, or the capture could not be recorded):
		// back to its queue rather than lost.
		if err := w.front.Release(context.WithoutCancel(ctx), c); err != nil {
			w.log.Error("release unfinished URI; its lease will expire", "url", l.URL, "err", err)
		}
		return
	}
	ev := w.event(l, thread, out)
	b, err := jsonMarshal(ev)
	if err != nil {
		w.log.Error("encode crawled event", "url", l.URL, "err", err)
		return
	}
	key, _ := hostkey.ForURL(l.URL)
	recs := append(out.inscope, &kgo.Record{Topic: w.cfg.CrawledTopic(), Key: []byte(key), Value: b})
	if err := w.producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		w.log.Error("publish crawled event; URI stays leased and will be retried", "url", l.URL, "err", err)
		return
	}
	if err := w.front.Complete(ctx, c, time.Now().Add(w.politeness(out.duration))); err != nil {
		w.log.Error("complete", "url", l.URL, "err", err)
	}
	w.metrics.observe(out)
	if err := w.stats.Record(ctx, out.status, out.size); err != nil {
		w.log.Warn("record stats", "err", err)
	}
}

// renewWhileBusy keeps the host's lease alive during long fetches.
func (w *Worker) renewWhileBusy(ctx context.Context, c *frontier.Claim) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(w.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := w.front.Renew(ctx, c, w.cfg.Lease); err != nil {
					w.log.Warn("renew lease", "host", c.Host, "err", err)
				}
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// politeness is the delay before the host may be fetched again:
// delayFactor × fetch duration clamped to [minDelayMs, maxDelayMs].
func (w *Worker) politeness(d time.Duration) time.Duration {
	p := w.prof.Politeness
	delay := time.Duration(float64(d) * p.DelayFactor)
	return min(max(delay, time.Duration(p.MinDelayMs)*time.Millisecond), time.Duration(p.MaxDelayMs)*time.Millisecond)
}

func (w *Worker) fetchAndRecord(ctx context.Context, l messages.Launch) *outcome {
	hdr := http.Header{}
	for k, v := range l.RequestHeaders() {
		hdr.Set(k, v)
	}
	t0 := time.Now()
	resp, err := w.fetcher.Fetch(ctx, fetch.Request{URL: l.URL, Header: hdr})
	if err != nil {
		var fe *fetch.Error
		if !errors.As(err, &fe) {
			// Not the site's doing (shutdown, local disk): the URI is
			// unfinished and goes back to its queue uncharged.
			w.log.Warn("fetch interrupted; URI returned to the frontier", "url", l.URL, "err", err)
			return nil
		}
		w.log.Debug("fetch failed", "url", l.URL, "status", fe.Status, "err", err)
		return &outcome{status: fe.Status, mime: "unknown", start: t0, duration: time.Since(t0)}
	}
	defer resp.Close()
	out := &outcome{
		status: resp.StatusCode, size: resp.Raw.Size(), length: resp.Payload.Size(),
		digest: resp.PayloadDigest, mime: resp.MIME, notes: resp.Annotations, start: resp.Start, duration: resp.Duration,
	}
	links := w.extract(l, resp)
	outlinks := make([]warcwriter.Outlink, len(links))
	for i, k := range links {
		outlinks[i] = warcwriter.Outlink{URL: k.URL, Hop: string(rune(k.Hop)), Context: k.Context}
	}
	ip := ""
	if resp.IP != nil {
		ip = resp.IP.String()
	}
	loc, err := w.warc.WriteCapture(ctx, warcwriter.Capture{
		URL: l.URL, Date: resp.Start, IP: ip, Request: resp.RequestBytes,
		Response: resp.Raw.NewReader(), ResponseLength: resp.Raw.Size(),
		PayloadDigest: resp.PayloadDigest, BlockDigest: resp.BlockDigest,
		Metadata: &warcwriter.Metadata{
			Via: l.ParentURL, HopsFromSeed: l.HopPath(), SourceTag: l.Source(),
			FetchTimeMs: resp.Duration.Milliseconds(), Outlinks: outlinks,
		},
	})
	if err != nil {
		w.log.Error("write WARC records", "url", l.URL, "err", err)
		w.metrics.warcErrors.Inc()
		return nil
	}
	out.loc = &loc
	now := time.Now()
	children := make([]messages.Launch, 0, len(links))
	for _, k := range links {
		children = append(children, child(l, k.URL, string(rune(k.Hop)), now))
	}
	if err := w.scope.Refresh(ctx); err != nil {
		w.log.Warn("scope refresh", "err", err)
	}
	recs, err := w.admit(ctx, children)
	if err != nil {
		w.log.Error("admit outlinks", "url", l.URL, "err", err)
		return nil
	}
	out.inscope = recs
	return out
}

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
			"scopeDecision": w.scope.Decide(l.URL, l.HopPath(), l.IsSeed).Rule,
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
	return ev
}
