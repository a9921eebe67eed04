package surt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// CDXKey returns the URL key a CDX index (pywb, OutbackCDX, the Wayback
// Machine) files u under: the Internet Archive's default canonicalisation
// (Google's safe-browsing canonicaliser followed by IA's rules) in SURT form
// without the scheme:
//
//	http://www.archive.org/goo/?b&a  ->  org,archive)/goo?a&b
//
// It follows the Python surt package (surt.surt with default options)
// including its quirks: userinfo and fragment are dropped, the host is
// unescaped, punycoded, lowercased and stripped of a leading "www", "www2."
// etc.; numeric hosts are turned into dotted quads and IP addresses are
// reversed like names; the path is unescaped and re-escaped, dot segments and
// empty segments removed, lowercased and stripped of ASP.NET session ids and
// of a trailing slash; the query is unescaped and re-escaped, stripped of
// session ids, lowercased and its arguments sorted. URIs without a host
// (dns:, mailto:, warcinfo:) keep their scheme; filedesc: URIs are returned
// as given. Only an empty URL or an unparsable port is an error.
func CDXKey(u string) (string, error) {
	if u == "" {
		return "", errors.New("cdx key: empty URL")
	}
	if strings.HasPrefix(u, "filedesc") {
		return u, nil
	}
	h, err := parseHandy(u)
	if err != nil {
		return "", fmt.Errorf("cdx key for %q: %w", u, err)
	}
	googleCanonicalize(h)
	iaCanonicalize(h)
	return h.surtKey(), nil
}

// handyURL holds the parts of a URL the IA canonicaliser works on; nil-ness
// matters (an absent query differs from an empty one), hence the flags.
type handyURL struct {
	scheme   string
	host     string
	hasHost  bool
	port     int // 0: none
	path     string
	hasPath  bool
	query    string
	hasQuery bool
}

// stripControl removes newlines, carriage returns and tabs, as handyurl
// does before parsing.
func stripControl(u string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, u)
}

// parseHandy splits u as the surt package's handyurl.parse does.
func parseHandy(u string) (*handyURL, error) {
	u = strings.Trim(u, " \t\n\r\v\f")
	if strings.ContainsAny(u, "\n\r\t") {
		u = stripControl(u)
	}
	if !hasScheme(u) {
		u = "http://" + u
	}
	u = collapseRepeatedHTTP(u)

	h := &handyURL{}
	rest := u
	if i := strings.IndexByte(rest, ':'); i > 0 && hasScheme(rest) {
		h.scheme, rest = rest[:i], rest[i+1:]
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i] // the fragment never reaches the key
	}
	var netloc string
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		end := strings.IndexAny(rest, "/?")
		if end < 0 {
			end = len(rest)
		}
		netloc, rest = rest[:end], rest[end:]
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery && query != "" {
		h.query, h.hasQuery = query, true
	}
	if path != "" {
		h.path, h.hasPath = path, true
	}
	netloc = strings.TrimRight(netloc, ":")
	host, port, err := splitNetloc(netloc)
	if err != nil {
		return nil, err
	}
	h.port = port
	if host != "" {
		h.host, h.hasHost = host, true
	}
	// "http:////www.example.com/x": the host hides in the path.
	if strings.HasPrefix(h.scheme, "http") && !h.hasHost && h.hasPath {
		trimmed := strings.TrimLeft(h.path, "/")
		host, after, _ := strings.Cut(trimmed, "/")
		h.host, h.hasHost = host, host != ""
		h.path = "/" + after
	}
	return h, nil
}

