package scope

import (
	"testing"

	whatwg "github.com/nlnwa/whatwg-url/url"

	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

// TestCandidateNormalMatchesParsed checks that a candidate built without a
// parse (its URL in normal form) answers as a parsed one: SURT, scheme,
// path and host.
func TestCandidateNormalMatchesParsed(t *testing.T) {
	for _, u := range []string{
		"http://h.test/", "https://h.test:8443/a/b?c=/d/e", "http://www.example.org/a/b/c/d/e/f/g/h/",
		"http://h.test/a?", "https://a-b.h.test/x;y=1/z@q:r", "http://h.test./a", "http://h.test/%41/b",
		"http://h.test:8080/?q=a/b", "http://h.test/a//b", "https://www.h.test/",
	} {
		if !uri.IsNormal(u) {
			t.Fatalf("%q is not in normal form", u)
		}
		c, err := NewCandidate(u)
		if err != nil {
			t.Fatal(err)
		}
		if !c.normal || c.parsed != nil {
			t.Fatalf("%q: candidate was parsed", u)
		}
		p, err := whatwg.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		scheme, _ := c.scheme()
		path, _ := c.pathname()
		if want := surt.HeritrixParsed(u, p.Href(true)); c.SURT != want {
			t.Errorf("%q: SURT %q, parsed %q", u, c.SURT, want)
		}
		if scheme != p.Scheme() || path != p.Pathname() {
			t.Errorf("%q: scheme %q path %q, parsed %q %q", u, scheme, path, p.Scheme(), p.Pathname())
		}
		if c.host() != p.Hostname() {
			t.Errorf("%q: host %q, parsed %q", u, c.host(), p.Hostname())
		}
	}
}
