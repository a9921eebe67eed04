package renderer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/mitm"
	"github.com/trawler-crawl/trawler/pkg/robots"
	"github.com/trawler-crawl/trawler/pkg/sheets"
	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

// Reasons the proxy refuses a request, the label of
// trawler_renderer_proxy_refusals_total.
const (
	refusedAddress  = "address"
	refusedExcluded = "excluded"
	refusedRobots   = "robots"
	refusedCap      = "resource_cap"
	refusedMethod   = "method"
	refusedScheme   = "scheme"
	refusedVirus    = "virus"
	refusedBlocked  = "blocked"
)

// session is one render's proxy handler: every request of the page's
// browser context comes through it, so it knows the launch each capture
// belongs to, the hop path and via to record, and the page's budget.
type session struct {
	r      *Renderer
	l      messages.Launch
	eff    *sheets.Effective
	thread int
	max    int

	mu       sync.Mutex
	requests int
	// hops are the hop path and via of URLs whose place in the crawl is
	// known before the browser asks for them: the page itself, and the
	// targets of redirects the proxy has seen.
	hops map[string]hop
	// loaded are the URLs the browser loaded (captured or refused), so
	// the page's embeds are not sent to the frontier again.
	loaded map[string]bool
	// captured are the URLs recorded in this render.
	captured map[string]bool
	robots   map[string]*robots.Rules
	pageURL  string
	// sawMedia is set by an audio, video or manifest response (media.go).
	sawMedia bool
}

type hop struct{ path, via string }

func newSession(r *Renderer, l messages.Launch, eff *sheets.Effective, thread int) *session {
	via := l.ParentURL
	if via == l.URL {
		via = ""
	}
	s := &session{r: r, l: l, eff: eff, thread: thread, max: eff.Profile.Render.Resources(),
		hops: map[string]hop{}, loaded: map[string]bool{}, captured: map[string]bool{}, robots: map[string]*robots.Rules{}, pageURL: l.URL}
	s.hops[l.URL] = hop{path: l.HopPath(), via: via}
	return s
}

// Handle fetches and records one request of the browser, refusing what the
// crawl must not fetch: addresses the guard refuses, excluded sites, what
// robots.txt precludes under the URL's sheets, requests past the page's cap.
func (s *session) Handle(ctx context.Context, req *mitm.Request) (*mitm.Response, error) {
	u, err := uri.Normalize(req.URL)
	if err != nil || !(strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) {
		return nil, s.refuse(refusedScheme, req.URL)
	}
	if !s.admit() {
		return nil, s.refuse(refusedCap, u)
	}
	s.markLoaded(req.URL, u)
	method := req.Method
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default: // the fetcher records GET, HEAD and POST only
		return nil, s.refuse(refusedMethod, u)
	}
	eff := s.r.sheets.ForURL(u)
	if eff.Profile.Preselector.BlockAll {
		return nil, s.refuse(refusedBlocked, u)
	}
	if s.r.engine.Excluded(surt.Heritrix(u)) {
		return nil, s.refuse(refusedExcluded, u)
	}
	// Robots policy is the launch's (its sheets decide how the target's
	// pages are crawled, ignoreRobots included); the rules are each host's.
	if ok, err := s.robotsAllow(ctx, u, s.eff); err != nil || !ok {
		if errors.Is(err, fetch.ErrAddressRefused) {
			return nil, s.refuse(refusedAddress, u)
		}
		if err != nil {
			s.r.log.Debug("robots.txt unavailable; request refused", "url", u, "err", err)
		}
		return nil, s.refuse(refusedRobots, u)
	}
	h := s.place(u)
	header := requestHeader(req.Header)
	if wholeRequest(header) {
		s.r.metrics.media.widened.Inc()
	}
	c, err := s.r.capture(ctx, s, u, h, fetch.Request{URL: u, Method: method, Header: header,
		Body: req.Body, AcceptCompression: true})
	if err != nil {
		if errors.Is(err, fetch.ErrAddressRefused) {
			return nil, s.refuse(refusedAddress, u)
		}
		s.r.metrics.proxied.WithLabelValues("failed").Inc()
		return nil, err
	}
	if c.infected {
		c.resp.Close()
		return nil, s.refuse(refusedVirus, u)
	}
	s.r.metrics.proxied.WithLabelValues("captured").Inc()
	s.markCaptured(u)
	s.noteMedia(c.resp.MIME)
	s.follow(u, h, c.resp)
	return &mitm.Response{StatusCode: c.resp.StatusCode, Header: responseHeader(c.resp.Header),
		Body: payloadReader{c.resp.Payload.NewReader(), c.resp}, BodyLength: c.resp.Payload.Size()}, nil
}

