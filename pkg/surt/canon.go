package surt

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Session-id patterns of IA's canonicaliser (URLRegexTransformer). Compiled
// regexps are immutable and safe for concurrent use.
var (
	// ASP.NET cookieless session ids in the path: /(S(xxxx))/page.aspx and
	// /(xxxx)/page.aspx with 24-character ids.
	pathSessionIDs = []*regexp.Regexp{
		regexp.MustCompile(`(?i)^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^?]+\.aspx.*)$`),
		regexp.MustCompile(`(?i)^(.*/)(\([0-9a-z]{24}\)/)([^?]+\.aspx.*)$`),
	}
	// Query arguments that carry a session: each pattern keeps what precedes
	// the argument and what follows its "&".
	querySessionIDs = []*regexp.Regexp{
		regexp.MustCompile(`(?i)^(.*)(?:jsessionid=[0-9a-z]{32})(?:&(.*))?$`),
		regexp.MustCompile(`(?i)^(.*)(?:phpsessid=[0-9a-z]{32})(?:&(.*))?$`),
		regexp.MustCompile(`(?i)^(.*)(?:sid=[0-9a-z]{32})(?:&(.*))?$`),
		regexp.MustCompile(`(?i)^(.*)(?:aspsessionid[a-z]{8}=[a-z]{24})(?:&(.*))?$`),
		regexp.MustCompile(`(?i)^(.*)(?:cfid=[^&]+&cftoken=[^&]+)(?:&(.*))?$`),
	}
	decimalIP = regexp.MustCompile(`^[1-9][0-9]*(\.[0-9]+){0,3}$`)
	octalIP   = regexp.MustCompile(`^0[0-7]*(\.[0-7]+){0,3}$`)
)

func stripPathSessionID(path string) string {
	for _, re := range pathSessionIDs {
		if m := re.FindStringSubmatch(path); m != nil {
			path = m[1] + m[3]
		}
	}
	return path
}

func stripQuerySessionID(query string) string {
	for _, re := range querySessionIDs {
		if m := re.FindStringSubmatch(query); m != nil {
			query = m[1] + m[2]
		}
	}
	return query
}

// sortQuery orders the "&"-separated arguments by name, then value, an
// argument without "=" sorting before the same name with one.
func sortQuery(q string) string {
	if len(q) <= 1 {
		return q
	}
	type arg struct {
		name, value string
		hasValue    bool
	}
	parts := strings.Split(q, "&")
	args := make([]arg, len(parts))
	for i, p := range parts {
		name, value, ok := strings.Cut(p, "=")
		args[i] = arg{name, value, ok}
	}
	slices.SortStableFunc(args, func(a, b arg) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if a.hasValue != b.hasValue {
			if a.hasValue {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.value, b.value)
	})
	var b strings.Builder
	b.Grow(len(q))
	for i, a := range args {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(a.name)
		if a.hasValue {
			b.WriteByte('=')
			b.WriteString(a.value)
		}
	}
	return b.String()
}

// ipv4Forms recognises the numeric host forms a resolver accepts (a bare
// 32-bit number, dotted decimal or octal with 1 to 4 parts) and returns the
// dotted quad. A bare number wraps modulo 2^32, as IA's tools do.
func ipv4Forms(host string) (string, bool) {
	if host == "" {
		return "", false
	}
	if allDigits(host) {
		var v uint32
		for i := 0; i < len(host); i++ {
			v = v*10 + uint32(host[i]-'0')
		}
		return dottedQuad(v), true
	}
	if decimalIP.MatchString(host) || octalIP.MatchString(host) {
		if v, ok := inetAton(host); ok {
			return dottedQuad(v), true
		}
	}
	return "", false
}

// inetAton parses the classic inet_aton forms a.b.c.d, a.b.c (c is 16
// bits), a.b (b is 24 bits) and a, each part decimal, octal (leading 0) or
// hex (leading 0x).
func inetAton(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return 0, false
	}
	var v uint64
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil || strings.HasPrefix(p, "+") {
			return 0, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return 0, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if max := uint64(1)<<(8*(4-i)) - 1; n > max {
			return 0, false
		}
		v |= n
	}
	return uint32(v), true
}

func dottedQuad(v uint32) string {
	return strconv.Itoa(int(v>>24)) + "." + strconv.Itoa(int(v>>16&0xff)) + "." +
		strconv.Itoa(int(v>>8&0xff)) + "." + strconv.Itoa(int(v&0xff))
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// unescapeRepeatedly decodes %XX escapes until nothing changes, so doubly
// escaped input ("%2541") ends up fully decoded.
func unescapeRepeatedly(s string) string {
	for {
		u := unescape(s)
		if u == s {
			return s
		}
		s = u
	}
}

// unescape decodes each valid %XX once; invalid escapes stay as they are.
func unescape(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

// escapeOnce percent-encodes control characters, space, "#", "%" and every
// byte outside ASCII; everything else printable stays literal.
func escapeOnce(s string) string {
	const hexDigits = "0123456789ABCDEF"
	if !strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '#' || r == '%' || r >= 0x7f }) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == '#' || c == '%' || c >= 0x7f {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
