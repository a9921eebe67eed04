package robots

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"
)

// parser accumulates groups while reading a robots.txt line by line.
type parser struct {
	groups   map[string]*group // by lower-cased token; "*" included
	order    []string          // named tokens in first-declaration order
	current  []*group          // groups the next rule lines apply to
	inAgents bool              // the previous directive was a User-agent line
	sitemaps []string
	seenMaps map[string]struct{}
}

func parseBody(body []byte) *Rules {
	body = bytes.TrimPrefix(limitBody(body), []byte("\xef\xbb\xbf"))
	p := &parser{groups: map[string]*group{}, seenMaps: map[string]struct{}{}}
	for len(body) > 0 {
		i := bytes.IndexAny(body, "\r\n")
		if i < 0 {
			p.line(string(body))
			break
		}
		p.line(string(body[:i]))
		body = body[i+1:]
	}
	return p.rules()
}

// limitBody cuts body to MaxBodyBytes. A body that reaches the limit may
// have been cut mid-line (by us or by the fetcher), so its last line is
// dropped: "Disallow: /private" cut to "Disallow: /p" would block more than
// the site asked, "Allow: /public/x" cut to "Allow: /" would allow more.
func limitBody(body []byte) []byte {
	if len(body) < MaxBodyBytes {
		return body
	}
	body = body[:MaxBodyBytes]
	if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
		return body[:i]
	}
	return nil
}

// line handles one physical line.
func (p *parser) line(s string) {
	if strings.IndexByte(s, '<') >= 0 {
		s = stripTags(s)
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	key, value, ok := strings.Cut(s, ":")
	if !ok {
		return
	}
	value = strings.TrimSpace(value)
	switch strings.ToLower(strings.TrimSpace(key)) {
	case "user-agent", "useragent":
		p.userAgent(value)
	case "disallow":
		p.rule(value, false)
	case "allow":
		p.rule(value, true)
	case "crawl-delay", "crawldelay":
		p.crawlDelay(value)
	case "sitemap":
		p.sitemap(value)
	}
}

func (p *parser) userAgent(value string) {
	if !p.inAgents {
		p.current = nil
		p.inAgents = true
	}
	token := lowerASCII(value)
	if token == "" {
		return
	}
	g := p.groups[token]
	if g == nil {
		g = &group{}
		p.groups[token] = g
		if token != "*" {
			p.order = append(p.order, token)
		}
	}
	if !slices.Contains(p.current, g) {
		p.current = append(p.current, g)
	}
}

func (p *parser) rule(value string, allow bool) {
	p.inAgents = false
	if value == "" {
		return
	}
	r := newRule(value, allow)
	for _, g := range p.current {
		g.rules = append(g.rules, r)
	}
}

func (p *parser) crawlDelay(value string) {
	p.inAgents = false
	d, ok := parseCrawlDelay(value)
	if !ok {
		return
	}
	for _, g := range p.current {
		g.delay, g.hasDelay = d, true
	}
}

func (p *parser) sitemap(value string) {
	if value == "" || len(p.sitemaps) >= MaxSitemaps {
		return
	}
	if _, dup := p.seenMaps[value]; dup {
		return
	}
	p.seenMaps[value] = struct{}{}
	p.sitemaps = append(p.sitemaps, value)
}

// rules freezes the parse into Rules, ordering each group's rules by
// precedence so Allowed can stop at the first match.
func (p *parser) rules() *Rules {
	for _, g := range p.groups {
		slices.SortStableFunc(g.rules, comparePrecedence)
	}
	r := &Rules{wildcard: p.groups["*"], sitemaps: p.sitemaps}
	for _, t := range p.order {
		r.named = append(r.named, agentGroup{token: t, g: p.groups[t]})
	}
	return r
}

// parseCrawlDelay reads the leading run of digits and dots as seconds, as
// Heritrix does ("10s" is 10 s; "-1", "abc" and "1.2.3" are ignored).
func parseCrawlDelay(value string) (time.Duration, bool) {
	end := strings.IndexFunc(value, func(c rune) bool { return (c < '0' || c > '9') && c != '.' })
	if end >= 0 {
		value = value[:end]
	}
	secs, err := strconv.ParseFloat(value, 64)
	if err != nil || secs < 0 {
		return 0, false
	}
	if secs >= MaxCrawlDelay.Seconds() {
		return MaxCrawlDelay, true
	}
	return time.Duration(secs * float64(time.Second)), true
}

// stripTags removes "<...>" spans, as Heritrix does for robots.txt files
// served wrapped in HTML.
func stripTags(s string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(s, '<')
		if open < 0 {
			break
		}
		closing := strings.IndexByte(s[open+1:], '>')
		if closing < 0 {
			break
		}
		if closing == 0 { // "<>" is not a tag
			b.WriteString(s[:open+2])
			s = s[open+2:]
			continue
		}
		b.WriteString(s[:open])
		s = s[open+1+closing+1:]
	}
	b.WriteString(s)
	return b.String()
}

// lowerASCII lower-cases ASCII letters only, matching containsFold.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = asciiLower(c)
	}
	return string(b)
}