// refuse counts a refusal and returns the error that makes the proxy
// answer 403.
func (s *session) refuse(reason, u string) error {
	s.r.metrics.refusals.WithLabelValues(reason).Inc()
	s.r.log.Debug("render proxy refused a request", "page", s.l.URL, "url", u, "reason", reason)
	return &mitm.RefusedError{Reason: reason}
}

// admit counts a request against the page's cap.
func (s *session) admit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	return s.requests <= s.max
}

func (s *session) markLoaded(urls ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range urls {
		s.loaded[u] = true
	}
}

func (s *session) markCaptured(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.captured[u] = true
}

func (s *session) wasCaptured(u string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.captured[u]
}

func (s *session) wasLoaded(u string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loaded[u]
}

// place is the hop path and via of u: the launch's own for the page, a
// redirect's source plus R for a redirect target, and the page's plus E
// (an embed, as Heritrix writes the browser's loads) for anything else.
func (s *session) place(u string) hop {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.hops[u]; ok {
		return h
	}
	return hop{path: s.l.HopPath() + string(messages.HopEmbed), via: s.pageURL}
}

// follow records where a redirect leads, so its target gets hop R from
// it; a redirect of the page itself moves the page there.
func (s *session) follow(u string, h hop, resp *fetch.Response) {
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return
	}
	loc := cdx.AbsoluteRedirect(u, resp.Header.Get("Location"))
	if loc == "" {
		return
	}
	if n, err := uri.Normalize(loc); err == nil {
		loc = n
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.hops[loc]; !ok {
		s.hops[loc] = hop{path: h.path + string(messages.HopRedirect), via: u}
	}
	if u == s.pageURL {
		s.pageURL = loc
	}
}

// requestHeader is what the browser sent that the fetcher passes on; it
// owns Host, User-Agent (the crawl's, with its contact URL), framing and
// Accept-Encoding.
func requestHeader(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range []string{"Host", "User-Agent", "Accept-Encoding", "Content-Length", "Connection"} {
		out.Del(k)
	}
	return out
}

// responseHeader is the recorded response's header as the browser gets
// it: framing is the proxy's (the body goes de-chunked).
func responseHeader(h http.Header) http.Header {
	out := h.Clone()
	out.Del("Content-Length")
	out.Del("Transfer-Encoding")
	return out
}

// payloadReader streams a recorded response's payload to the browser and
// releases its spool once the proxy has written it.
type payloadReader struct {
	io.Reader
	resp *fetch.Response
}

func (p payloadReader) Close() error { return p.resp.Close() }

// robotsAllow applies the robots policy of u's sheets, fetching and
// recording robots.txt (hop P) when the shared cache lacks it.
func (s *session) robotsAllow(ctx context.Context, u string, eff *sheets.Effective) (bool, error) {
	policy := eff.Profile.Robots.Policy
	if !robots.NeedsRobots(policy) {
		return true, nil
	}
	origin, err := robots.Origin(u)
	if err != nil {
		return false, err
	}
	rules, err := s.rulesFor(ctx, origin)
	if err != nil {
		return false, err
	}
	pu, err := url.Parse(u)
	if err != nil {
		return false, err
	}
	ok, _ := robots.Evaluate(policy, rules, s.r.ua, pu.RequestURI())
	return ok, nil
}

func (s *session) rulesFor(ctx context.Context, origin string) (*robots.Rules, error) {
	s.mu.Lock()
	rules := s.robots[origin]
	s.mu.Unlock()
	if rules != nil {
		return rules, nil
	}
	rules, ok, err := s.r.robots.Get(ctx, origin)
	if err != nil {
		return nil, err
	}
	if !ok {
		if rules, err = s.fetchRobots(ctx, origin); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	s.robots[origin] = rules
	s.mu.Unlock()
	return rules, nil
}

// fetchRobots fetches origin's robots.txt as the worker's prerequisite
// would, records it, and puts it in the shared cache.
func (s *session) fetchRobots(ctx context.Context, origin string) (*robots.Rules, error) {
	u := origin + "/robots.txt"
	h := hop{path: s.l.HopPath() + string(messages.HopPrerequisite), via: s.l.URL}
	c, err := s.r.capture(ctx, s, u, h, fetch.Request{URL: u})
	if err != nil {
		return nil, err
	}
	defer c.resp.Close()
	if robots.FetchFailed(c.resp.StatusCode) {
		return nil, errors.New("robots.txt answered " + http.StatusText(c.resp.StatusCode))
	}
	body, err := io.ReadAll(io.LimitReader(c.resp.Payload.NewReader(), robots.MaxBodyBytes))
	if err != nil {
		return nil, fmt.Errorf("read robots.txt of %s: %w", origin, err)
	}
	return s.r.robots.Put(ctx, origin, c.resp.StatusCode, body, time.Now())
}
