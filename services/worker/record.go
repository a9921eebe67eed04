package worker

import (
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/clamav"
	"github.com/trawler-crawl/trawler/pkg/extract"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/robots"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// Annotations of the virus scan besides clamd's own "stream: <sig> FOUND".
const (
	annotationUnscanned   = "clamav:unscanned"
	annotationUnavailable = "clamav:unavailable"
	annotationScanPartial = "clamav:partial"
)

// record scans the capture, extracts its links, writes it to WARC (the
// viral WARCs when clamd found something) and admits its outlinks. It ends
// finished (t.out complete, or t.dec a retry when the scan was held) or
// unrecorded when the capture could not be written (writeguard.go).
func (w *Worker) record(ctx context.Context, t *task, resp *fetch.Response) step {
	var infected bool
	s := proceed
	stage(ctx, "scan", func(ctx context.Context) { infected, s = w.scan(ctx, t, resp) })
	if s != proceed {
		return s
	}
	var links []extract.Link
	var fromBody bool
	if !infected { // links in malware are not followed
		stage(ctx, "extract", func(ctx context.Context) { links, fromBody = w.extract(t, resp) })
	}
	rv := revisitOf(t, resp)
	if rv == nil && !infected {
		stage(ctx, "dedup", func(ctx context.Context) { rv = w.crossURL(ctx, t, resp) })
	}
	w.adapt(t, resp)
	if rv != nil && rv.NotModified && t.eff.Profile.Frontier.KeepOutlinks {
		links = append(links, w.unchangedOutlinks(ctx, t)...)
	}
	capt := w.capture(t, resp, rv, links)
	writer := w.warc
	if infected {
		writer = w.viral
	}
	var err error
	var loc warcwriter.Location
	stage(ctx, "warc", func(ctx context.Context) { loc, err = writer.WriteCapture(ctx, capt) })
	if err != nil {
		w.metrics.warcErrors.Inc()
		return w.writeFailed(ctx, writeWARC, t.l.URL, fmt.Errorf("write WARC records: %w", err))
	}
	t.out.loc = &loc
	w.archived.Add(1)
	if !infected {
		stage(ctx, "dedup", func(ctx context.Context) { w.enterDigest(ctx, t, resp, rv, loc) })
	}
	t.out.etag, t.out.lastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		t.out.location = cdx.AbsoluteRedirect(t.l.URL, resp.Header.Get("Location"))
	}
	if rv != nil && rv.NotModified {
		t.out.etag, t.out.lastModified = validators(t, resp)
	}
	// A revisit of another URL's record was read for links like a full
	// capture, and its URL has no kept list of its own: keep them too.
	if fromBody && (rv == nil || rv.RefersToURI != t.l.URL) && t.eff.Profile.Frontier.KeepOutlinks {
		stage(ctx, "outlinks", func(ctx context.Context) { w.keepOutlinks(ctx, t, resp.Start, links) })
	}
	if len(links) == 0 {
		return finished
	}
	stage(ctx, "admit", func(ctx context.Context) { s = w.admitOutlinks(ctx, t, links) })
	if s == proceed {
		return finished
	}
	return s
}

// capture assembles the WARC records of t: the revisit rv instead of the
// response when there is one.
func (w *Worker) capture(t *task, resp *fetch.Response, rv *warcwriter.Revisit, links []extract.Link) warcwriter.Capture {
	outlinks := make([]warcwriter.Outlink, len(links))
	for i, k := range links {
		outlinks[i] = warcwriter.Outlink{URL: k.URL, Hop: string(rune(k.Hop)), Context: k.Context}
	}
	ip := ""
	if resp.IP != nil {
		ip = resp.IP.String()
	}
	capt := warcwriter.Capture{
		URL: t.l.URL, Date: resp.Start, IP: ip, Request: resp.RequestBytes,
		Response: resp.Raw.NewReader(), ResponseLength: resp.Raw.Size(),
		PayloadDigest: resp.PayloadDigest, Protocols: resp.Protocols,
		Metadata: &warcwriter.Metadata{
			Via: t.l.ParentURL, HopsFromSeed: t.l.HopPath(), SourceTag: t.l.Source(),
			FetchTimeMs: resp.Duration.Milliseconds(), Outlinks: outlinks,
		},
	}
	switch {
	case rv == nil:
	case rv.NotModified:
		// As Heritrix and warcprox write it: the block is the 304's
		// headers, the payload is the original's, and so is the digest
		// the event, crawl.log and the index carry.
		capt.Revisit = rv
		capt.PayloadDigest = t.prior.Original.Digest
		t.out.digest = capt.PayloadDigest
		t.out.notes = append(t.out.notes, annotationNotModified)
		t.out.original = indexedOriginal(t.prior.Original)
	default:
		capt.Revisit = rv
		t.out.notes = append(t.out.notes, annotationDuplicate)
	}
	return capt
}

