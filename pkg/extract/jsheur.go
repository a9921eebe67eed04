package extract

import (
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// The patterns below are Heritrix's UriUtils patterns. Go's regexp
// package matches in linear time, so unlike java.util.regex they cannot
// blow up on adversarial strings; candidates are at most maxJSString
// bytes anyway. Compiled regexps are safe for concurrent use and never
// modified.
var (
	absoluteURIRe = regexp.MustCompile(`^(?i:https?)://[^<>\s\v/]+\.[^<>\s\v/]+(?:/[^<>\s\v]*)?$`)
	protoRelURIRe = regexp.MustCompile(`^//[^<>\s\v/]+\.[^<>\s\v/]+(?:/[^<>\s\v]*)?$`)
	// likelyRelativeRe is LIKELY_RELATIVE_URI_PATTERN: optional "/" or
	// "./", path segments, a filename (group 1) with an optional
	// extension (group 2), a query of name=value pairs and a fragment.
	likelyRelativeRe = regexp.MustCompile(`^(?:\.?/)?(?:(?:[\s\v\w-]+|\.\.)/)*` +
		`([\s\v\w-]+(?:\.[\w-]+)??(\.[a-zA-Z0-9]{2,5})?)?` +
		`(?:\?(?:` + qnv + `)(?:&(?:` + qnv + `))*)?` +
		`(?:#[\w-]+)?$`)
	mimeLikeRe    = regexp.MustCompile(`^(?:text|application)/[^/]+$`)
	decimalRe     = regexp.MustCompile(`^\d+(?:\.\d+)*$`)
	cssSelectorRe = regexp.MustCompile(`^([^./]+)\.[^./]+$`)
)

// qnv is a name=value pair of a likely query string.
const qnv = `[a-zA-Z_]+=(?:[\w/.-]|%[0-9a-fA-F]{2})*`

// veryLikelyURI is UriUtils.isVeryLikelyUri, which ExtractorJS uses to
// keep false positives (MIME types, numbers, CSS selectors, prose) out of
// the frontier.
func veryLikelyURI(s string) bool {
	if !strings.ContainsAny(s, "./") || strings.ContainsAny(s, "<>") {
		return false
	}
	if absoluteURIRe.MatchString(s) || protoRelURIRe.MatchString(s) {
		return true
	}
	if !relativeChars(s) {
		return false // cheap rejection of what likelyRelativeRe cannot match
	}
	if !likelyRelative(s) {
		return false
	}
	if mimeLikeRe.MatchString(s) || mediaMIMEType(s) || decimalRe.MatchString(s) {
		return false
	}
	// "div.menu", "a.help": CSS selectors, not files.
	if m := cssSelectorRe.FindStringSubmatch(s); m != nil && htmlTag(strings.ToLower(m[1])) {
		return false
	}
	return true
}

// speculativeFixup is UriUtils.speculativeFixup: un-escape &amp;, decode
// percent-encoded absolute URLs, and give "www.example.com/x" (a host name
// ending in a TLD) a scheme: base's if it starts with base's host, else
// http.
func speculativeFixup(s, base string) string {
	s = strings.ReplaceAll(s, "&amp;", "&")
	if hasPrefixFold(s, "http%3A") || hasPrefixFold(s, "https%3A") {
		s = laxURLDecode(s)
	}
	host := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		if strings.ContainsAny(s[i:], "\n\r") {
			return s // Java's "." in (?:/.*)? stops at line ends
		}
		host = s[:i]
	}
	dot := strings.LastIndexByte(host, '.')
	if dot <= 0 || dot == len(host)-1 || strings.Contains(host, "..") || host[0] == '.' {
		return s
	}
	if isTLD(host[dot+1:]) {
		if u, err := url.Parse(base); err == nil && u.Hostname() != "" && strings.HasPrefix(s, u.Hostname()) {
			return u.Scheme + "://" + s
		}
		return "http://" + s
	}
	return s
}

// isTLD reports whether label is a top-level domain as Heritrix's
// ArchiveUtils.isTld knows them: its list is IANA's of 2010, before the
// new generic TLDs (.menu, .zip, .map) that would turn "div.menu" or
// "jquery.min.map" into host names. So: a country code or IDN TLD, or one
// of the generic TLDs of then, that the public suffix list still has.
func isTLD(label string) bool {
	label = strings.ToLower(label)
	if suffix, icann := publicsuffix.PublicSuffix(label); !icann || suffix != label {
		return false
	}
	if len(label) == 2 || strings.HasPrefix(label, "xn--") {
		return true
	}
	switch label {
	case "aero", "arpa", "asia", "biz", "cat", "com", "coop", "edu", "gov", "info", "int",
		"jobs", "mil", "mobi", "museum", "name", "net", "org", "pro", "tel", "travel":
		return true
	}
	return false
}

// laxURLDecode decodes %XX escapes and '+' as Heritrix's LaxURLCodec
// does, keeping malformed escapes as they are.
func laxURLDecode(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b.WriteByte(' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(byte(hexVal(s[i+1 : i+3])))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// likelyRelative applies likelyRelativeRe and its filename checks: a
// filename with two dots, or a reference with white space, must end with
// a known good extension (jquery.min.js yes, some.thing.else no). The
// submatches are costly, so they are computed only when needed.
func likelyRelative(s string) bool {
	spaced := strings.ContainsAny(s, " \t\n\v\f\r")
	if !spaced && strings.Count(s, ".") < 2 {
		return likelyRelativeRe.MatchString(s)
	}
	m := likelyRelativeRe.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	filename, ext := m[1], m[2]
	if filename != "" && ext != "" && strings.IndexByte(filename, '.') != strings.LastIndexByte(filename, '.') &&
		!knownGoodExtension(ext) {
		return false
	}
	return !spaced || knownGoodExtension(ext)
}

// relativeChars reports whether every byte of s may occur in a match of
// likelyRelativeRe: word characters, white space and -./?=&%#.
func relativeChars(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '_' || c == '-' || c == '.' || c == '/' || c == '?' || c == '=' || c == '&' || c == '%' || c == '#':
		case c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r':
		default:
			return false
		}
	}
	return true
}

func knownGoodExtension(ext string) bool {
	switch ext {
	case ".jpg", ".js", ".css", ".png", ".gif", ".swf", ".flv", ".mp4", ".mp3", ".jpeg", ".html", ".pdf":
		return true
	}
	return false
}
