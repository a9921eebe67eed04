// Package surt turns URLs into SURTs (Sort-friendly URI Reordering
// Transform), in the two flavours a web archive needs:
//
//   - Heritrix form (Heritrix, ImpliedPrefix): "http://(org,example,www,)/path",
//     used by scope rules and sheet associations. It keeps the scheme (https is
//     folded to http so one prefix covers both) and www, and a seed implies
//     a prefix that admits everything "under" it.
//   - CDX key form (CDXKey): "org,example)/path", the Internet Archive's
//     canonical form used as the urlkey of CDX indexes, OutbackCDX and pywb;
//     it drops the scheme and www, sorts query arguments and strips session
//     ids, so that trivially different URLs share one key.
//
// Both follow the reference implementations (Heritrix's SURT and
// SurtPrefixSet; the Python surt package used by pywb) behaviour for behaviour,
// including their quirks, because keys must match indexes built by them.
package surt

import (
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"

	"github.com/trawler-crawl/trawler/pkg/uri"
)

// Heritrix returns the Heritrix SURT form of u, as Heritrix computes it for
// seeds and SURT-prefix files (SURT.fromPlain) with https folded to http:
//
//	http://WWW.Example.ORG:8080/x   ->  http://(org,example,www,:8080)/x
//	https://user@example.org/a      ->  http://(org,example,@user)/a
//
// A string without a scheme is taken as an http URL ("example.org/a"). The
// URL is first normalised (lowercase host, punycode, default port removed,
// fragment dropped) but, as in Heritrix, no trailing slash is added: "is
// there a slash after the host" changes the implied prefix. Dotted-quad IPv4
// hosts are not reversed. Like Heritrix the whole result is lowercased, path
// included, so prefix matching is case-insensitive. A string that is not an
// authority-based URL (mailto:, dns:) is returned unchanged.
func Heritrix(u string) string {
	return foldHTTPS(fromPlain(u))
}

// HeritrixParsed is Heritrix(u) for a URL the caller has already parsed
// with whatwg-url, href being its serialisation without fragment: the
// scope's candidates are parsed anyway, and the second parse was a fifth of
// their cost. u must be absolute (have a scheme).
func HeritrixParsed(u, href string) string {
	if !strings.HasSuffix(strings.TrimSpace(u), "/") && strings.HasSuffix(href, "/") {
		href = href[:len(href)-1]
	}
	return foldHTTPS(fromURI(href))
}

// ImpliedPrefix returns the SURT prefix Heritrix deduces from a seed or a
// plain URL line of a SURT-prefix file (SurtPrefixSet.prefixFromPlain): the
// Heritrix form with its last path segment removed, and with the closing
// ")" removed when there is no path, so that subdomains match too:
//
//	http://www.example.org/main/subsection  ->  http://(org,example,www,)/main/
//	http://www.example.org                  ->  http://(org,example,www,
func ImpliedPrefix(u string) string {
	return foldHTTPS(asPrefix(fromPlain(u)))
}

// fromPlain is Heritrix's SURT.fromPlain: implied http, URL fix-up without
// adding a trailing slash, then the SURT transform.
func fromPlain(u string) string {
	u = strings.TrimSpace(u)
	u = addImpliedHTTP(u)
	if uri.IsNormal(u) {
		return fromURI(u) // fix-up would return it unchanged
	}
	trailingSlash := strings.HasSuffix(u, "/")
	// Heritrix carries on with the original string when fix-up fails.
	if p, err := whatwg.Parse(u); err == nil {
		u = p.Href(true)
	}
	if !trailingSlash && strings.HasSuffix(u, "/") {
		u = u[:len(u)-1]
	}
	return fromURI(u)
}

// addImpliedHTTP prefixes "http://" when u has no scheme: no colon at all, or
// a dot before the first colon ("example.org:8080/").
func addImpliedHTTP(u string) string {
	colon := strings.IndexByte(u, ':')
	dot := strings.IndexByte(u, '.')
	if colon < 0 || (dot >= 0 && dot < colon) {
		return "http://" + u
	}
	return u
}

func foldHTTPS(s string) string {
	if rest, ok := strings.CutPrefix(s, "https://"); ok {
		return "http://" + rest
	}
	return s
}

// asPrefix truncates a SURT to the prefix it implies (SurtPrefixSet.asPrefix).
func asPrefix(s string) string {
	// Drop everything after the last slash, provided that slash comes after
	// the "//" of the scheme (that is, the SURT has a path).
	if dbl := strings.Index(s, "//"); dbl >= 0 {
		if last := strings.LastIndexByte(s, '/'); last >= dbl+2 {
			s = s[:last+1]
		}
	}
	// No path: open the authority so subdomains match.
	if !strings.HasSuffix(s, "/") {
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			s = s[:i] + s[i+1:]
		}
	}
	return s
}

