package extract

import (
	"io"
	"strings"
)

// ContextJSMisc is Heritrix's context for links found by speculative
// JavaScript string scanning.
const ContextJSMisc = "=JS_MISC"

// maxJSString is the longest string literal considered, Heritrix's
// UURI.MAX_URL_LENGTH as used in ExtractorJS's pattern.
const maxJSString = 2083

// maxJSBackslashes is how many backslashes may escape a quote delimiter
// (ExtractorJS's \\{0,8}+), for strings in strings in strings.
const maxJSBackslashes = 8

// JS extracts speculative links (hop X, context "=JS_MISC") from a
// JavaScript (or JSON) document streamed from r, as Heritrix's ExtractorJS
// does: every quoted string that looks very much like a URL or path is
// resolved against base, except the identifiers and names plausibleGuess
// tells from links. Heritrix resolves strings of a script file against
// the page that included it (the via), because script paths are relative
// to the document, so the worker passes that as base.
// Extraction stops silently at MaxBytes or MaxLinks; the only error is a
// failed read of r.
func JS(r io.Reader, base string, o Options) ([]Link, error) {
	o = o.withDefaults()
	lr := &limitReader{r: r, n: o.MaxBytes}
	data, err := readAll(lr)
	c := newCollector(o)
	scanJS(data, base, func(ref string) bool {
		return c.add(base, ref, hopSpec, ContextJSMisc)
	})
	return c.links, readErr("js", lr.read, err)
}

// scanJS calls emit for every string literal of s that passes the URL
// heuristics (Heritrix's, then plausibleGuess), in order, until emit
// returns false.
func scanJS(s, base string, emit func(string) bool) {
	// Scripts repeat their strings; a literal already judged against this
	// base gives nothing new, whatever the verdict was.
	seen := map[string]struct{}{}
	scanJSStrings(s, func(lit string) bool {
		if len(lit) <= maxCachedLiteral && len(seen) < maxCachedLiterals {
			if _, dup := seen[lit]; dup {
				return true
			}
			seen[lit] = struct{}{}
		}
		ref, ok := jsCandidate(lit, base)
		if !ok || !plausibleGuess(lit, ref) {
			return true
		}
		return emit(ref)
	})
}

// Bounds of scanJS's memory of literals: at most 1 MiB of keys.
const (
	maxCachedLiteral  = 256
	maxCachedLiterals = 4096
)

// scanJSStrings finds the strings ExtractorJS's pattern
// (\\{0,8}+(?:['"]|u002[27]))([^'"]{0,2083})\1 finds, searching again
// right after each opening delimiter, but in one pass without
// backtracking: every delimiter (a quote or a u0022/u0027 escape, with
// the backslashes before it) is tried once per possible backslash count,
// and the closing delimiter is looked for only up to the next quote
// character, whose position is cached. Work is linear in len(s).
//
// Unlike the regular expression, a u0022/u0027 string ends at the first
// matching delimiter rather than the last one before the next quote; the
// regex finds those shorter strings too when it searches again.
func scanJSStrings(s string, lit func(string) bool) {
	nextQuote := -1 // index of the next ' or " at or after the cursor, or len(s)
	floor := 0      // no opening delimiter may start before this
	for i := 0; i < len(s); {
		p, dlen := nextJSDelimiter(s, i)
		if p < 0 {
			return
		}
		cs := p + dlen
		if nextQuote < cs {
			nextQuote = indexQuote(s, cs)
		}
		run := 0
		for run < maxJSBackslashes && p-run-1 >= floor && s[p-run-1] == '\\' {
			run++
		}
		for b := run; b >= 0; b-- {
			end, ok := jsClose(s, cs, nextQuote, s[p-b:cs])
			if !ok {
				continue
			}
			if !lit(s[cs:end]) {
				return
			}
			break
		}
		floor, i = cs, cs
	}
}

// nextJSDelimiter returns the position and length of the first quote or
// u0022/u0027 at or after i, or -1.
func nextJSDelimiter(s string, i int) (int, int) {
	for ; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			return i, 1
		case 'u':
			if i+5 <= len(s) && s[i+1:i+4] == "002" && (s[i+4] == '2' || s[i+4] == '7') {
				return i, 5
			}
		}
	}
	return -1, 0
}

func indexQuote(s string, from int) int {
	if j := strings.IndexAny(s[from:], `'"`); j >= 0 {
		return from + j
	}
	return len(s)
}

// jsClose returns where the string content starting at cs ends, if the
// delimiter delim closes it within maxJSString bytes and before the next
// quote nq.
func jsClose(s string, cs, nq int, delim string) (int, bool) {
	last := delim[len(delim)-1]
	if last == '"' || last == '\'' {
		// The content holds no quote, so the closing delimiter ends at nq.
		end := nq - len(delim) + 1
		if nq >= len(s) || end < cs || end-cs > maxJSString || s[end:nq+1] != delim {
			return 0, false
		}
		return end, true
	}
	limit := min(nq, cs+maxJSString+len(delim))
	j := strings.Index(s[cs:limit], delim)
	if j < 0 {
		return 0, false
	}
	return cs + j, true
}

// jsCandidate applies ExtractorJS.considerString to a string literal: a
// quick look for URL-ness, ECMAScript unescaping, Heritrix's speculative
// fix-up, then the strict "very likely a URI" test. It returns the
// reference to resolve.
func jsCandidate(lit, base string) (string, bool) {
	if !possibleURI(lit) {
		return "", false
	}
	ref := speculativeFixup(unescapeJS(lit), base)
	if !veryLikelyURI(ref) {
		return "", false
	}
	return ref, true
}

// possibleURI is UriUtils.isPossibleUri: no angle brackets, and a dot or
// a slash somewhere.
func possibleURI(s string) bool {
	return !strings.ContainsAny(s, "<>") && strings.ContainsAny(s, "./")
}

// unescapeJS decodes ECMAScript escapes as commons-text's
// unescapeEcmaScript does: octal, \uXXXX (also \uuXXXX), control escapes,
// and a backslash before anything else is dropped.
func unescapeJS(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i = unescapeOne(s, i, &b)
	}
	return b.String()
}

// unescapeOne decodes the escape whose backslash is at s[i] and returns the
// index of its last byte.
func unescapeOne(s string, i int, b *strings.Builder) int {
	c := s[i+1]
	switch {
	case c == 'u':
		j := i + 1
		for j < len(s) && s[j] == 'u' {
			j++
		}
		if j+4 <= len(s) && isHex4(s[j:j+4]) {
			b.WriteRune(rune(hexVal(s[j : j+4])))
			return j + 3
		}
		b.WriteByte('u') // malformed: the lone-backslash rule drops "\"
		return i + 1
	case '0' <= c && c <= '7':
		return unescapeOctal(s, i, b)
	}
	switch c {
	case 'b':
		b.WriteByte('\b')
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'f':
		b.WriteByte('\f')
	case 'r':
		b.WriteByte('\r')
	default:
		b.WriteByte(c)
	}
	return i + 1
}

// unescapeOctal decodes \7, \77 or \377 (three digits only when the first
// is 0-3).
func unescapeOctal(s string, i int, b *strings.Builder) int {
	j, v := i+1, 0
	maxDigits := 2
	if s[i+1] <= '3' {
		maxDigits = 3
	}
	for j < len(s) && j < i+1+maxDigits && '0' <= s[j] && s[j] <= '7' {
		v = v*8 + int(s[j]-'0')
		j++
	}
	b.WriteRune(rune(v))
	return j - 1
}

func isHex4(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

func hexVal(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		v = v*16 + int(c)
	}
	return v
}
