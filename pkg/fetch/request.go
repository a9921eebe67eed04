package fetch

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// defaultAccept is what Heritrix sends by default: browsers' preference for
// HTML without excluding anything.
const defaultAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// target is a URL taken apart into what the connection and request need.
type target struct {
	scheme     string     // "http" or "https"
	host       string     // lower-case host name or IP literal without brackets
	ip         netip.Addr // valid when host is an IP literal
	port       string     // always set
	hostHeader string     // host[:port], port only when not the default
	requestURI string     // path and query as sent on the request line
	u          *url.URL   // the parsed URL, for the cookie jar
}

// key identifies connections that may be reused for this target.
func (t target) key() string { return t.scheme + "://" + t.hostHeader }

// absolute is the absolute-form request target, sent to an HTTP proxy.
func (t target) absolute() string { return t.scheme + "://" + t.hostHeader + t.requestURI }

// parseTarget validates rawURL for fetching.
func parseTarget(rawURL string) (target, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return target{}, fmt.Errorf("parse URL: %w", err)
	}
	t := target{scheme: strings.ToLower(u.Scheme), u: u}
	defPort := map[string]string{"http": "80", "https": "443"}[t.scheme]
	if defPort == "" {
		return target{}, fmt.Errorf("unsupported scheme %q in %q", u.Scheme, rawURL)
	}
	if u.Opaque != "" || u.User != nil {
		return target{}, fmt.Errorf("URL %q has opaque data or user info", rawURL)
	}
	t.host = strings.ToLower(u.Hostname())
	if t.host == "" {
		return target{}, fmt.Errorf("URL %q has no host", rawURL)
	}
	if !isASCIIHost(t.host) {
		return target{}, fmt.Errorf("host %q is not ASCII (punycode it first)", t.host)
	}
	if ip, err := netip.ParseAddr(t.host); err == nil {
		t.ip = ip
	}
	t.port = u.Port()
	if t.port == "" {
		t.port = defPort
	}
	if n, err := strconv.Atoi(t.port); err != nil || n < 1 || n > 65535 {
		return target{}, fmt.Errorf("bad port %q in %q", t.port, rawURL)
	}
	hostPart := t.host
	if t.ip.Is6() {
		hostPart = "[" + t.host + "]"
	}
	t.hostHeader = hostPart
	if t.port != defPort {
		t.hostHeader = net.JoinHostPort(t.host, t.port)
	}
	t.requestURI = requestTarget(rawURL, u)
	return t, nil
}

func isASCIIHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// requestTarget returns the path and query exactly as they appear in the
// URL string (an archive records what the URL says, not a re-encoding),
// percent-encoding only bytes that cannot appear on a request line.
func requestTarget(rawURL string, u *url.URL) string {
	s := rawURL
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	// Skip "scheme://authority".
	if i := strings.Index(s, "//"); i >= 0 {
		s = s[i+2:]
		if j := strings.IndexAny(s, "/?"); j >= 0 {
			s = s[j:]
		} else {
			s = ""
		}
	} else {
		s = u.RequestURI()
	}
	if s == "" || s[0] == '?' {
		s = "/" + s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// hopHeaders are the request headers the fetcher owns; callers' values for
// them are dropped so the connection behaves as configured. Accept-Encoding
// is the fetcher's too (Request.AcceptCompression): what is recorded
// depends on it.
var hopHeaders = []string{
	"Accept-Encoding", "Connection", "Content-Length", "Host", "Keep-Alive", "Proxy-Authorization",
	"Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "User-Agent",
}

// acceptEncoding is what Heritrix's FetchHTTP sends with acceptCompression.
const acceptEncoding = "gzip,deflate"

// RefererFor returns the Referer to send for a URI found at via, as
// Heritrix's FetchHTTPRequest decides it: none without a via, none when
// the via is not an http(s) URI, and none from an https page to an http
// URI (RFC 7231 section 5.5.2: a secure page's address is not sent over
// plain HTTP). The caller leaves seeds and prerequisites without a via.
func RefererFor(via, uri string) string {
	vs, _, ok := strings.Cut(via, ":")
	if !ok {
		return ""
	}
	vs = strings.ToLower(vs)
	if vs != "http" && vs != "https" {
		return ""
	}
	us, _, _ := strings.Cut(uri, ":")
	if vs == "https" && strings.EqualFold(us, "http") {
		return ""
	}
	return via
}

// formContentType is sent with a POST body when the caller names no type:
// HTML form logins are what POST is for here.
const formContentType = "application/x-www-form-urlencoded"

// reqSpec is everything that goes into one request's bytes.
type reqSpec struct {
	method        string // GET, HEAD or POST
	requestTarget string // origin-form, or absolute-form through an HTTP proxy
	hostHeader    string
	userAgent     string
	keepAlive     bool
	header        http.Header // the caller's extra headers
	dropCookie    bool        // the jar owns the Cookie header
	cookie        string      // Cookie value from the jar, "" for none
	authorization string      // answer to a 401 challenge, "" for none
	referer       string      // "" for none; a caller's Referer header wins
	compression   bool        // send Accept-Encoding
	body          []byte
}

// buildRequest renders the request as it will be written on the wire.
func buildRequest(s reqSpec) ([]byte, error) {
	var b bytes.Buffer
	proto := "HTTP/1.0"
	if s.keepAlive {
		proto = "HTTP/1.1"
	}
	fmt.Fprintf(&b, "%s %s %s\r\n", s.method, s.requestTarget, proto)
	fmt.Fprintf(&b, "Host: %s\r\n", s.hostHeader)
	if !httpguts.ValidHeaderFieldValue(s.userAgent) {
		return nil, fmt.Errorf("invalid User-Agent %q", s.userAgent)
	}
	fmt.Fprintf(&b, "User-Agent: %s\r\n", s.userAgent)
	if !s.keepAlive {
		b.WriteString("Connection: close\r\n")
	}
	seen, err := writeExtraHeaders(&b, s.header, s.dropCookie)
	if err != nil {
		return nil, err
	}
	if !seen["Accept"] {
		fmt.Fprintf(&b, "Accept: %s\r\n", defaultAccept)
	}
	if s.compression {
		fmt.Fprintf(&b, "Accept-Encoding: %s\r\n", acceptEncoding)
	}
	// A via that is no valid header value (a control character a page
	// smuggled into a URL) loses the Referer, not the fetch: the Referer
	// is a courtesy to the site.
	if s.referer != "" && !seen["Referer"] && httpguts.ValidHeaderFieldValue(s.referer) {
		fmt.Fprintf(&b, "Referer: %s\r\n", s.referer)
	}
	for _, h := range [...]struct{ name, value string }{{"Cookie", s.cookie}, {"Authorization", s.authorization}} {
		if h.value == "" {
			continue
		}
		if !httpguts.ValidHeaderFieldValue(h.value) {
			// Never echo the value: it may carry a secret.
			return nil, fmt.Errorf("invalid %s header value", h.name)
		}
		fmt.Fprintf(&b, "%s: %s\r\n", h.name, h.value)
	}
	if s.method == http.MethodPost || len(s.body) > 0 {
		if len(s.body) > 0 && !seen["Content-Type"] {
			fmt.Fprintf(&b, "Content-Type: %s\r\n", formContentType)
		}
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(s.body))
	}
	b.WriteString("\r\n")
	b.Write(s.body)
	return b.Bytes(), nil
}

// writeExtraHeaders writes the caller's headers in sorted order, skipping
// those the fetcher owns, and returns the canonical names written.
func writeExtraHeaders(b *bytes.Buffer, extra http.Header, dropCookie bool) (map[string]bool, error) {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	seen := map[string]bool{}
	for _, k := range keys {
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, fmt.Errorf("invalid request header name %q", k)
		}
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if slices.Contains(hopHeaders, ck) || (dropCookie && ck == "Cookie") {
			continue
		}
		for _, v := range extra[k] {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, fmt.Errorf("invalid value for request header %s: %q", ck, v)
			}
			fmt.Fprintf(b, "%s: %s\r\n", ck, v)
			seen[ck] = true
		}
	}
	return seen, nil
}

// requestMethod validates the caller's method and body.
func requestMethod(req Request) (string, error) {
	m := req.Method
	if m == "" {
		m = http.MethodGet
	}
	switch m {
	case http.MethodGet, http.MethodHead:
		if len(req.Body) > 0 {
			return "", fmt.Errorf("method %s cannot carry a body (%d bytes given)", m, len(req.Body))
		}
	case http.MethodPost:
	default:
		return "", fmt.Errorf("unsupported method %q (want GET, HEAD or POST)", req.Method)
	}
	return m, nil
}
