package renderer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/clamav"
	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// Annotations of revisits and scans, as the worker writes them.
const (
	annotationDuplicate = "duplicate:digest"
	annotationUnscanned = "clamav:unscanned"
	annotationPartial   = "clamav:partial"
)

// captured is one recorded exchange; resp's spool is the caller's to close.
type captured struct {
	resp     *fetch.Response
	infected bool
}

// record is what a capture's crawled event and crawl.log line say.
type record struct {
	url, hopPath, via string
	status            int
	mime              string
	size, bodySize    int64
	digest            string
	notes             []string
	start             time.Time
	duration          time.Duration
	loc               *warcwriter.Location
	warcType          string
	extra             map[string]any
}

// capture fetches req for session s, scans it, writes it (a revisit when
// its payload is the last capture's) and publishes its event. A failed
// fetch is published too, with the fetcher's Heritrix status, and returned.
func (r *Renderer) capture(ctx context.Context, s *session, u string, h hop, req fetch.Request) (*captured, error) {
	t0 := time.Now()
	resp, err := r.fetcher.Fetch(ctx, req)
	if err != nil {
		var fe *fetch.Error
		if errors.As(err, &fe) && !errors.Is(err, fetch.ErrAddressRefused) {
			rec := record{url: u, hopPath: h.path, via: h.via, status: fe.Status, mime: "unknown", start: t0, duration: time.Since(t0)}
			r.publish(ctx, s, rec)
		}
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	// What was fetched is recorded whole even if the page's render ends
	// now: a capture in the WARCs always gets its crawl.log line and event.
	ctx = context.WithoutCancel(ctx)
	rec := record{url: u, hopPath: h.path, via: h.via, status: resp.StatusCode, mime: resp.MIME,
		size: resp.Raw.Size(), bodySize: bodySize(resp), digest: resp.PayloadDigest,
		notes: append([]string(nil), resp.Annotations...), start: resp.Start, duration: resp.Duration}
	if req.Method != "" && req.Method != http.MethodGet {
		rec.extra = map[string]any{"http_method": req.Method}
	}
	infected, err := r.scan(ctx, resp, &rec)
	if err != nil {
		resp.Close()
		return nil, err
	}
	capt := warcwriter.Capture{
		URL: u, Date: resp.Start, Request: resp.RequestBytes, Response: resp.Raw.NewReader(),
		ResponseLength: resp.Raw.Size(), PayloadDigest: resp.PayloadDigest, Protocols: resp.Protocols,
		Metadata: &warcwriter.Metadata{Via: h.via, HopsFromSeed: h.path, SourceTag: s.l.Source(),
			FetchTimeMs: resp.Duration.Milliseconds()},
	}
	if resp.IP != nil {
		capt.IP = resp.IP.String()
	}
	if rv := r.revisitOf(ctx, u, req.Method, resp); rv != nil && !infected {
		capt.Revisit = rv
		rec.notes = append(rec.notes, annotationDuplicate)
	}
	w := r.warc
	if infected {
		w = r.viral
	}
	loc, err := w.WriteCapture(ctx, capt)
	if err != nil {
		resp.Close()
		r.metrics.warcErrors.Inc()
		return nil, fmt.Errorf("write capture %s: %w", u, err)
	}
	rec.loc = &loc
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		rec.setExtra(cdx.ExtraLocation, cdx.AbsoluteRedirect(u, resp.Header.Get("Location")))
	}
	rec.setExtra(recentdb.ExtraETag, resp.Header.Get("ETag"))
	rec.setExtra(recentdb.ExtraLastModified, resp.Header.Get("Last-Modified"))
	r.publish(ctx, s, rec)
	return &captured{resp: resp, infected: infected}, nil
}

func (rec *record) setExtra(k, v string) {
	if v == "" {
		return
	}
	if rec.extra == nil {
		rec.extra = map[string]any{}
	}
	rec.extra[k] = v
}

// scan has clamd scan a 2xx body. When clamd cannot be reached the
// profile decides, as in the worker: write it unscanned and say so, or
// fail the request (the page is rendered again later).
func (r *Renderer) scan(ctx context.Context, resp *fetch.Response, rec *record) (infected bool, err error) {
	if r.scanner == nil || resp.StatusCode < 200 || resp.StatusCode >= 300 || resp.Payload.Size() == 0 {
		return false, nil
	}
	res, err := r.scanner.Scan(ctx, func() (io.ReadCloser, error) { return io.NopCloser(resp.Payload.NewReader()), nil })
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, clamav.ErrUnavailable) && r.prof.ClamAV.OnUnavailable == profile.ClamAVWriteUnscanned {
			rec.notes = append(rec.notes, annotationUnscanned)
			return false, nil
		}
		return false, fmt.Errorf("virus scan %s: %w", rec.url, err)
	}
	if res.Truncated {
		rec.notes = append(rec.notes, annotationPartial)
	}
	if res.Infected {
		rec.notes = append(rec.notes, res.Reply)
		r.log.Warn("virus found; capture goes to the viral WARCs", "url", rec.url, "signature", res.Signature)
	}
	return res.Infected, nil
}