// indexedOriginal is the record a 304's index line points at, so that it
// replays as the page; nil for an entry written before the DB kept the
// original's status, whose 304 keeps a revisit line.
func indexedOriginal(o *recentdb.Original) *cdx.Original {
	if o.Status == 0 || o.Filename == "" {
		return nil
	}
	return &cdx.Original{Filename: o.Filename, Offset: o.Offset, Length: o.Length, Status: o.Status,
		Mime: o.Mime, Timestamp: messages.FormatTimestamp(o.Time)}
}

// Annotations of revisits, as Heritrix (duplicate:digest) and warcprox
// (duplicate:server-not-modified) write them; the recently-crawled DB and
// the CDX writer take any "duplicate:" annotation to mean a revisit.
const (
	annotationDuplicate   = "duplicate:digest"
	annotationNotModified = "duplicate:server-not-modified"
)

// validators are the ETag and Last-Modified kept for a 304: the 304's own
// where it sent them, otherwise the ones that got it (RFC 9110 lets a 304
// leave out validators that have not changed), so the next conditional
// request asks the same question.
func validators(t *task, resp *fetch.Response) (etag, lastModified string) {
	etag, lastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	if c := t.prior.Capture; c != nil {
		if etag == "" {
			etag = c.ETag
		}
		if lastModified == "" {
			lastModified = c.LastModified
		}
	}
	return etag, lastModified
}

// scan has clamd scan a 2xx body with content. infected routes the
// capture to the viral WARCs with clamd's reply as annotation. When clamd
// cannot be reached after the client's retries, the profile decides: hold
// the URI for a later attempt (finished with a retry; -8 with
// clamav:unavailable once the retries run out, nothing written), or write it
// unscanned with clamav:unscanned. Nothing is ever silently unscanned.
func (w *Worker) scan(ctx context.Context, t *task, resp *fetch.Response) (infected bool, s step) {
	if w.scanner == nil || resp.StatusCode < 200 || resp.StatusCode >= 300 || resp.Payload.Size() == 0 {
		return false, proceed
	}
	res, err := w.scanner.Scan(ctx, func() (io.ReadCloser, error) { return io.NopCloser(resp.Payload.NewReader()), nil })
	if err != nil {
		if ctx.Err() != nil {
			w.log.Warn("virus scan interrupted; URI returned to the frontier", "url", t.l.URL, "err", err)
			return false, interrupted
		}
		if !errors.Is(err, clamav.ErrUnavailable) {
			// The spool could not be read: not clamd's fault, and the
			// capture must not be written as scanned.
			return false, w.writeFailed(ctx, writeSpool, t.l.URL, fmt.Errorf("virus scan: %w", err))
		}
		w.log.Warn("clamd unavailable", "url", t.l.URL, "err", err)
		if t.eff.Profile.ClamAV.OnUnavailable == profile.ClamAVWriteUnscanned {
			t.out.notes = append(t.out.notes, annotationUnscanned)
			return false, proceed
		}
		t.decided = true
		t.dec = frontier.Decision{Status: t.out.status, Attempts: t.c.Retries + 1, Retry: t.c.Retries < t.pol.Frontier.MaxRetries}
		if !t.dec.Retry {
			t.dec.Status = frontier.StatusRetriesExhausted
			t.out.status, t.out.mime = frontier.StatusRetriesExhausted, "unknown"
			t.out.notes = append(t.out.notes, annotationUnavailable)
		}
		return false, finished
	}
	if res.Truncated {
		t.out.notes = append(t.out.notes, annotationScanPartial)
	}
	if res.Infected {
		t.out.notes = append(t.out.notes, res.Reply)
		w.log.Warn("virus found; capture goes to the viral WARCs", "url", t.l.URL, "signature", res.Signature)
	}
	return res.Infected, proceed
}

// admitOutlinks admits t's links as candidates; their inscope journal
// records are published with t's event.
func (w *Worker) admitOutlinks(ctx context.Context, t *task, links []extract.Link) step {
	now := time.Now()
	links, pt := w.traps.filter(t, links)
	children := make([]messages.Launch, 0, len(links))
	for _, k := range links {
		children = append(children, messages.ChildLaunch(t.l, k.URL, string(rune(k.Hop)), now))
	}
	promoteRedirects(t.l, t.eff, children)
	// A prerequisite is fetched before its seed, on whichever worker
	// claims it: a new seed's robots.txt, whose Sitemap: links lead to
	// pages listed nowhere else, must not be judged with a seed set that
	// lacks the seed (test/chaos found them dropped).
	w.chain.refresh(ctx, t.l.IsSeed || t.prereq)
	recs, err := w.admitEach(ctx, children, false, t.c.Interrupted, pt.admitted)
	if err != nil {
		return w.writeFailed(ctx, writeAdmit, t.l.URL, fmt.Errorf("admit outlinks: %w", err))
	}
	w.countTraps(ctx, pt)
	t.out.inscope = recs
	return proceed
}

