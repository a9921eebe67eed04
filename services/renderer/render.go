package renderer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/browser"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/mitm"
)

// handle renders a batch of hand-offs, one page per tab at once. It
// returns an error only when a fallback could not be published: the batch
// is then not committed and is rendered again.
func (r *Renderer) handle(ctx context.Context, batch []kafka.Item[messages.Launch]) error {
	var wg sync.WaitGroup
	errs := make([]error, len(batch))
	for i, it := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = r.renderLaunch(ctx, it.Value)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Outcome is what one render produced.
type Outcome struct {
	URL      string   `json:"url"`
	FinalURL string   `json:"final_url"`
	Status   int      `json:"status"`
	Title    string   `json:"title"`
	Outlinks []string `json:"outlinks"`
	// Resources is how many requests the page made through the proxy.
	Resources  int    `json:"resources"`
	Screenshot string `json:"screenshot_warc,omitempty"`
	DOM        string `json:"onreadydom_warc,omitempty"`
	// Media is where yt-dlp's description of the page's media was
	// written (youtube-dl:<url>), when it ran and found any.
	Media string `json:"youtube_dl_warc,omitempty"`
	// Fallback is set when the page could not be rendered and was handed
	// back to the workers for a plain fetch.
	Fallback string `json:"fallback,omitempty"`
}

// renderLaunch renders l, trying again (on a restarted browser when it
// crashed) up to the configured attempts, then hands it back to the
// workers for a plain fetch annotated renderFailed.
func (r *Renderer) renderLaunch(ctx context.Context, l messages.Launch) (*Outcome, error) {
	var last error
	for attempt := 1; attempt <= r.cfg.Attempts; attempt++ {
		out, err := r.renderOnce(ctx, l)
		if err == nil {
			r.metrics.renders.WithLabelValues("ok").Inc()
			return out, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err() // shutdown: not committed, rendered again
		}
		last = err
		result := "failed"
		if errors.Is(err, browser.ErrBrowserCrashed) {
			result = "crashed"
		}
		r.metrics.renders.WithLabelValues(result).Inc()
		r.log.Warn("render failed", "url", l.URL, "attempt", attempt, "of", r.cfg.Attempts, "err", err)
	}
	if err := r.fallback(ctx, l); err != nil {
		return nil, err
	}
	r.metrics.renders.WithLabelValues("fallback").Inc()
	return &Outcome{URL: l.URL, Fallback: last.Error()}, nil
}

// fallback publishes l back on tocrawl, forced and annotated renderFailed,
// so a worker fetches it plainly (and does not hand it off again).
func (r *Renderer) fallback(ctx context.Context, l messages.Launch) error {
	hd := &l.ParentURLMetadata.HeritableData
	if !slices.Contains(hd.Annotations, messages.AnnotationRenderFailed) {
		hd.Annotations = append(slices.Clone(hd.Annotations), messages.AnnotationRenderFailed)
	}
	l.ForceFetch = true
	b, err := messages.AppendLaunch(nil, l)
	if err != nil {
		return fmt.Errorf("encode fallback of %s: %w", l.URL, err)
	}
	key, _ := hostkey.ForURL(l.URL)
	if err := r.producer.ProduceSync(ctx, &kgo.Record{Topic: r.cfg.ToCrawlTopic(), Key: []byte(key), Value: b}).FirstErr(); err != nil {
		return fmt.Errorf("publish fallback of %s: %w", l.URL, err)
	}
	return nil
}

// renderOnce renders l in one tab behind a proxy listener of its own, so
// every request the page makes is attributed to it, then records the
// screenshot and the rendered DOM and sends the page's outlinks to the
// frontier through tocrawl.
func (r *Renderer) renderOnce(ctx context.Context, l messages.Launch) (*Outcome, error) {
	select {
	case <-r.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	var thread int
	select {
	case thread = <-r.tabs:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { r.tabs <- thread }()
	s := newSession(r, l, r.sheets.ForURL(l.URL), thread)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("render proxy listener: %w", err)
	}
	srv, err := mitm.NewServer(mitm.Config{CA: r.ca, Handler: s, Log: r.log.With("page", l.URL)})
	if err != nil {
		_ = ln.Close()
		return nil, err
	}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	start := time.Now()
	proxy := "http://" + ln.Addr().String()
	res, err := r.pool.Render(ctx, browser.Page{URL: l.URL, ProxyServer: proxy,
		ScrollSteps: s.eff.Profile.Render.ScrollSteps, PlayMedia: s.eff.Profile.Render.Media.Play})
	r.metrics.duration.Observe(time.Since(start).Seconds())
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", l.URL, err)
	}
	r.metrics.resources.Observe(float64(s.count()))
	if !s.wasCaptured(l.URL) {
		// The page itself was not recorded (refused, or the browser never
		// asked for it): a screenshot of an error page is nothing to keep,
		// and the worker's plain fetch decides what the URI comes to.
		return nil, fmt.Errorf("render %s: the page itself was not captured", l.URL)
	}
	info := r.runYtDlp(ctx, s, res, proxy)
	return r.record(ctx, s, res, info)
}

func (s *session) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}