// hasScheme reports whether u starts with "scheme:" (a letter, then letters,
// digits, "+", "-" or ".").
func hasScheme(u string) bool {
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// collapseRepeatedHTTP turns "http://https://host/" into "https://host/".
func collapseRepeatedHTTP(u string) string {
	for {
		rest, ok := cutHTTPScheme(u)
		if !ok {
			return u
		}
		if _, again := cutHTTPScheme(rest); !again {
			return u
		}
		u = rest
	}
}

func cutHTTPScheme(u string) (string, bool) {
	if rest, ok := strings.CutPrefix(u, "http://"); ok {
		return rest, true
	}
	return strings.CutPrefix(u, "https://")
}

// splitNetloc returns the lowercase host and the port of a netloc, without
// userinfo; a bracketed IPv6 host loses its brackets.
func splitNetloc(netloc string) (host string, port int, err error) {
	if i := strings.LastIndexByte(netloc, '@'); i >= 0 {
		netloc = netloc[i+1:]
	}
	var portStr string
	if _, bracketed, ok := strings.Cut(netloc, "["); ok {
		var after string
		host, after, _ = strings.Cut(bracketed, "]")
		_, portStr, _ = strings.Cut(after, ":")
	} else {
		host, portStr, _ = strings.Cut(netloc, ":")
	}
	if portStr != "" {
		p, err := strconv.Atoi(portStr)
		if err != nil || portStr[0] == '+' || portStr[0] == '-' {
			return "", 0, fmt.Errorf("port %q is not a number", portStr)
		}
		if p > 65535 {
			return "", 0, fmt.Errorf("port %d out of range 0-65535", p)
		}
		port = p
	}
	return asciiLower(host), port, nil
}

// googleCanonicalize applies Google's safe-browsing URL canonicalisation.
func googleCanonicalize(h *handyURL) {
	if h.hasQuery {
		h.query = escapeOnce(unescapeRepeatedly(h.query))
	}
	if h.hasHost {
		h.host = canonicalHost(h.host)
		h.hasHost = h.host != ""
	}
	path := unescapeRepeatedly(h.path)
	if h.hasHost {
		path = normalizePath(path)
	}
	h.path = escapeOnce(path)
	h.hasPath = h.path != ""
}

func canonicalHost(host string) string {
	host = unescapeRepeatedly(host)
	if !isASCII(host) {
		if ascii, err := idnaProfile().ToASCII(validUTF8(host)); err == nil {
			host = ascii
		}
	}
	host = strings.Trim(strings.ReplaceAll(host, "..", "."), ".")
	if ip, ok := ipv4Forms(host); ok {
		return ip
	}
	return escapeOnce(asciiLower(host))
}

// idnaProfile approximates Python's "idna" codec (IDNA 2003 nameprep +
// punycode, no STD3 host-name rules).
func idnaProfile() *idna.Profile {
	return idna.New(idna.MapForLookup(), idna.Transitional(true),
		idna.StrictDomainName(false), idna.CheckHyphens(false))
}

// normalizePath resolves "." and ".." segments and drops empty segments
// except a final one (which keeps a trailing slash).
func normalizePath(path string) string {
	if path == "" {
		return "/"
	}
	segs := strings.Split(path, "/")[1:]
	kept := make([]string, 0, len(segs))
	for _, s := range segs {
		switch {
		case s == ".":
		case s == ".." && len(kept) > 0:
			kept = kept[:len(kept)-1]
		default:
			kept = append(kept, s)
		}
	}
	var b strings.Builder
	b.WriteByte('/')
	for i, s := range kept {
		if i == len(kept)-1 {
			b.WriteString(s)
		} else if s != "" {
			b.WriteString(s)
			b.WriteByte('/')
		}
	}
	return b.String()
}

// iaCanonicalize applies IA's rules on top of Google's.
func iaCanonicalize(h *handyURL) {
	if h.hasHost {
		h.host = asciiLower(h.host)
		if h.scheme != "dns" {
			h.host = stripWWW(h.host)
		}
	}
	if dp := defaultPort(h.scheme); h.port != 0 && h.port == dp {
		h.port = 0
	}
	if h.hasPath {
		p := stripPathSessionID(asciiLower(h.path))
		if len(p) > 1 && strings.HasSuffix(p, "/") {
			p = p[:len(p)-1]
		}
		h.path, h.hasPath = p, p != ""
	}
	if h.hasQuery {
		q := sortQuery(asciiLower(stripQuerySessionID(h.query)))
		h.query, h.hasQuery = q, q != ""
	}
}

func defaultPort(scheme string) int {
	switch asciiLower(scheme) {
	case "http":
		return 80
	case "https":
		return 443
	}
	return 0
}

// stripWWW removes a leading "www.", "www2.", "www34." etc.
func stripWWW(host string) string {
	rest, ok := strings.CutPrefix(host, "www")
	if !ok {
		return host
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	if i < len(rest) && rest[i] == '.' {
		return rest[i+1:]
	}
	return host
}

// surtKey renders the canonical URL in SURT form without scheme.
func (h *handyURL) surtKey() string {
	var b strings.Builder
	if h.hasHost {
		labels := strings.Split(h.host, ".")
		for i := len(labels) - 1; i >= 0; i-- {
			b.WriteString(labels[i])
			if i > 0 {
				b.WriteByte(',')
			}
		}
		if h.port != 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(h.port))
		}
		b.WriteByte(')')
	} else {
		b.WriteString(h.scheme)
		b.WriteByte(':')
	}
	if h.hasPath {
		b.WriteString(h.path)
	} else if h.hasQuery {
		b.WriteByte('/')
	}
	if h.hasQuery {
		b.WriteByte('?')
		b.WriteString(h.query)
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// validUTF8 drops invalid UTF-8 bytes, as decoding with errors="ignore" does.
func validUTF8(s string) string {
	return strings.ToValidUTF8(s, "")
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
