package renderer

import (
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // SHA-1 is what WARC and CDX digests use
	"encoding/base32"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/browser"
	"github.com/trawler-crawl/trawler/pkg/extract"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/robots"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// record writes what a render made beside the captures (UKWA's webrender
// records): the screenshot as a resource at screenshot:<url> with the
// viewport and time in its metadata record, the rendered DOM at
// onreadydom:<url> with its outlinks, and sends those outlinks to the
// stream's tocrawl topic, where the workers' candidate chain judges their
// scope and hops. It fails (and the render is done again) only when a
// record or the outlinks could not be written or published.
func (r *Renderer) record(ctx context.Context, s *session, res *browser.Result, ytInfo []byte) (*Outcome, error) {
	links := r.outlinks(s, res)
	out := &Outcome{URL: s.l.URL, FinalURL: res.URL, Status: res.Status, Title: res.Title, Resources: s.count(),
		Outlinks: make([]string, 0, len(links))}
	fields := [][2]string{
		{"viewport", fmt.Sprintf("%dx%d", res.Viewport.Width, res.Viewport.Height)},
		{"renderedAt", res.Finished.UTC().Format(time.RFC3339Nano)},
		{"renderTimeMs", strconv.FormatInt(res.Finished.Sub(res.Started).Milliseconds(), 10)},
		{"finalUrl", res.URL}, {"title", res.Title},
		{"via", s.l.URL}, {"hopsFromSeed", s.l.HopPath()}, {"sourceTag", s.l.Source()},
	}
	shot, err := r.resource(ctx, s, "screenshot:"+s.l.URL, "image/png", res.Screenshot, res.Finished, fields)
	if err != nil {
		return nil, err
	}
	out.Screenshot = shot
	domFields := [][2]string{{"via", s.l.URL}, {"hopsFromSeed", s.l.HopPath()}, {"sourceTag", s.l.Source()}}
	for _, k := range links {
		out.Outlinks = append(out.Outlinks, k.URL)
		domFields = append(domFields, [2]string{"outlink", k.URL + " " + string(rune(k.Hop)) + " " + k.Context})
	}
	if out.DOM, err = r.resource(ctx, s, "onreadydom:"+s.l.URL, "text/html", res.DOM, res.Finished, domFields); err != nil {
		return nil, err
	}
	if len(ytInfo) > 0 {
		if out.Media, err = r.mediaRecord(ctx, s, ytInfo); err != nil {
			return nil, err
		}
	}
	if err := r.sendOutlinks(ctx, s, links); err != nil {
		return nil, err
	}
	return out, nil
}

// resource writes one resource record and publishes its event, an embed
// of the page (hop E), so the index and the crawl.log carry it.
func (r *Renderer) resource(ctx context.Context, s *session, target, mime string, block []byte, date time.Time,
	fields [][2]string) (string, error) {
	loc, err := r.warc.WriteResource(ctx, warcwriter.Resource{URL: target, Date: date, ContentType: mime, Block: block, Fields: fields})
	if err != nil {
		r.metrics.warcErrors.Inc()
		return "", fmt.Errorf("write %s: %w", target, err)
	}
	r.publish(ctx, s, record{url: target, hopPath: s.l.HopPath() + string(messages.HopEmbed), via: s.l.URL,
		status: 200, mime: mime, size: int64(len(block)), digest: digestOf(block),
		start: date, loc: &loc, warcType: "resource"})
	return fmt.Sprintf("%s:%d", loc.Filename, loc.Offset), nil
}

// outlinks are the links of the rendered DOM (those only script made
// included), resolved against the page's final URL, without the embeds
// the browser already loaded through the proxy.
func (r *Renderer) outlinks(s *session, res *browser.Result) []extract.Link {
	p := s.eff.Profile
	found, _, err := extract.HTML(bytes.NewReader(res.DOM), res.URL, extract.HTMLOptions{
		NoForms: p.Extract.IgnoreFormActionUrls, ObeyMetaNoFollow: robots.ObeyMetaNoFollow(p.Robots.Policy)})
	if err != nil {
		r.log.Debug("extract links from rendered DOM", "url", s.l.URL, "err", err)
	}
	seen := map[string]bool{}
	out := found[:0]
	for _, k := range found {
		if seen[k.URL] || (k.Hop != messages.HopLink && s.wasLoaded(k.URL)) {
			continue
		}
		seen[k.URL] = true
		out = append(out, k)
	}
	return out
}

// sendOutlinks publishes the links as launch messages on tocrawl, children
// of the page, for the workers' admission path.
func (r *Renderer) sendOutlinks(ctx context.Context, s *session, links []extract.Link) error {
	if len(links) == 0 {
		return nil
	}
	now := time.Now()
	recs := make([]*kgo.Record, 0, len(links))
	for _, k := range links {
		b, err := messages.AppendLaunch(nil, messages.ChildLaunch(s.l, k.URL, string(rune(k.Hop)), now))
		if err != nil {
			r.log.Debug("outlink not sent", "url", k.URL, "err", err)
			continue
		}
		key, _ := hostkey.ForURL(k.URL)
		recs = append(recs, &kgo.Record{Topic: r.cfg.ToCrawlTopic(), Key: []byte(key), Value: b})
	}
	if err := r.producer.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("publish outlinks of %s: %w", s.l.URL, err)
	}
	r.metrics.outlinks.Add(float64(len(recs)))
	return nil
}

// digestOf is a block's "sha1:BASE32" digest, as WARC and CDX write it.
func digestOf(b []byte) string {
	sum := sha1.Sum(b) //nolint:gosec // SHA-1 is what WARC digests use
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}
