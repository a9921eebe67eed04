package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	"github.com/trawler-crawl/trawler/pkg/mitm"
	"github.com/trawler-crawl/trawler/pkg/robots"
)

// Outcome is what the archive made of one request of a replayed page.
type Outcome string

// The outcomes of a request through a Proxy.
const (
	// Answered: a capture of the URL was replayed (whatever its status:
	// a captured 404 is the page as it was).
	Answered Outcome = "answered"
	// Missing: no capture of the URL, on a host the archive has other
	// captures of: what the crawl could have fetched and did not, the
	// patch crawl's work.
	Missing Outcome = "missing"
	// Offsite: no capture of the URL, nor of anything else on its host:
	// outside what the crawl archived (another site, an address a crawler
	// refuses). Listed, but not counted against the page.
	Offsite Outcome = "offsite"
	// Robots: no capture of the URL, and the host's archived robots.txt
	// disallows it for the crawl's user agent: the crawl obeyed it.
	Robots Outcome = "robots"
	// Broken: the index has captures of the URL but none could be
	// loaded (a WARC file missing, a record truncated, an index line
	// pointing nowhere, a revisit without its original): a defect of the
	// archive itself.
	Broken Outcome = "broken"
)

// Exchange is one request of a replayed page and what the archive gave.
type Exchange struct {
	Method  string  `json:"method"`
	URL     string  `json:"url"`
	Outcome Outcome `json:"outcome"`
	// Status is the replayed status; 0 when nothing was answered.
	Status int `json:"status,omitempty"`
	// Capture is the 14-digit timestamp of the capture replayed.
	Capture string `json:"capture,omitempty"`
	// Error says why a Broken request could not be answered.
	Error string `json:"error,omitempty"`
}

// ProxyOptions configures NewProxy.
type ProxyOptions struct {
	// Resolver answers the lookups; required.
	Resolver *Resolver
	// Timestamp is the time the page is replayed at (1 to 14 digits),
	// normally its own capture's: each resource comes from the capture
	// closest to it.
	Timestamp string
	// UserAgent is the crawl's robots.txt user agent, to tell a URL the
	// crawl was forbidden from a missing one. Empty: robots.txt is not
	// consulted.
	UserAgent string
	// MaxBuffered bounds how much of a body is read before the answer
	// starts, so that a record cut short is found before the browser
	// takes it for whole; the rest of a longer body is streamed. 0 means
	// 32 MiB.
	MaxBuffered int64
}

// Proxy is a mitm.Handler that answers every request of one page from the
// archive alone, as pywb's replay would: it never opens a connection to
// the web (it has no dialer), and records each request's Outcome. It is
// safe for concurrent use.
type Proxy struct {
	o ProxyOptions

	mu        sync.Mutex
	exchanges []Exchange
	hosts     map[string]bool          // host URL -> archive has captures of it
	robots    map[string]*robots.Rules // origin -> its archived rules (nil: none)
}

// NewProxy returns a Proxy over o.Resolver.
func NewProxy(o ProxyOptions) (*Proxy, error) {
	if o.Resolver == nil {
		return nil, errors.New("replay proxy: Resolver is required")
	}
	if _, err := Timestamp14(o.Timestamp); err != nil {
		return nil, fmt.Errorf("replay proxy: %w", err)
	}
	if o.MaxBuffered <= 0 {
		o.MaxBuffered = 32 << 20
	}
	return &Proxy{o: o, hosts: map[string]bool{}, robots: map[string]*robots.Rules{}}, nil
}

// Exchanges returns the requests answered so far, in arrival order.
func (p *Proxy) Exchanges() []Exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Exchange(nil), p.exchanges...)
}

func (p *Proxy) note(e Exchange) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.exchanges = append(p.exchanges, e)
}

