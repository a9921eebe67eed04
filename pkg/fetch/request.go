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
}

// key identifies connections that may be reused for this target.
func (t target) key() string { return t.scheme + "://" + t.hostHeader }

// parseTarget validates rawURL for fetching.
func parseTarget(rawURL string) (target, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return target{}, fmt.Errorf("parse URL: %w", err)
	}
	t := target{scheme: strings.ToLower(u.Scheme)}
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
// them are dropped so the connection behaves as configured.
var hopHeaders = []string{
	"Connection", "Content-Length", "Host", "Keep-Alive", "Proxy-Connection",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "User-Agent",
}

// buildRequest renders the GET request as it will be written on the wire.
func buildRequest(t target, userAgent string, keepAlive bool, extra http.Header) ([]byte, error) {
	var b bytes.Buffer
	proto := "HTTP/1.0"
	if keepAlive {
		proto = "HTTP/1.1"
	}
	fmt.Fprintf(&b, "GET %s %s\r\n", t.requestURI, proto)
	fmt.Fprintf(&b, "Host: %s\r\n", t.hostHeader)
	if !httpguts.ValidHeaderFieldValue(userAgent) {
		return nil, fmt.Errorf("invalid User-Agent %q", userAgent)
	}
	fmt.Fprintf(&b, "User-Agent: %s\r\n", userAgent)
	if !keepAlive {
		b.WriteString("Connection: close\r\n")
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	hasAccept := false
	for _, k := range keys {
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, fmt.Errorf("invalid request header name %q", k)
		}
		ck := textproto.CanonicalMIMEHeaderKey(k)
		if slices.Contains(hopHeaders, ck) {
			continue
		}
		if ck == "Accept" {
			hasAccept = true
		}
		for _, v := range extra[k] {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, fmt.Errorf("invalid value for request header %s: %q", ck, v)
			}
			fmt.Fprintf(&b, "%s: %s\r\n", ck, v)
		}
	}
	if !hasAccept {
		fmt.Fprintf(&b, "Accept: %s\r\n", defaultAccept)
	}
	b.WriteString("\r\n")
	return b.Bytes(), nil
}
