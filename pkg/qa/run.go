package qa

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"time"

	"github.com/trawler-crawl/trawler/pkg/browser"
	"github.com/trawler-crawl/trawler/pkg/mitm"
	"github.com/trawler-crawl/trawler/pkg/replay"
)

// Renderer loads a page in a browser: *browser.Pool.
type Renderer interface {
	Render(ctx context.Context, pg browser.Page) (*browser.Result, error)
}

// Options configures a Checker.
type Options struct {
	// Resolver answers from the archive; required.
	Resolver *replay.Resolver
	// Browser loads the pages; required. Its pool must trust CA's keys
	// (browser.Config.SPKIHashes) for https pages.
	Browser Renderer
	// CA intercepts https requests; required.
	CA *mitm.CA
	// UserAgent is the crawl's robots.txt user agent (see
	// replay.ProxyOptions); empty: robots.txt is not consulted.
	UserAgent string
	// ScrollSteps and Settle are browser.Page's: scroll as the crawl's
	// renderer did, so lazy content asks for what it asked for then.
	ScrollSteps int
	Settle      time.Duration
	// Metrics counts the run; nil counts nothing.
	Metrics *Metrics
	Log     *slog.Logger
}

// Checker checks pages. It is safe for concurrent use.
type Checker struct{ o Options }

// NewChecker checks o.
func NewChecker(o Options) (*Checker, error) {
	if o.Resolver == nil || o.Browser == nil || o.CA == nil {
		return nil, errors.New("qa: Resolver, Browser and CA are required")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Checker{o: o}, nil
}

// PageResult is one page's QA.
type PageResult struct {
	Page
	// FinalURL is where the replayed document ended, after redirects.
	FinalURL string `json:"final_url,omitempty"`
	// Counts of the page's requests by outcome (replay.Outcome), and all
	// of them.
	Requested int            `json:"requested"`
	Outcomes  map[string]int `json:"outcomes"`
	// Resources, Screenshot and Text are the scores (see the package
	// comment); nil when there was nothing to score against.
	Resources  *float64 `json:"resources"`
	Screenshot *float64 `json:"screenshot"`
	Text       *float64 `json:"text"`
	// TextHow says how the text was compared ("chars", "words", ...).
	TextHow string `json:"text_how,omitempty"`
	// Score is the lowest score, Severity its grade.
	Score    float64  `json:"score"`
	Severity Severity `json:"severity"`
	// Missing lists the URLs the archive lacks (replay.Missing); Broken,
	// the requests whose captures could not be loaded, with why; Other,
	// the Offsite and Robots ones.
	Missing []string          `json:"missing"`
	Broken  []replay.Exchange `json:"broken,omitempty"`
	Other   []replay.Exchange `json:"other,omitempty"`
	// Error says why the page could not be checked (it never finished
	// loading, the browser crashed): it scores 0.
	Error string `json:"error,omitempty"`
	// Notes are what went wrong with a score's input (an unreadable
	// capture-time screenshot), the score left out.
	Notes []string `json:"notes,omitempty"`
}

// Check loads pg in the browser through a proxy of its own that answers
// from the archive, and scores it. A page that fails to load is a result
// with Error set, not an error: the run goes on.
func (c *Checker) Check(ctx context.Context, pg Page) PageResult {
	res := PageResult{Page: pg, Outcomes: map[string]int{}, Missing: []string{}}
	proxy, err := replay.NewProxy(replay.ProxyOptions{Resolver: c.o.Resolver, Timestamp: pg.Timestamp, UserAgent: c.o.UserAgent})
	if err != nil {
		return c.failed(res, err)
	}
	rendered, err := c.render(ctx, pg, proxy)
	c.tally(&res, proxy.Exchanges())
	if err != nil {
		return c.failed(res, err)
	}
	res.FinalURL = rendered.URL
	if shot, ok := c.captured(ctx, &res, "screenshot:"+pg.URL); ok {
		if s, err := ScreenshotMatch(shot, rendered.Screenshot, PixelThreshold); err != nil {
			res.Notes = append(res.Notes, "screenshot not scored: "+err.Error())
		} else {
			res.Screenshot = &s
		}
	}
	if dom, ok := c.captured(ctx, &res, "onreadydom:"+pg.URL); ok {
		s, how := TextMatch(VisibleText(dom), VisibleText(rendered.DOM))
		res.Text, res.TextHow = &s, how
	}
	res.Score = 1
	for _, s := range []*float64{res.Resources, res.Screenshot, res.Text} {
		if s != nil {
			res.Score = min(res.Score, *s)
		}
	}
	res.Severity = Grade(res.Score)
	c.o.Metrics.page(res)
	return res
}

func (c *Checker) failed(res PageResult, err error) PageResult {
	res.Error, res.Score, res.Severity = err.Error(), 0, Severe
	c.o.Log.Warn("qa: page not checked", "url", res.URL, "err", err)
	c.o.Metrics.page(res)
	return res
}

// render loads pg behind a proxy listener of its own, so every request
// the page makes is its own.
func (c *Checker) render(ctx context.Context, pg Page, proxy *replay.Proxy) (*browser.Result, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("qa: proxy listener: %w", err)
	}
	srv, err := mitm.NewServer(mitm.Config{CA: c.o.CA, Handler: proxy, Log: c.o.Log.With("page", pg.URL)})
	if err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("qa: proxy: %w", err)
	}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	res, err := c.o.Browser.Render(ctx, browser.Page{URL: pg.URL, ProxyServer: "http://" + ln.Addr().String(),
		ScrollSteps: c.o.ScrollSteps, Settle: c.o.Settle})
	if err != nil {
		return nil, fmt.Errorf("qa: replay %s: %w", pg.URL, err)
	}
	return res, nil
}