// Handle answers req from the archive. Whatever the method, the URL's
// GET capture answers (pywb's POST matching is not modelled). A URL the
// archive lacks gets 404 with X-Trawler-Replay naming the outcome; one
// whose captures cannot be loaded gets the proxy's 502.
func (p *Proxy) Handle(ctx context.Context, req *mitm.Request) (*mitm.Response, error) {
	ex := Exchange{Method: req.Method, URL: req.URL}
	resp, err := p.o.Resolver.Resolve(ctx, req.URL, p.o.Timestamp)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !errors.Is(err, ErrNotFound) {
			ex.Outcome, ex.Error = Broken, err.Error()
			p.note(ex)
			return nil, fmt.Errorf("replay proxy: %w", err)
		}
		ex.Outcome = p.whyMissing(ctx, req.URL)
		p.note(ex)
		return notInArchive(ex.Outcome), nil
	}
	out, err := p.answer(resp)
	if err != nil {
		ex.Outcome, ex.Error = Broken, err.Error()
		p.note(ex)
		return nil, fmt.Errorf("replay proxy: %w", err)
	}
	ex.Outcome, ex.Status, ex.Capture = Answered, resp.StatusCode, resp.Capture.Timestamp
	p.note(ex)
	return out, nil
}

// notInArchive is the answer for a URL without a capture.
func notInArchive(o Outcome) *mitm.Response {
	body := "not in the archive (" + string(o) + ")\n"
	h := http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "X-Trawler-Replay": {string(o)}}
	return &mitm.Response{StatusCode: http.StatusNotFound, Header: h, Body: strings.NewReader(body), BodyLength: int64(len(body))}
}

// answer turns a replayed capture into the browser's response: the stored
// payload with its chunked framing removed (the proxy frames the body
// itself) and its content coding kept, as the header declares it.
func (p *Proxy) answer(resp *Response) (*mitm.Response, error) {
	h := resp.Header.Clone()
	var body io.Reader = resp.Body
	if strings.Contains(strings.ToLower(strings.Join(h.Values("Transfer-Encoding"), ",")), "chunked") {
		body = httputil.NewChunkedReader(body)
	}
	h.Del("Transfer-Encoding")
	h.Del("Content-Length")
	buf, err := io.ReadAll(io.LimitReader(body, p.o.MaxBuffered))
	if err != nil {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("read %s: %w", resp.Capture.Original, err)
	}
	if int64(len(buf)) < p.o.MaxBuffered {
		_ = resp.Body.Close()
		return &mitm.Response{StatusCode: resp.StatusCode, Header: h, Body: bytes.NewReader(buf), BodyLength: int64(len(buf))}, nil
	}
	// Longer than the buffer: the rest streams, and a cut there aborts
	// the connection (mitm's chunked framing never ends cleanly).
	rest := struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(buf), body), resp.Body}
	return &mitm.Response{StatusCode: resp.StatusCode, Header: h, Body: rest, BodyLength: -1}, nil
}

// whyMissing tells a URL the crawl never reached (Offsite), was told by
// robots.txt not to fetch (Robots), or could have fetched (Missing).
func (p *Proxy) whyMissing(ctx context.Context, raw string) Outcome {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return Offsite
	}
	origin := u.Scheme + "://" + u.Host
	if !p.hostArchived(ctx, origin+"/") {
		return Offsite
	}
	if p.o.UserAgent != "" && !p.robotsFor(ctx, origin).Allowed(p.o.UserAgent, u.RequestURI()) {
		return Robots
	}
	return Missing
}

func (p *Proxy) hostArchived(ctx context.Context, hostURL string) bool {
	p.mu.Lock()
	known, ok := p.hosts[hostURL]
	p.mu.Unlock()
	if ok {
		return known
	}
	lines, err := p.o.Resolver.index.Query(ctx, Query{URL: hostURL, Host: true, Limit: 1})
	known = err == nil && len(lines) > 0
	p.mu.Lock()
	p.hosts[hostURL] = known
	p.mu.Unlock()
	return known
}

// robotsFor is the origin's robots.txt as the crawl archived it closest to
// the page; none archived (or unreadable) allows everything, as it did
// for the crawl.
func (p *Proxy) robotsFor(ctx context.Context, origin string) *robots.Rules {
	p.mu.Lock()
	rules, ok := p.robots[origin]
	p.mu.Unlock()
	if ok {
		return rules
	}
	if resp, err := p.o.Resolver.Resolve(ctx, origin+"/robots.txt", p.o.Timestamp); err == nil {
		if out, err := p.answer(resp); err == nil {
			b, _ := io.ReadAll(io.LimitReader(out.Body, robots.MaxBodyBytes))
			closeBody(out.Body)
			rules = robots.Parse(resp.StatusCode, b)
		}
	}
	p.mu.Lock()
	p.robots[origin] = rules
	p.mu.Unlock()
	return rules
}

func closeBody(r io.Reader) {
	if c, ok := r.(io.Closer); ok {
		_ = c.Close()
	}
}
