package scope

import (
	"fmt"
	"strconv"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

// Result is a rule's answer.
type Result int8

// Rule answers. PASS (Heritrix's NONE) leaves the decision to other rules.
const (
	Pass Result = iota
	Accept
	Reject
)

func (r Result) String() string {
	switch r {
	case Accept:
		return "ACCEPT"
	case Reject:
		return "REJECT"
	}
	return "PASS"
}

func parseResult(s string) (Result, error) {
	switch s {
	case profile.Accept:
		return Accept, nil
	case profile.Reject:
		return Reject, nil
	}
	return Pass, fmt.Errorf("decision %q: want ACCEPT or REJECT", s)
}

// Decision is the outcome of a scope check.
type Decision struct {
	Result Result
	// Rule is the 1-based number, in profile order, of the rule that
	// decided; the excluded-SURTs check counts as the rule after the last.
	// 0 when no rule answered.
	Rule int
	// RuleName is the deciding rule's Heritrix class name.
	RuleName string
	// Annotations to add to the URI, e.g. "geo:GB".
	Annotations []string
}

// Accepted reports whether the URI is in scope. Like Heritrix's candidate
// scoper, only an explicit ACCEPT admits; PASS does not.
func (d Decision) Accepted() bool { return d.Result == Accept }

// String is the form recorded in extra_info.scopeDecision, as UKWA's
// AccountableDecideRuleSequence writes it but with 1-based numbering:
// "ACCEPT by rule #3 SurtPrefixedDecideRule".
func (d Decision) String() string {
	if d.Rule == 0 {
		return "PASS (no rule decided)"
	}
	return d.Result.String() + " by rule #" + strconv.Itoa(d.Rule) + " " + d.RuleName
}

// Params are the per-URI thresholds, read from the effective profile of
// each candidate so that sheets can change them for a SURT prefix.
type Params struct {
	MaxHops            int // -1: no limit
	MaxTransHops       int
	MaxSpeculativeHops int
	MaxPathDepth       int
	MaxRepetitions     int // 0: PathologicalPathDecideRule never matches
}

// ParamsFrom reads the thresholds of a (possibly sheet-overridden) scope
// section.
func ParamsFrom(s profile.Scope) Params {
	return Params{
		MaxHops: s.MaxHops, MaxTransHops: s.MaxTransHops, MaxSpeculativeHops: s.MaxSpeculativeHops,
		MaxPathDepth: s.MaxPathDepth, MaxRepetitions: s.MaxRepetitions,
	}
}

// Candidate is a URI to decide. Build it with NewCandidate, then fill the
// discovery fields. A Candidate is used by one goroutine at a time.
type Candidate struct {
	// URL is the canonical URL string (what crawl.log and events carry).
	URL string
	// SURT is the Heritrix SURT of URL with https folded to http.
	SURT string
	// Via is the URL the candidate was discovered on; empty for seeds.
	Via string
	// HopPath is the hop letters from the seed (ARCHITECTURE.md 4.3).
	HopPath string
	IsSeed  bool
	// SourceTag is the seed's source tag (heritableData.source).
	SourceTag string
	// Params are the thresholds for this URI; nil means the engine's
	// profile defaults.
	Params *Params

	parsed  *whatwg.Url // URL parsed by the WHATWG parser, on first use
	normal  bool        // URL is an http(s) URL in normal form (uri.IsNormal)
	viaSURT string      // computed on first use
}

// scheme is the URL's scheme; a URL in normal form needs no parse for it.
func (c *Candidate) scheme() (string, bool) {
	if c.normal {
		s, _, _ := strings.Cut(c.URL, "://")
		return s, true
	}
	if u := c.Parsed(); u != nil {
		return u.Scheme(), true
	}
	return "", false
}

// pathname is the URL's path, as the parser gives it; a URL in normal form
// needs no parse for it.
func (c *Candidate) pathname() (string, bool) {
	if c.normal {
		_, rest, _ := strings.Cut(c.URL, "://")
		p := rest[strings.IndexByte(rest, '/'):] // normal form has one
		if i := strings.IndexByte(p, '?'); i >= 0 {
			p = p[:i]
		}
		return p, true
	}
	if u := c.Parsed(); u != nil {
		return u.Pathname(), true
	}
	return "", false
}

// Parsed returns URL parsed by the WHATWG parser (nil if it does not
// parse, which NewCandidate rules out).
func (c *Candidate) Parsed() *whatwg.Url {
	if c.parsed == nil {
		c.parsed, _ = whatwg.Parse(c.URL)
	}
	return c.parsed
}

// NewCandidate parses a canonical URL and computes its SURT. Any scheme
// parses, so that SchemeNotInSetDecideRule can judge it.
func NewCandidate(canonicalURL string) (*Candidate, error) {
	if strings.TrimSpace(canonicalURL) == "" {
		return nil, fmt.Errorf("scope candidate: empty URL")
	}
	if uri.IsNormal(canonicalURL) {
		// Its own serialisation: the parse waits until a rule needs it.
		return &Candidate{URL: canonicalURL, SURT: surt.HeritrixParsed(canonicalURL, canonicalURL), normal: true}, nil
	}
	u, err := whatwg.Parse(canonicalURL)
	if err != nil {
		return nil, fmt.Errorf("scope candidate %q: %w", canonicalURL, err)
	}
	return &Candidate{URL: canonicalURL, parsed: u, SURT: surt.HeritrixParsed(canonicalURL, u.Href(true))}, nil
}

// NewCandidateParsed builds a candidate from a URL the caller has already
// parsed and normalised (uri.Parse), saving one parse: URL becomes its
// serialisation without fragment.
func NewCandidateParsed(u *whatwg.Url) (*Candidate, error) {
	if u == nil {
		return nil, fmt.Errorf("scope candidate: nil URL")
	}
	href := u.Href(true)
	return &Candidate{URL: href, parsed: u, SURT: surt.HeritrixParsed(href, href)}, nil
}

// viaSURTForm returns the SURT of Via (empty when there is none).
func (c *Candidate) viaSURTForm() string {
	if c.viaSURT == "" && c.Via != "" {
		c.viaSURT = surt.Heritrix(c.Via)
	}
	return c.viaSURT
}

// host is the candidate's host name without IPv6 brackets.
func (c *Candidate) host() string {
	if c.normal {
		_, rest, _ := strings.Cut(c.URL, "://")
		auth := rest[:strings.IndexByte(rest, '/')] // normal form has one
		if i := strings.IndexByte(auth, ':'); i >= 0 {
			auth = auth[:i]
		}
		return auth
	}
	u := c.Parsed()
	if u == nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(u.Hostname(), "["), "]")
}
