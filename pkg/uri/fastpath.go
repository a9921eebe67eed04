package uri

import "strings"

// The WHATWG parser costs microseconds a link, and most links need none of
// its work: a plain path, or an absolute URL that is already in normal
// form. fastResolve answers those by joining strings and leaves everything
// else to the parser. Each rule below only admits inputs the parser returns
// unchanged (apart from the join); TestFastResolveMatchesParser holds it to
// that on the golden cases and on random references built from the
// characters that matter.

// fastBase is a base URL in normal form split for joining: origin is
// scheme://authority, dir the URL up to the last slash of its path.
type fastBase struct {
	scheme, origin, dir string
}

// newFastBase splits base, which must be the normal form of itself (the
// caller checks against the parser once a page).
func newFastBase(base string) (fastBase, bool) {
	scheme, rest, ok := strings.Cut(base, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return fastBase{}, false
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return fastBase{}, false
	}
	origin := base[:len(scheme)+3+slash]
	end := len(base)
	if i := strings.IndexAny(base, "?#"); i >= 0 {
		end = i
	}
	dir := base[:strings.LastIndexByte(base[:end], '/')+1]
	if len(dir) <= len(origin) {
		return fastBase{}, false
	}
	return fastBase{scheme: scheme, origin: origin, dir: dir}, true
}

// fastResolve resolves ref against b when the result needs no parsing; ok
// is false when the parser must decide.
func fastResolve(b fastBase, ref string) (string, bool) {
	if i := strings.IndexByte(ref, '#'); i >= 0 {
		ref = ref[:i] // the result has no fragment
	}
	if ref == "" || !plainChars(ref) {
		return "", false
	}
	dots := hasDotSegments(ref)
	switch {
	case strings.HasPrefix(ref, "http://"):
		return fastAbsolute("http", ref[len("http://"):], dots)
	case strings.HasPrefix(ref, "https://"):
		return fastAbsolute("https", ref[len("https://"):], dots)
	case strings.HasPrefix(ref, "//"):
		return fastAbsolute(b.scheme, ref[2:], dots)
	case ref[0] == '/':
		if dots {
			return b.origin + removeDotSegments(ref), true
		}
		return b.origin + ref, true
	case ref[0] == '?':
		return "", false // reads the base's path, which the key lacks
	}
	// A colon before the first slash or query could end a scheme.
	if i := strings.IndexAny(ref, ":/?"); i >= 0 && ref[i] == ':' {
		return "", false
	}
	if dots {
		return b.origin + removeDotSegments(b.dir[len(b.origin):]+ref), true
	}
	return b.dir + ref, true
}