// authority is a URL split the way Heritrix's SURT transform splits it.
type authority struct {
	scheme   string // including "://"
	userinfo string // without "@"
	hasUser  bool
	host     string
	isIPv4   bool
	port     string // including ":"
	path     string // from the first "/", possibly empty
}

// fromURI is Heritrix's SURT.fromURI with case folding: scheme://(reversed
// host,:port@userinfo)path. Non-matching strings are returned unchanged.
func fromURI(s string) string {
	a, ok := splitAuthority(s)
	if !ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 3)
	b.WriteString(a.scheme)
	b.WriteByte('(')
	if a.isIPv4 {
		b.WriteString(a.host)
	} else {
		writeReversedHost(&b, a.host)
	}
	b.WriteString(a.port)
	if a.hasUser {
		b.WriteByte('@')
		b.WriteString(a.userinfo)
	}
	b.WriteByte(')')
	b.WriteString(a.path)
	return strings.ToLower(b.String())
}

// writeReversedHost writes the dot-separated labels of host in reverse
// order, each followed by a comma ("www.example.org" -> "org,example,www,").
func writeReversedHost(b *strings.Builder, host string) {
	end := len(host)
	for i := len(host) - 1; i >= 0; i-- {
		if i > 0 && host[i-1] != '.' {
			continue
		}
		b.WriteString(host[i:end])
		b.WriteByte(',')
		end = i - 1
	}
}

// splitAuthority splits s as Heritrix's URI_SPLITTER pattern does:
// scheme "\w+://", optional userinfo "...@", a dotted-quad or other host
// (shortest that lets the rest parse), optional ":digits" port and optional
// "/..." path, with no whitespace anywhere.
func splitAuthority(s string) (authority, bool) {
	var a authority
	i := 0
	for i < len(s) && isWordByte(s[i]) {
		i++
	}
	if i == 0 || !strings.HasPrefix(s[i:], "://") {
		return a, false
	}
	a.scheme, s = s[:i+3], s[i+3:]
	if strings.ContainsAny(s, " \t\n\r\f\v") || s == "" {
		return a, false
	}
	if at := strings.IndexByte(s, '@'); at > 0 && allUserinfoBytes(s[:at]) {
		if rest := s[at+1:]; hostPortPath(&a, rest) {
			a.userinfo, a.hasUser = s[:at], true
			return a, true
		}
	}
	a.userinfo, a.hasUser = "", false
	return a, hostPortPath(&a, s)
}

// hostPortPath fills host, port and path from s, trying a dotted-quad host
// first and otherwise the shortest host after which ":port" and "/path" fit.
func hostPortPath(a *authority, s string) bool {
	if n := dottedQuadLen(s); n > 0 {
		if port, path, ok := portPath(s[n:]); ok {
			a.host, a.isIPv4, a.port, a.path = s[:n], true, port, path
			return true
		}
	}
	for n := 1; n <= len(s); n++ {
		if port, path, ok := portPath(s[n:]); ok {
			a.host, a.isIPv4, a.port, a.path = s[:n], false, port, path
			return true
		}
	}
	return false
}

// portPath matches rest against an optional ":digits" then an optional path
// starting with "/".
func portPath(rest string) (port, path string, ok bool) {
	if strings.HasPrefix(rest, ":") {
		j := 1
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j > 1 {
			port, rest = rest[:j], rest[j:]
		}
	}
	if rest == "" || rest[0] == '/' {
		return port, rest, true
	}
	return "", "", false
}

// dottedQuadLen returns the length of a leading d{1,3}.d{1,3}.d{1,3}.d{1,3},
// or 0.
func dottedQuadLen(s string) int {
	i := 0
	for part := 0; part < 4; part++ {
		if part > 0 {
			if i >= len(s) || s[i] != '.' {
				return 0
			}
			i++
		}
		start := i
		for i < len(s) && i-start < 3 && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return 0
		}
	}
	return i
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// allUserinfoBytes reports whether s only has characters RFC 2396 allows in
// userinfo (unreserved, escaped and ";:&=+$,").
func allUserinfoBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isWordByte(c) || strings.IndexByte("-.!~*'()%;:&=+$,", c) >= 0 {
			continue
		}
		return false
	}
	return true
}