// tally counts the page's requests and lists what the archive lacked.
func (c *Checker) tally(res *PageResult, exs []replay.Exchange) {
	seen := map[string]bool{}
	for _, ex := range exs {
		res.Requested++
		c.o.Metrics.request(ex.Outcome)
		if ex.Outcome == replay.Missing && isFavicon(ex.URL) {
			// Chromium asks every origin for /favicon.ico whatever the
			// page links; a crawl fetches it only when linked. Not the
			// page's loss, so not scored, nor patched.
			res.Outcomes[outcomeFavicon]++
			res.Other = append(res.Other, ex)
			continue
		}
		res.Outcomes[string(ex.Outcome)]++
		switch ex.Outcome {
		case replay.Missing:
			if !seen[ex.URL] {
				seen[ex.URL] = true
				res.Missing = append(res.Missing, ex.URL)
			}
		case replay.Broken:
			res.Broken = append(res.Broken, ex)
		case replay.Offsite, replay.Robots:
			res.Other = append(res.Other, ex)
		}
	}
	slices.Sort(res.Missing)
	counted := res.Outcomes[string(replay.Answered)] + res.Outcomes[string(replay.Missing)] + res.Outcomes[string(replay.Broken)]
	if counted > 0 {
		s := float64(res.Outcomes[string(replay.Answered)]) / float64(counted)
		res.Resources = &s
	}
}

// outcomeFavicon counts, in PageResult.Outcomes, the browser's own
// /favicon.ico requests the archive had no answer for.
const outcomeFavicon = "missing_favicon"

func isFavicon(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Path == "/favicon.ico" && u.RawQuery == ""
}

// captured reads a capture-time record of the page (its screenshot or
// DOM); a record that is there but cannot be read is a note.
func (c *Checker) captured(ctx context.Context, res *PageResult, uri string) ([]byte, bool) {
	resp, err := c.o.Resolver.Resolve(ctx, uri, res.Timestamp)
	if errors.Is(err, replay.ErrNotFound) {
		return nil, false
	}
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("%s not scored: %v", uri, err))
		return nil, false
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("%s not scored: %v", uri, err))
		return nil, false
	}
	return b, true
}

// Run checks pages in turn (the browser pool bounds how many load at
// once; workers say how many are asked at once) and returns the report.
func (c *Checker) Run(ctx context.Context, pages []Page, workers int) []PageResult {
	out := make([]PageResult, len(pages))
	next := make(chan int)
	done := make(chan struct{})
	workers = max(1, workers)
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range next {
				out[i] = c.Check(ctx, pages[i])
			}
		}()
	}
	for i := range pages {
		next <- i
	}
	close(next)
	for range workers {
		<-done
	}
	return out
}