// removeDotSegments applies the URL standard's path state to p, an
// absolute path (with its query) of plain characters: a "." segment is
// dropped and a ".." one drops the segment before it, and either, last,
// leaves the path ending in a slash.
func removeDotSegments(p string) string {
	path, query := p, ""
	if i := strings.IndexByte(p, '?'); i >= 0 {
		path, query = p[:i], p[i:]
	}
	segs := strings.Split(path[1:], "/")
	out := segs[:0]
	for i, seg := range segs {
		last := i == len(segs)-1
		switch seg {
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		case ".":
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	return "/" + strings.Join(out, "/") + query
}

// fastAbsolute builds scheme://rest when rest's authority is a plain
// lower-case host name or IPv4 address with at most a non-default port;
// dots says rest's path has dot segments to remove.
func fastAbsolute(scheme, rest string, dots bool) (string, bool) {
	end := strings.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	auth := rest[:end]
	host, port, hasPort := strings.Cut(auth, ":")
	if !(plainHost(host) || plainIPv4(host)) || (hasPort && !plainPort(scheme, port)) {
		return "", false
	}
	switch {
	case end == len(rest):
		return scheme + "://" + rest + "/", true
	case rest[end] == '?':
		return scheme + "://" + auth + "/" + rest[end:], true
	case dots:
		return scheme + "://" + auth + removeDotSegments(rest[end:]), true
	}
	return scheme + "://" + rest, true
}

// plainChars reports whether ref holds only characters the parser keeps
// as they are in a path or query (no percent-encoding, case folding or
// backslashes) and no encoded dots.
func plainChars(ref string) bool {
	for i := 0; i < len(ref); i++ {
		c := ref[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~!$&()*+,;=:@/?", c) >= 0:
		case c == '%':
			if i+2 < len(ref) && ref[i+1] == '2' && (ref[i+2] == 'e' || ref[i+2] == 'E') {
				return false // an encoded dot can make a dot segment
			}
		default:
			return false
		}
	}
	return true
}

// plainRef reports whether ref is plainChars with no dot segments in its
// path.
func plainRef(ref string) bool {
	return plainChars(ref) && !hasDotSegments(ref)
}

// hasDotSegments reports whether the path of ref (before any query) has a
// "." or ".." segment.
func hasDotSegments(ref string) bool {
	path := ref
	if i := strings.IndexByte(ref, '?'); i >= 0 {
		path = ref[:i]
	}
	for path != "" {
		seg, rest, _ := strings.Cut(path, "/")
		if seg == "." || seg == ".." {
			return true
		}
		path = rest
	}
	return false
}

// plainIPv4 reports whether host is an IPv4 address in the parser's own
// form: four decimal numbers up to 255 without leading zeros.
func plainIPv4(host string) bool {
	parts := 0
	for host != "" {
		num, rest, more := strings.Cut(host, ".")
		if num == "" || len(num) > 3 || (len(num) > 1 && num[0] == '0') {
			return false
		}
		n := 0
		for i := 0; i < len(num); i++ {
			if num[i] < '0' || num[i] > '9' {
				return false
			}
			n = n*10 + int(num[i]-'0')
		}
		if n > 255 {
			return false
		}
		parts++
		if more && rest == "" {
			return false
		}
		host = rest
	}
	return parts == 4
}

// plainHost reports whether host is a lower-case ASCII domain name the
// parser returns unchanged: labels of letters, digits and inner hyphens, no
// punycode (the parser validates it), and not one it would read as an IPv4
// address (a last label that is numeric or starts with 0x).
func plainHost(host string) bool {
	if host == "" || len(host) > 253 {
		return false
	}
	labels := host
	for labels != "" {
		label, rest, _ := strings.Cut(labels, ".")
		if !plainLabel(label) {
			return false
		}
		labels = rest
	}
	last := strings.TrimSuffix(host, ".")
	if i := strings.LastIndexByte(last, '.'); i >= 0 {
		last = last[i+1:]
	}
	return strings.Trim(last, "0123456789") != "" && !strings.HasPrefix(last, "0x")
}

func plainLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || strings.HasPrefix(l, "xn--") {
		return false
	}
	if len(l) >= 4 && l[2] == '-' && l[3] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// plainPort reports whether port is kept as written: digits without a
// leading zero, in range, and not the scheme's default (which is dropped).
func plainPort(scheme, port string) bool {
	if port == "" || len(port) > 5 || port[0] == '0' {
		return false
	}
	n := 0
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
		n = n*10 + int(port[i]-'0')
	}
	return n <= 65535 && !(scheme == "http" && n == 80) && !(scheme == "https" && n == 443)
}

// IsNormal reports, without parsing, whether u is an http or https URL
// already in the form Normalize returns. false only means the parser must
// decide: most URLs a crawl meets are plain enough for true.
func IsNormal(u string) bool {
	if strings.IndexByte(u, '#') >= 0 || !plainRef(u) {
		return false
	}
	var got string
	var ok bool
	switch {
	case strings.HasPrefix(u, "http://"):
		got, ok = fastAbsolute("http", u[len("http://"):], false)
	case strings.HasPrefix(u, "https://"):
		got, ok = fastAbsolute("https", u[len("https://"):], false)
	}
	return ok && got == u
}