// extract finds links in the response headers and, by content type, in
// the body: HTML, CSS, JavaScript (speculative), sitemaps, robots.txt
// Sitemap lines. fromBody says the body was read for links. Extraction
// problems are logged, never fatal: the capture stands.
func (w *Worker) extract(t *task, resp *fetch.Response) (links []extract.Link, fromBody bool) {
	p := t.eff.Profile
	opts := extract.Options{Resolve: w.resolve.ForBase()}
	links = extract.Headers(resp.Header, t.l.URL, opts)
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return links, false
	}
	kind := bodyKind(t, resp, p.Extract)
	if kind == "" {
		return links, false
	}
	body, err := decodedBody(resp)
	if err != nil {
		w.log.Debug("decode body for extraction", "url", t.l.URL, "err", err)
		return links, false
	}
	defer body.Close()
	var found []extract.Link
	switch kind {
	case "html":
		found, _, err = extract.HTML(body, t.l.URL, extract.HTMLOptions{Options: opts,
			NoForms: p.Extract.IgnoreFormActionUrls, ObeyMetaNoFollow: robots.ObeyMetaNoFollow(p.Robots.Policy),
			Javascript: p.Extract.Javascript})
	case "css":
		found, err = extract.CSS(body, t.l.URL, opts)
	case "js":
		found, err = extract.JS(body, jsBase(t), opts)
	case "sitemap":
		found, _, err = extract.Sitemap(body, t.l.URL, opts)
	case "hls", "dash":
		found, err = w.extractStream(t, kind, body, opts)
	case "robots":
		var b []byte
		if b, err = io.ReadAll(io.LimitReader(body, maxRobotsBytes)); err == nil {
			found = extract.Refs(t.l.URL, robots.Parse(resp.StatusCode, b).Sitemaps(), messages.HopManifest, extract.ContextManifestMisc, opts)
		}
	}
	if err != nil {
		w.log.Debug("extract links", "url", t.l.URL, "err", err)
	}
	return append(links, found...), true
}

// bodyKind says which extractor reads the body, or "" for none.
func bodyKind(t *task, resp *fetch.Response, x profile.Extract) string {
	mime := resp.MIME
	switch {
	case x.Sitemaps && pathOf(t.l.URL) == "/robots.txt":
		return "robots"
	case strings.Contains(mime, "html"):
		return "html"
	case mime == "text/css":
		return "css"
	case x.Streams.Variants != extract.VariantsNone && streamKind(mime, t.l.URL) != "":
		return streamKind(mime, t.l.URL)
	case x.Javascript && jsType(mime, t.l.URL):
		return "js"
	case x.Sitemaps && looksLikeSitemap(resp):
		return "sitemap"
	case x.Sitemaps && t.l.Hop == string(messages.HopManifest) && sitemapType(mime):
		// A sitemap named by robots.txt or an index: XML, gzip or text.
		return "sitemap"
	}
	return ""
}

// jsType says which bodies get speculative extraction, as Heritrix's
// ExtractorJS chooses them: script and JSON types, or a .js URL.
func jsType(mime, url string) bool {
	for _, k := range []string{"javascript", "ecmascript", "jscript", "json"} {
		if strings.Contains(mime, k) {
			return true
		}
	}
	return strings.HasSuffix(pathOf(url), ".js")
}

func sitemapType(mime string) bool {
	return strings.Contains(mime, "xml") || strings.Contains(mime, "gzip") || mime == "text/plain" || mime == "unknown"
}

// looksLikeSitemap checks an XML body's first bytes for a sitemap root.
func looksLikeSitemap(resp *fetch.Response) bool {
	if !strings.Contains(resp.MIME, "xml") {
		return false
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(resp.Payload.NewReader(), head)
	return extract.LooksLikeSitemap(resp.MIME, head[:n])
}

func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Path
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
		return payloadBody{r, resp.Payload.Size()}, nil
	}
}

// payloadBody is an identity-coded payload that still tells its size, which
// io.NopCloser would hide: the JavaScript and CSS extractors read a body
// whole, in one allocation when they know how big it is (a 3.6 MB script
// read by doubling from 512 bytes cost 9% of a crawl of the Python docs).
type payloadBody struct {
	io.Reader
	size int64
}

func (payloadBody) Close() error { return nil }

// Size is the payload's length in bytes.
func (b payloadBody) Size() int64 { return b.size }
