package robots

import (
	"testing"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

// FuzzRules complements FuzzParse: any status, every policy, and the
// crawl delay, which the frontier turns into a politeness wait, so it must
// never be negative.
func FuzzRules(f *testing.F) {
	f.Add(200, []byte(groupsRobots), "Mozilla allowbot2", "/ok?butno")
	f.Add(200, []byte("User-agent: *\nCrawl-delay: 1e9\nDisallow: /\n"), ourUA, "/")
	f.Add(200, []byte("User-agent: *\nCrawl-delay: -5\n"), ourUA, "/")
	f.Add(200, []byte("User-agent: *\nCrawl-delay: 9999999999999999999999\n"), ourUA, "/")
	f.Add(404, []byte("User-agent: *\nDisallow: /\n"), ourUA, "/x")
	f.Add(401, []byte{}, "", "")
	f.Add(-6, []byte("Disallow: /"), ourUA, "/")
	f.Fuzz(func(t *testing.T, status int, body []byte, ua, path string) {
		r := Parse(status, body)
		if d, ok := r.CrawlDelay(ua); ok && d < 0 {
			t.Fatalf("crawl delay %v < 0", d)
		}
		allowed := r.Allowed(ua, path)
		for _, p := range []string{profile.RobotsObey, profile.RobotsClassic, profile.RobotsCalculateOnly, profile.RobotsIgnore} {
			fetch, ann := Evaluate(p, r, ua, path)
			if p != profile.RobotsIgnore && (ann == "") != allowed {
				t.Fatalf("policy %s: annotation %q but allowed=%v", p, ann, allowed)
			}
			if (p == profile.RobotsObey || p == profile.RobotsClassic) && fetch != allowed {
				t.Fatalf("policy %s: fetch %v but allowed=%v", p, fetch, allowed)
			}
		}
		for _, s := range r.Sitemaps() {
			if s == "" {
				t.Fatal("empty sitemap URL")
			}
		}
	})
}