// revisitOf is an identical-payload-digest revisit of the last full
// capture of u, when a 2xx GET has the same payload.
func (r *Renderer) revisitOf(ctx context.Context, u, method string, resp *fetch.Response) *warcwriter.Revisit {
	if method != "" && method != http.MethodGet || resp.StatusCode < 200 || resp.StatusCode >= 300 || resp.PayloadDigest == "" {
		return nil
	}
	es, err := r.recent.Lookup(ctx, []string{u})
	if err != nil || len(es) == 0 || es[0].Original == nil {
		if err != nil {
			r.log.Warn("recently-crawled lookup; full record written", "url", u, "err", err)
		}
		return nil
	}
	o := es[0].Original
	if o.Digest != resp.PayloadDigest {
		return nil
	}
	return &warcwriter.Revisit{RefersToURI: u, RefersToDate: o.Time, RefersToRecordID: o.RecordID}
}

// publish writes rec's crawl.log line and crawled event. The line comes
// first, as in the worker, so every capture in the WARCs has one even when
// the event is lost; a lost event is logged (the capture is in the WARCs,
// and the index can be rebuilt from them).
func (r *Renderer) publish(ctx context.Context, s *session, rec record) {
	ev := r.event(s, rec)
	r.logCrawl(ev, rec)
	b, err := messages.AppendCrawled(nil, ev)
	if err != nil {
		r.log.Error("encode crawled event", "url", rec.url, "err", err)
		return
	}
	key, _ := hostkey.ForURL(strings.TrimPrefix(strings.TrimPrefix(rec.url, "screenshot:"), "onreadydom:"))
	if err := r.producer.ProduceSync(ctx, &kgo.Record{Topic: r.cfg.CrawledTopic(), Key: []byte(key), Value: b}).FirstErr(); err != nil {
		r.log.Error("publish crawled event", "url", rec.url, "err", err)
		return
	}
	r.metrics.captures.WithLabelValues(statusClass(rec.status)).Inc()
}

func (r *Renderer) event(s *session, rec record) messages.Crawled {
	host, _ := hostkey.Authority(strings.TrimPrefix(strings.TrimPrefix(rec.url, "screenshot:"), "onreadydom:"))
	notes := append(append([]string(nil), rec.notes...), s.l.Annotations()...)
	ev := messages.Crawled{
		Timestamp: messages.FormatTimestamp(time.Now()), URL: rec.url, StatusCode: rec.status, Mimetype: rec.mime,
		HopPath: rec.hopPath, Via: rec.via, Seed: s.l.Source(), Host: host, Thread: s.thread,
		StartTimePlusDuration: messages.FormatStartPlusDuration(rec.start, rec.duration),
		Annotations:           strings.Join(notes, ","), CrawlName: r.prof.Crawl.Name, WarcType: rec.warcType,
		ExtraInfo: map[string]any{"warcPrefix": r.prefix, "renderer": r.cfg.ID},
	}
	for k, v := range rec.extra {
		ev.ExtraInfo[k] = v
	}
	if st := r.cfg.stream(); st != "" {
		ev.ExtraInfo[recentdb.ExtraStream] = st
	}
	if id := s.l.LaunchID(); id != "" {
		ev.ExtraInfo[messages.ExtraLaunchID] = id
	}
	if rec.size > 0 {
		ev.Size = &rec.size
	}
	if rec.loc != nil {
		if rec.warcType == "" {
			ev.ContentLength = &rec.bodySize
		}
		ev.WarcFilename, ev.WarcOffset, ev.WarcLength = &rec.loc.Filename, &rec.loc.Offset, &rec.loc.Length
		ev.WarcID = rec.loc.RecordID
	}
	if rec.digest != "" {
		ev.ContentDigest = &rec.digest
	}
	return ev
}

func (r *Renderer) logCrawl(ev messages.Crawled, rec record) {
	e := crawllog.Entry{
		Logged: crawllog.EventTime(ev), Status: ev.StatusCode, Size: rec.size, URL: ev.URL, HopPath: ev.HopPath, Via: ev.Via,
		MIME: ev.Mimetype, Thread: ev.Thread, Duration: rec.duration, Digest: rec.digest, Source: ev.Seed,
		FetchStart: rec.start,
	}
	if rec.loc != nil && rec.warcType == "" {
		e.Size, e.HTTP = rec.bodySize, true
	}
	if ev.Annotations != "" {
		e.Annotations = strings.Split(ev.Annotations, ",")
	}
	if err := r.clog.Write(e); err != nil {
		r.log.Error("write crawl.log", "url", ev.URL, "err", err)
	}
}

// bodySize is the response's message body as received (chunk framing
// included): Raw past the last header block, as crawl.log's size column.
func bodySize(resp *fetch.Response) int64 {
	br := bufio.NewReader(resp.Raw.NewReader())
	var head int64
	for {
		status := 0
		line, err := br.ReadString('\n')
		if err != nil {
			return resp.Payload.Size()
		}
		head += int64(len(line))
		if f := strings.Fields(line); len(f) > 1 {
			fmt.Sscanf(f[1], "%d", &status)
		}
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return resp.Payload.Size()
			}
			head += int64(len(l))
			if strings.TrimRight(l, "\r\n") == "" {
				break
			}
		}
		if status < 100 || status >= 200 || status == 101 {
			return resp.Raw.Size() - head
		}
	}
}

func statusClass(status int) string {
	switch {
	case status >= 100 && status < 600:
		return fmt.Sprintf("%dxx", status/100)
	default:
		return "failed"
	}
}
