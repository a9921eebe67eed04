// Package traps recognises crawler traps: hosts that generate endless
// distinct URLs. Heritrix leaves them to scope rules (hop counts, path
// depth, PathologicalPathDecideRule's repeated segments) and queue
// budgets; Zeno v2 detects them. Two heuristics here, each tunable in the
// profile (scope.traps):
//
//   - Query growth: a query longer than MaxQueryBytes, with more than
//     MaxQueryParams parameters, or naming one parameter more than
//     MaxRepeatedParam times, is what a page appending to its own URL
//     makes (ever-growing query strings). Such a link is dropped at once.
//   - Self-similar sequences: a page linking new URLs of its own pattern
//     (the URL with every run of digits, and every long hexadecimal or
//     base64-like token, replaced; query values dropped) on the same host
//     is how a calendar's next day, an endless paginator or a session id
//     in a path goes on for ever. The new URLs each such pattern admits
//     are counted per host in Redis (Budget); past MaxPerPattern the
//     pattern is trapped and further self-similar links of it dropped.
//     Links of the pattern from other pages (a site's index of its
//     articles) are never counted nor dropped.
//
// Session ids in standard forms (jsessionid, ASP.NET's) are already taken
// out of the seen key by the CDX canonicalisation (pkg/surt), so URLs that
// differ only by one are not new URLs at all.
package traps

import (
	"net/url"
	"strings"
)

// Kinds of trap, the label of the worker's counter and the annotation
// ("trap:<kind>") of the page whose links were dropped.
const (
	KindQuery   = "query"
	KindPattern = "pattern"
)

// Options tune the heuristics; zero fields take the defaults.
type Options struct {
	MaxQueryBytes    int
	MaxQueryParams   int
	MaxRepeatedParam int
	// MaxPerPattern bounds the new URLs one self-similar pattern of a
	// host admits; negative turns the pattern budget off.
	MaxPerPattern int64
}

// Defaults of Options.
const (
	DefaultMaxQueryBytes    = 1024
	DefaultMaxQueryParams   = 48
	DefaultMaxRepeatedParam = 4
	DefaultMaxPerPattern    = 10000
)

// WithDefaults fills zero fields.
func (o Options) WithDefaults() Options {
	if o.MaxQueryBytes <= 0 {
		o.MaxQueryBytes = DefaultMaxQueryBytes
	}
	if o.MaxQueryParams <= 0 {
		o.MaxQueryParams = DefaultMaxQueryParams
	}
	if o.MaxRepeatedParam <= 0 {
		o.MaxRepeatedParam = DefaultMaxRepeatedParam
	}
	if o.MaxPerPattern == 0 {
		o.MaxPerPattern = DefaultMaxPerPattern
	}
	return o
}

// QueryTrap reports whether u's query grows as a trap's does.
func (o Options) QueryTrap(u *url.URL) bool {
	q := u.RawQuery
	if q == "" {
		return false
	}
	if len(q) > o.MaxQueryBytes {
		return true
	}
	params := strings.Split(q, "&")
	if len(params) > o.MaxQueryParams {
		return true
	}
	seen := make(map[string]int, len(params))
	for _, p := range params {
		name, _, _ := strings.Cut(p, "=")
		if seen[name]++; seen[name] > o.MaxRepeatedParam {
			return true
		}
	}
	return false
}

// Pattern is u's shape: its path with every run of digits replaced by
// "9" and every long id-like token by "h", and its query's parameter
// names in order with their values dropped. variable is false for a URL
// with nothing that varies (no digits, ids or query values): such URLs
// are finite and never counted.
func Pattern(u *url.URL) (pattern string, variable bool) {
	var b strings.Builder
	b.Grow(len(u.EscapedPath()) + len(u.RawQuery))
	for i, seg := range strings.Split(u.EscapedPath(), "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		if idLike(seg) {
			b.WriteByte('h')
			variable = true
			continue
		}
		if digitsOut(&b, seg) {
			variable = true
		}
	}
	if u.RawQuery != "" {
		b.WriteByte('?')
		for i, p := range strings.Split(u.RawQuery, "&") {
			name, value, _ := strings.Cut(p, "=")
			if i > 0 {
				b.WriteByte('&')
			}
			digitsOut(&b, name)
			b.WriteByte('=')
			variable = variable || value != ""
		}
	}
	return b.String(), variable
}

// digitsOut writes s with each run of ASCII digits as one "9" and
// reports whether there was one.
func digitsOut(b *strings.Builder, s string) bool {
	found := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			b.WriteByte(c)
			continue
		}
		found = true
		b.WriteByte('9')
		for i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
			i++
		}
	}
	return found
}

// idLike reports whether a path segment is a generated token: at least
// 16 characters of letters, digits, '-' and '_' with both digits and
// letters (a hash, a UUID, a session id), not a word.
func idLike(s string) bool {
	if len(s) < 16 {
		return false
	}
	var digits, letters int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
		case c == '-' || c == '_':
		default:
			return false
		}
	}
	return digits >= 3 && letters > 0
}
