package recentdb

import (
	"strings"

	"github.com/trawler-crawl/trawler/pkg/uri"
)

// normalize returns the normalised form of u (pkg/uri.Normalize) and its
// authority (host[:port]); ok is false for URLs the DB does not hold.
//
// Nearly every URL reaching the DB is normalised already (the worker
// normalises what it crawls and what it looks up, and browsers behind the
// renderer emit WHATWG-normal URLs), and a full WHATWG parse costs more than
// the rest of an update. So a URL that is provably in normal form is used as
// it is, and only the others are parsed. alreadyNormal is conservative: it
// accepts only shapes whose normal form is themselves (FuzzAlreadyNormal
// checks this against pkg/uri).
func normalize(u string) (norm, authority string, ok bool) {
	if base, _, _ := strings.Cut(u, "#"); alreadyNormal(base) {
		return base, authorityOf(base), true
	}
	p, err := uri.Parse(u)
	if err != nil {
		return "", "", false
	}
	return p.Href(true), p.Host(), true
}

// authorityOf returns host[:port] of a URL alreadyNormal accepted.
func authorityOf(u string) string {
	rest := u[strings.Index(u, "://")+3:]
	return rest[:strings.IndexByte(rest, '/')]
}

// alreadyNormal reports whether u (without fragment) is an http or https
// URL that WHATWG normalisation leaves unchanged: lowercase scheme and
// host, a plain DNS host (no IP address, IDN, userinfo or empty label), an
// explicit non-default port without leading zeros, a path present, without
// dot segments, and path and query made only of characters that are never
// percent-encoded.
func alreadyNormal(u string) bool {
	var rest string
	switch {
	case strings.HasPrefix(u, "http://"):
		rest = u[len("http://"):]
	case strings.HasPrefix(u, "https://"):
		rest = u[len("https://"):]
	default:
		return false
	}
	slash := strings.IndexByte(rest, '/')
	if slash <= 0 {
		return false
	}
	host, port, hasPort := strings.Cut(rest[:slash], ":")
	if !plainHost(host) || (hasPort && !plainPort(port, strings.HasPrefix(u, "https"))) {
		return false
	}
	return plainPathQuery(rest[slash:])
}

// plainHost accepts lowercase DNS names whose last label starts with a
// letter (anything else may be read as an IPv4 number) and no label is
// empty or an IDN.
func plainHost(h string) bool {
	if h == "" {
		return false
	}
	h = strings.TrimSuffix(h, ".")
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || strings.HasPrefix(l, "xn--") {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return last[0] >= 'a' && last[0] <= 'z'
}

// plainPort accepts 1-65535 without leading zeros, other than the scheme's
// default.
func plainPort(p string, https bool) bool {
	if p == "" || len(p) > 5 || p[0] == '0' || strings.Trim(p, "0123456789") != "" {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		n = n*10 + int(p[i]-'0')
	}
	return n <= 65535 && !(n == 80 && !https) && !(n == 443 && https)
}

// plainPathQuery accepts a path (and query) of unreserved and sub-delim
// characters, ':', '@', '/', '?' and valid percent-escapes, with no "." or
// ".." segment (literal or escaped) in the path.
func plainPathQuery(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~!$&()*+,;=:@/?", c) >= 0:
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
		default:
			return false
		}
	}
	path, _, _ := strings.Cut(s, "?")
	if strings.Contains(path, "%2e") || strings.Contains(path, "%2E") {
		return false
	}
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
