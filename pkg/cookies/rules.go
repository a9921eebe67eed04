package cookies

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// maxUnix is the last second of year 9999: later expiries are clamped to it
// so that arithmetic on Max-Age cannot overflow.
const maxUnix = 253402300799

// canonicalHost is the request host of u as RFC 6265 5.1.2 compares it:
// lower case, A-labels, no port, no trailing dot.
func canonicalHost(u *url.URL) (string, error) {
	h := strings.TrimSuffix(u.Hostname(), ".")
	if h == "" {
		return "", errors.New("URL has no host")
	}
	if isIP(h) {
		return h, nil
	}
	if !isASCII(h) {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("host to ASCII: %w", err)
		}
		h = a
	}
	h = strings.ToLower(h)
	if !validDomainChars(h) {
		return "", errors.New("host has characters a domain cannot have")
	}
	return h, nil
}

// isIP reports whether host is an IPv4 or IPv6 address.
func isIP(host string) bool {
	return net.ParseIP(host) != nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// validDomainChars reports whether s holds only what a lower-case A-label
// domain can: letters, digits, '-', '_' and '.' (underscores occur in real
// host names even though DNS host rules forbid them).
func validDomainChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return s != ""
}

// jarKey is the registrable domain of a canonical host (eTLD+1); IP
// addresses and hosts with none (public suffixes, single labels) key by
// themselves. Every cookie host can receive is stored under this key,
// because a Domain attribute can only name host or one of its parents below
// the public suffix.
func jarKey(host string) string {
	if isIP(host) {
		return host
	}
	k, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return k
}

// isPublicSuffix reports whether domain is on the public suffix list (or is
// an unlisted top-level label, which the list's default rule treats alike).
func isPublicSuffix(domain string) bool {
	ps, _ := publicsuffix.PublicSuffix(domain)
	return ps == domain
}

// hasDotSuffix reports whether s ends in "."+suffix.
func hasDotSuffix(s, suffix string) bool {
	return len(s) > len(suffix) && s[len(s)-len(suffix)-1] == '.' && s[len(s)-len(suffix):] == suffix
}

// domainMatch is RFC 6265 5.1.3 for a stored cookie.
func (e *entry) domainMatch(host string) bool {
	if e.HostOnly || isIP(host) {
		return host == e.Domain
	}
	return host == e.Domain || hasDotSuffix(host, e.Domain)
}

// pathMatch is RFC 6265 5.1.4.
func (e *entry) pathMatch(reqPath string) bool {
	if reqPath == e.Path {
		return true
	}
	if !strings.HasPrefix(reqPath, e.Path) {
		return false
	}
	return strings.HasSuffix(e.Path, "/") || reqPath[len(e.Path)] == '/'
}

// requestPath is the URL's path as it goes on the wire, "/" when empty.
func requestPath(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" || p[0] != '/' {
		return "/"
	}
	return p
}

// defaultPath is RFC 6265 5.1.4's default-path of a request path: up to,
// not including, its last '/', or "/".
func defaultPath(reqPath string) string {
	i := strings.LastIndexByte(reqPath, '/')
	if i <= 0 {
		return "/"
	}
	return reqPath[:i]
}

// cookieDomain applies a Domain attribute (RFC 6265 5.2.3 and 5.3 steps
// 4-6) for a cookie set by host: it returns the cookie's domain and whether
// the cookie is host-only, or why the cookie must be ignored.
func cookieDomain(host, attr string) (domain string, hostOnly bool, err error) {
	if attr == "" {
		return host, true, nil
	}
	if isIP(host) {
		// No subdomains of an address exist, so Domain may only repeat it.
		if attr != host {
			return "", false, errors.New("domain attribute differs from the IP address host")
		}
		return host, true, nil
	}
	d := strings.ToLower(strings.TrimPrefix(attr, "."))
	if !isASCII(d) {
		a, err := idna.Lookup.ToASCII(d)
		if err != nil {
			return "", false, errors.New("domain attribute is not a valid internationalised name")
		}
		d = a
	}
	switch {
	case d == "":
		return host, true, nil
	case !validDomainChars(d) || d[0] == '.' || strings.HasSuffix(d, "."):
		return "", false, errors.New("malformed domain attribute")
	case isPublicSuffix(d):
		if d == host {
			return host, true, nil
		}
		return "", false, errors.New("domain attribute is a public suffix")
	case d != host && !hasDotSuffix(host, d):
		return "", false, errors.New("domain attribute does not domain-match the host")
	}
	return d, false, nil
}

// cookiePath applies a Path attribute (RFC 6265 5.2.4): one that does not
// start with '/', or holds a byte a stored path cannot, yields the default.
func cookiePath(reqPath, attr string) string {
	if attr == "" || attr[0] != '/' {
		return defaultPath(reqPath)
	}
	for i := 0; i < len(attr); i++ {
		if c := attr[i]; c < 0x20 || c >= 0x7f || c == ';' {
			return defaultPath(reqPath)
		}
	}
	return attr
}

// checkNameValue rejects names that are not tokens, values with bytes a
// Cookie header cannot carry (net/http would drop them and log through the
// global logger), and name plus value longer than maxBytes. Its errors
// never include the value.
func checkNameValue(name, value string, maxBytes int) error {
	if err := (&http.Cookie{Name: name}).Valid(); err != nil {
		return fmt.Errorf("invalid cookie name %q", truncate(name, 64))
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 || c >= 0x7f || c == '"' || c == ';' || c == '\\' {
			return fmt.Errorf("cookie %q: value has a disallowed byte at offset %d", truncate(name, 64), i)
		}
	}
	if n := len(name) + len(value); n > maxBytes {
		return fmt.Errorf("cookie %q: name and value are %d bytes, over the limit of %d", truncate(name, 64), n, maxBytes)
	}
	return nil
}

// expiry applies Max-Age and Expires (RFC 6265 5.2.1-2 and 5.3 step 3):
// the Unix-second expiry (0 for a session cookie), or remove when the
// cookie is already expired and so deletes any stored one. Max-Age wins;
// net/http represents "Max-Age=0" and negative values as MaxAge < 0.
func expiry(c *http.Cookie, now time.Time) (expires int64, remove bool) {
	switch {
	case c.MaxAge < 0:
		return 0, true
	case c.MaxAge > 0:
		return min(now.Unix()+int64(min(c.MaxAge, maxUnix)), maxUnix), false
	case c.Expires.IsZero():
		return 0, false
	case !c.Expires.After(now):
		return 0, true
	}
	return min(c.Expires.Unix(), maxUnix), false
}
