package testweb

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path"
	"regexp"
	"strings"
	"testing"
)

// documented404 matches the paths the package documents as deliberate 404s.
var documented404 = regexp.MustCompile(`^(/gone\.html|/sec\d+/missing-\d+\.html|/img/missing\.png)$`)

func TestEveryLinkResolves(t *testing.T) {
	srv := startSite(t, smallSite(3))
	c := crawl(t, srv, ReachOptions{FollowSitemaps: true})
	client := newClient(t, srv)
	seen := map[string]int{}
	for _, e := range c.links {
		if e.resolved == nil {
			t.Errorf("%s: %s link %q does not parse", e.from, e.context, e.raw)
			continue
		}
		u := e.resolved
		switch {
		case u.Scheme == "mailto" || u.Scheme == "javascript":
			seen["non-http"]++
		case !c.scope[u.Host]:
			checkOffSite(t, srv, e)
			seen["off-site"]++
		case e.context == "base":
			seen["base"]++
		default:
			res, ok := c.fetched[u.String()]
			if !ok { // only the calendar trap is not crawled without a hop limit
				if !strings.HasPrefix(u.Path, "/calendar/") {
					t.Errorf("%s: link %q to %s was not crawled", e.from, e.raw, u)
					continue
				}
				resp, err := client.Get(u.String())
				if err != nil {
					t.Fatalf("GET %s: %v", u, err)
				}
				_ = resp.Body.Close()
				res = &fetchResult{status: resp.StatusCode}
			}
			checkStatus(t, e, res)
			seen[http.StatusText(res.status)]++
			seen[e.context]++
		}
		countForms(seen, e, c)
	}
	for _, want := range []string{
		"non-http", "off-site", "base", "srcset", "css", "location", "sitemap", "robots",
		"Not Found", "Moved Permanently", "Found", "Temporary Redirect", "Permanent Redirect",
		"protocol-relative", "fragment", "dot-relative", "parent-relative", "spaced", "query", "cross-host",
	} {
		if seen[want] == 0 {
			t.Errorf("no %q reference seen in the crawl; counts: %v", want, seen)
		}
	}
}

// checkOffSite asserts an out-of-scope http link names hostile.test or a
// name the resolver does not know.
func checkOffSite(t *testing.T, srv *Server, e extracted) {
	t.Helper()
	host := e.resolved.Hostname()
	if host == HostileName && strings.HasPrefix(e.resolved.String(), srv.HostileURL("/")) {
		return
	}
	_, err := srv.Resolver().LookupIPAddr(context.Background(), host)
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound || !strings.HasSuffix(host, ".invalid") {
		t.Errorf("%s: off-site link %s: lookup error %v, want not-found .invalid name", e.from, e.resolved, err)
	}
}

// checkStatus asserts a fetched link is a success, a redirect, or a
// documented 404.
func checkStatus(t *testing.T, e extracted, res *fetchResult) {
	t.Helper()
	switch {
	case res.status == http.StatusOK:
	case res.status >= 300 && res.status < 400 && e.context != "sitemap":
	case res.status == http.StatusNotFound && documented404.MatchString(e.resolved.Path):
	default:
		t.Errorf("%s: %s link %q to %s gave %d", e.from, e.context, e.raw, e.resolved, res.status)
	}
}

// countForms tallies the ways a reference was written.
func countForms(seen map[string]int, e extracted, c *miniCrawl) {
	raw := e.raw
	switch {
	case strings.HasPrefix(raw, "//"):
		seen["protocol-relative"]++
	case strings.HasPrefix(raw, "./"):
		seen["dot-relative"]++
	case strings.HasPrefix(raw, "../"):
		seen["parent-relative"]++
	case strings.HasPrefix(raw, " "):
		seen["spaced"]++
	}
	if strings.Contains(raw, "#") && raw != "#top" {
		seen["fragment"]++
	}
	if e.resolved != nil && e.resolved.RawQuery != "" {
		seen["query"]++
	}
	if e.resolved != nil && c.scope[e.resolved.Host] && strings.HasPrefix(e.from, "http://") &&
		!strings.HasPrefix(e.from, "http://"+e.resolved.Host+"/") {
		seen["cross-host"]++
	}
}

func TestResponsesAreWellFormed(t *testing.T) {
	srv := startSite(t, smallSite(5))
	c := crawl(t, srv, ReachOptions{FollowSitemaps: true})
	var chunkedHTML, lengthHTML int
	for u, res := range c.fetched {
		p := pathOf(t, u)
		if want := expectedType(p, res.status); !strings.HasPrefix(res.ctype, want) {
			t.Errorf("%s: Content-Type %q, want %q", u, res.ctype, want)
		}
		if res.status != http.StatusOK {
			continue
		}
		if res.header.Get("ETag") == "" || res.header.Get("Last-Modified") == "" {
			t.Errorf("%s: missing ETag or Last-Modified: %v", u, res.header)
		}
		if strings.HasPrefix(res.ctype, "text/html") {
			if res.chunked {
				chunkedHTML++
			} else {
				lengthHTML++
			}
		}
	}
	if chunkedHTML == 0 || lengthHTML == 0 {
		t.Errorf("HTML responses: %d chunked, %d with Content-Length; want both", chunkedHTML, lengthHTML)
	}
}

// expectedType is the Content-Type a path must be served with.
func expectedType(p string, status int) string {
	if status != http.StatusOK {
		return "text/html"
	}
	switch path.Ext(p) {
	case ".css":
		return "text/css"
	case ".js":
		return "text/javascript"
	case ".png":
		return "image/png"
	case ".woff2":
		return "font/woff2"
	case ".bin":
		return "application/octet-stream"
	case ".xml":
		return "application/xml"
	case ".gz":
		return "application/gzip"
	case ".txt":
		return "text/plain"
	}
	return "text/html"
}
