package robots

import (
	"slices"
	"sync/atomic"
	"time"
)

// Limits applied while parsing.
const (
	// MaxBodyBytes is how much of a robots.txt body is parsed and cached;
	// RFC 9309 2.5 lets a crawler stop at 500 KiB, and Heritrix does. A
	// fetcher may stop reading there too.
	MaxBodyBytes = 500 << 10
	// MaxSitemaps bounds the Sitemap URLs kept from one file.
	MaxSitemaps = 1000
	// MaxCrawlDelay caps a Crawl-delay so absurd values cannot overflow a
	// time.Duration; the frontier applies its own, lower, cap
	// (respectCrawlDelayUpToSeconds).
	MaxCrawlDelay = 24 * time.Hour
)

// Rules is one parsed robots.txt, for one scheme://host:port origin. It is
// immutable and safe for concurrent use. A nil *Rules behaves as a site
// without robots.txt (everything allowed, no delay, no sitemaps).
type Rules struct {
	named       []agentGroup // named user-agent tokens in first-declaration order
	wildcard    *group       // the "*" group, nil when the file has none
	sitemaps    []string
	disallowAll bool
	// fetched is when the file was fetched, set by the Cache; zero for
	// rules parsed outside it.
	fetched time.Time

	// lastChoice remembers the group chosen for the last User-Agent: a
	// crawl sends one User-Agent, and scanning it for every named token
	// costs more than matching the path.
	lastChoice atomic.Pointer[agentChoice]
}

// Fetched is when the robots.txt these rules come from was fetched, as
// the Cache recorded it; zero when they were parsed outside a Cache.
func (r *Rules) Fetched() time.Time { return r.fetched }

// agentChoice is a memoised group selection.
type agentChoice struct {
	userAgent string
	g         *group
}

// agentGroup ties one lower-cased user-agent token to its (merged) group.
type agentGroup struct {
	token string
	g     *group
}

// group holds the directives that apply to one user-agent token.
type group struct {
	rules    []rule // ordered by precedence: longest first, Allow first on ties
	delay    time.Duration
	hasDelay bool
}

// Parse builds Rules from a robots.txt fetch outcome. A 2xx status parses
// body (its first MaxBodyBytes); any other answer (1xx, 3xx, 4xx including
// 401 and 403) allows everything, as Heritrix does. Callers are expected to
// retry failures (FetchFailed) rather than parse them; if they do pass one,
// the result disallows everything (RFC 9309 2.3.1.4), which is the safe
// side. Parse never returns nil and never fails: unreadable lines are
// skipped.
func Parse(status int, body []byte) *Rules {
	switch {
	case status >= 200 && status < 300:
		return parseBody(body)
	case FetchFailed(status):
		return &Rules{disallowAll: true}
	default:
		return &Rules{}
	}
}

// Allowed reports whether the group of rules for userAgent lets the crawler
// fetch pathAndQuery ("/a/b?x=1"; "" means "/").
func (r *Rules) Allowed(userAgent, pathAndQuery string) bool {
	if r == nil {
		return true
	}
	if r.disallowAll {
		return false
	}
	if pathAndQuery == "" {
		pathAndQuery = "/"
	}
	if pathAndQuery == "/robots.txt" {
		// RFC 9309 2.2.2: the robots.txt URI is implicitly allowed.
		return true
	}
	g := r.group(userAgent)
	if g == nil {
		return true
	}
	path := upperEscapes(pathAndQuery)
	for i := range g.rules {
		if g.rules[i].matches(path) {
			return g.rules[i].allow
		}
	}
	return true
}

// CrawlDelay returns the Crawl-delay of userAgent's group; ok is false when
// that group sets none. A named group without Crawl-delay does not inherit
// the "*" group's (Heritrix reads only the selected group).
func (r *Rules) CrawlDelay(userAgent string) (d time.Duration, ok bool) {
	if r == nil {
		return 0, false
	}
	g := r.group(userAgent)
	if g == nil || !g.hasDelay {
		return 0, false
	}
	return g.delay, true
}

// Sitemaps returns the file's Sitemap URLs, raw (not resolved or
// validated), in file order, without duplicates, at most MaxSitemaps. The
// slice is the caller's.
func (r *Rules) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.sitemaps)
}

// group selects the directives for userAgent: the first named token, in
// file order, contained in the User-Agent (ASCII case-insensitively), else
// the "*" group; nil when neither exists.
func (r *Rules) group(userAgent string) *group {
	if c := r.lastChoice.Load(); c != nil && c.userAgent == userAgent {
		return c.g
	}
	g := r.wildcard
	for _, a := range r.named {
		if containsFold(userAgent, a.token) {
			g = a.g
			break
		}
	}
	r.lastChoice.Store(&agentChoice{userAgent: userAgent, g: g})
	return g
}

// containsFold reports whether token (already ASCII lower-case) occurs in s,
// folding ASCII upper-case letters of s. It avoids lower-casing the
// User-Agent on every call, which Allowed makes per URI.
func containsFold(s, token string) bool {
	n := len(token)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for j < n && asciiLower(s[i+j]) == token[j] {
			j++
		}
		if j == n {
			return true
		}
	}
	return false
}

func asciiLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
