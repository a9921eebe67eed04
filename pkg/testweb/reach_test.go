package testweb

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestReachableMatchesIndependentCrawl(t *testing.T) {
	srv := startSite(t, smallSite(7))
	cases := []ReachOptions{
		{},
		{ObeyRobots: true},
		{ObeyRobots: true, IncludeRobotsTxt: true},
		{IncludeRobotsTxt: true},
		{MaxHops: 1},
		{MaxHops: 3, ObeyRobots: true},
		{MaxHops: 6}, // reaches into the calendar trap
		{FollowSitemaps: true},
		{FollowSitemaps: true, ObeyRobots: true, MaxHops: 3},
	}
	for _, o := range cases {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			want := srv.Reachable(o)
			got := crawl(t, srv, o).urls()
			if d := diff(want, got); d != "" {
				t.Fatalf("Reachable (%d URLs) and crawl (%d URLs) differ:\n%s", len(want), len(got), d)
			}
		})
	}
}

func TestReachableProperties(t *testing.T) {
	srv := startSite(t, smallSite(11))
	all := srv.Reachable(ReachOptions{})
	obey := srv.Reachable(ReachOptions{ObeyRobots: true})
	maps := srv.Reachable(ReachOptions{FollowSitemaps: true})
	has := func(list []string, path string) bool {
		for _, u := range list {
			pu, err := url.Parse(u)
			if err != nil {
				t.Fatalf("Reachable gave unparsable %q: %v", u, err)
			}
			if pu.RequestURI() == path {
				return true
			}
		}
		return false
	}
	checks := []struct {
		name string
		list []string
		path string
		want bool
	}{
		{"private area without robots", all, "/private/", true},
		{"members only via private", all, pathMembers, true},
		{"private area obeying robots", obey, "/private/", false},
		{"members obeying robots", obey, pathMembers, false},
		{"look-alike not disallowed", obey, pathNotes, true},
		{"404 included", all, pathGone, true},
		{"redirect source included", all, "/r/moved", true},
		{"redirect chain included", all, "/r/moved-again", true},
		{"redirect loop included", all, "/r/loop-b", true},
		{"css import included", all, pathCSSPrint, true},
		{"no robots.txt by default", all, pathRobots, false},
		{"no sitemap by default", all, pathSitemap, false},
		{"calendar left out without hop limit", all, pathCalendar, false},
		{"gzipped sitemap when following", maps, pathSitemapPart2, true},
	}
	for _, c := range checks {
		if got := has(c.list, c.path); got != c.want {
			t.Errorf("%s: has %s = %v, want %v", c.name, c.path, got, c.want)
		}
	}
	only := srv.SitemapOnly()
	if len(only) != 3*3 { // 60 pages per host: 3 sitemap-only on each of 3 hosts
		t.Fatalf("SitemapOnly: %d URLs, want 9: %v", len(only), only)
	}
	for _, u := range only {
		if contains(all, u) {
			t.Errorf("sitemap-only %s is reachable by links", u)
		}
		if !contains(maps, u) {
			t.Errorf("sitemap-only %s missing with FollowSitemaps", u)
		}
	}
	for _, u := range all {
		if strings.Contains(u, "hostile.test") || strings.Contains(u, ".invalid") || strings.Contains(u, "#") {
			t.Errorf("Reachable includes out-of-scope or fragment URL %s", u)
		}
	}
	if n := len(srv.Reachable(ReachOptions{MaxHops: 1})); n >= len(all) {
		t.Errorf("MaxHops 1 gives %d URLs, not fewer than %d", n, len(all))
	}
}

func contains(list []string, u string) bool {
	for _, v := range list {
		if v == u {
			return true
		}
	}
	return false
}
