package robots

import (
	"testing"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

func TestEvaluate(t *testing.T) {
	r := Parse(200, []byte("User-agent: *\nDisallow: /private\n"))
	tests := []struct {
		policy, path string
		fetch        bool
		annotation   string
	}{
		{profile.RobotsObey, "/public", true, ""},
		{profile.RobotsObey, "/private/x", false, "robotExcluded"},
		{profile.RobotsClassic, "/public", true, ""},
		{profile.RobotsClassic, "/private/x", false, "robotExcluded"},
		{profile.RobotsTxtOnly, "/public", true, ""},
		{profile.RobotsTxtOnly, "/private/x", false, "robotExcluded"},
		{profile.RobotsCalculateOnly, "/public", true, ""},
		{profile.RobotsCalculateOnly, "/private/x", true, "robotExcluded"},
		{profile.RobotsIgnore, "/public", true, ""},
		{profile.RobotsIgnore, "/private/x", true, ""},
		{"no-such-policy", "/private/x", false, "robotExcluded"},
		{"no-such-policy", "/public", true, ""},
	}
	for _, tt := range tests {
		fetch, ann := Evaluate(tt.policy, r, ourUA, tt.path)
		if fetch != tt.fetch || ann != tt.annotation {
			t.Errorf("Evaluate(%q, %q) = %v, %q; want %v, %q", tt.policy, tt.path, fetch, ann, tt.fetch, tt.annotation)
		}
	}
}

func TestEvaluateNilRules(t *testing.T) {
	// ignore never needs rules; a nil *Rules elsewhere is "no robots.txt".
	for _, p := range []string{profile.RobotsIgnore, profile.RobotsObey} {
		if fetch, ann := Evaluate(p, nil, ourUA, "/x"); !fetch || ann != "" {
			t.Errorf("Evaluate(%q, nil) = %v, %q", p, fetch, ann)
		}
	}
	var r *Rules
	if d, ok := r.CrawlDelay(ourUA); ok || d != 0 {
		t.Errorf("nil CrawlDelay = %v, %v", d, ok)
	}
	if s := r.Sitemaps(); s != nil {
		t.Errorf("nil Sitemaps = %q", s)
	}
}

func TestPolicyFlags(t *testing.T) {
	tests := []struct {
		policy          string
		metaNoFollow    bool
		needsRobotsText bool
	}{
		{profile.RobotsObey, true, true},
		{profile.RobotsClassic, true, true},
		{profile.RobotsTxtOnly, false, true},
		{profile.RobotsCalculateOnly, false, true},
		{profile.RobotsIgnore, false, false},
	}
	for _, tt := range tests {
		if got := ObeyMetaNoFollow(tt.policy); got != tt.metaNoFollow {
			t.Errorf("ObeyMetaNoFollow(%q) = %v", tt.policy, got)
		}
		if got := NeedsRobots(tt.policy); got != tt.needsRobotsText {
			t.Errorf("NeedsRobots(%q) = %v", tt.policy, got)
		}
	}
}

func TestFetchFailed(t *testing.T) {
	tests := []struct {
		status int
		want   bool
	}{
		{200, false}, {304, false}, {403, false}, {404, false}, {499, false},
		{500, true}, {503, true}, {599, true}, {600, false},
		{0, true}, {-1, true}, {-2, true}, {-4, true}, {-404, true},
	}
	for _, tt := range tests {
		if got := FetchFailed(tt.status); got != tt.want {
			t.Errorf("FetchFailed(%d) = %v, want %v", tt.status, got, tt.want)
		}
	}
}
