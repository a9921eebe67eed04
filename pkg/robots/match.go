package robots

import (
	"cmp"
	"strings"
)

// rule is one Allow or Disallow line, compiled.
type rule struct {
	allow    bool
	length   int      // octets of the normalised pattern: its precedence
	literal  string   // the pattern when it has no "*" (without a final "$")
	segments []string // the pattern split at "*"; nil for a literal
	anchored bool     // the pattern ended in "$"
}

// newRule compiles a non-empty Allow or Disallow value.
func newRule(value string, allow bool) rule {
	pattern := strings.TrimRight(normalizePattern(value), "*")
	switch {
	case pattern == "":
		// "Disallow: *" means everything; "/" has the same reach and the
		// same length as "*".
		pattern = "/"
	case pattern[0] != '/' && pattern[0] != '*':
		pattern = "/" + pattern
	}
	r := rule{allow: allow, length: len(pattern)}
	body := pattern
	if strings.HasSuffix(body, "$") {
		body = body[:len(body)-1]
		r.anchored = true
	}
	if strings.Contains(body, "*") {
		r.segments = strings.Split(body, "*")
	} else {
		r.literal = body
	}
	return r
}

// comparePrecedence orders rules so that the first one matching a path is
// the one RFC 9309 and Heritrix apply: longest pattern first, Allow before
// Disallow at equal length.
func comparePrecedence(a, b rule) int {
	if c := cmp.Compare(b.length, a.length); c != 0 {
		return c
	}
	switch {
	case a.allow == b.allow:
		return 0
	case a.allow:
		return -1
	default:
		return 1
	}
}

// matches reports whether the rule's pattern matches path from its start.
func (r *rule) matches(path string) bool {
	if r.segments == nil {
		if r.anchored {
			return path == r.literal
		}
		return strings.HasPrefix(path, r.literal)
	}
	first, last := r.segments[0], len(r.segments)-1
	if !strings.HasPrefix(path, first) {
		return false
	}
	pos := len(first)
	// The middle segments are placed as early as possible, which leaves the
	// most room for those after them, so a left-most search never misses.
	for _, seg := range r.segments[1:last] {
		i := strings.Index(path[pos:], seg)
		if i < 0 {
			return false
		}
		pos += i + len(seg)
	}
	tail := r.segments[last]
	if r.anchored {
		return len(path)-len(tail) >= pos && strings.HasSuffix(path, tail)
	}
	return strings.Contains(path[pos:], tail)
}

// normalizePattern percent-encodes the octets a normalised URL never
// carries raw (non-ASCII, controls, space) and upper-cases existing %xx
// escapes, so a pattern written in UTF-8 or with lower-case escapes matches
// the URL the crawler holds (RFC 9309 2.2.2).
func normalizePattern(s string) string {
	if !needsEncoding(s) {
		return upperEscapes(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0x0f])
			continue
		}
		b.WriteByte(c)
	}
	return upperEscapes(b.String())
}

const hexDigits = "0123456789ABCDEF"

func needsEncoding(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return true
		}
	}
	return false
}

// upperEscapes upper-cases the hex digits of %xx escapes ("%c3%a9" becomes
// "%C3%A9"). It returns s itself, without allocating, when nothing changes,
// which is the common case for paths normalised by pkg/uri.
func upperEscapes(s string) string {
	var b []byte
	for i := 0; i+2 < len(s); i++ {
		if s[i] != '%' || !isHex(s[i+1]) || !isHex(s[i+2]) {
			continue
		}
		for _, j := range [2]int{i + 1, i + 2} {
			if c := s[j]; 'a' <= c && c <= 'f' {
				if b == nil {
					b = []byte(s)
				}
				b[j] = c - 'a' + 'A'
			}
		}
		i += 2
	}
	if b == nil {
		return s
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
