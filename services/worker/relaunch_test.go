package worker

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// A new launch refetches robots.txt once per host even while the cached
// rules are still valid, so a relaunch recaptures it (and the sitemaps it
// names); the host's other URIs of that launch use the fresh rules.
func TestRelaunchRefetchesRobotsOnce(t *testing.T) {
	e := setup(t)
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("User-agent: *\nDisallow: /private\n"))
		case "/":
			fcHTML(w, fcPage("", "/a", "/b", "/private"))
		default:
			fcHTML(w, fcPage(""))
		}
	})
	seed := site.url("site.test", "/")
	first := e.crawl(t, crawlRun{p: fcProfile(), resolver: newFCHosts("site.test"), seeds: []string{seed}, minURIs: 4})
	if n := site.hitCount("/robots.txt"); n != 1 || len(first[site.url("site.test", "/robots.txt")]) != 1 {
		t.Fatalf("first crawl fetched robots.txt %d times, want 1", n)
	}
	// Launch timestamps have one-second resolution: the relaunch is
	// stamped with the first whole second after the first crawl, when the
	// cached rules (valid for a day) are older than the launch.
	launchAt := time.Now().Truncate(time.Second).Add(time.Second)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(launchAt); {
		if time.Now().After(deadline) {
			t.Fatal("clock did not reach the next second")
		}
		time.Sleep(10 * time.Millisecond) // polling the clock with a deadline
	}
	depth := math.MaxInt32
	relaunch := func(l *messages.Launch) {
		hd := &l.ParentURLMetadata.HeritableData
		l.ForceFetch = true
		hd.LaunchTimestamp = messages.Timestamp14(launchAt)
		hd.RefreshDepth, hd.Heritable = &depth, []string{"refreshDepth"}
	}
	second := e.crawl(t, crawlRun{p: fcProfile(), resolver: newFCHosts("site.test"), seeds: []string{seed}, minURIs: 8, launch: relaunch})
	if n := site.hitCount("/robots.txt"); n != 2 {
		t.Errorf("robots.txt fetched %d times over both crawls, want 2 (once per launch)", n)
	}
	for _, p := range []string{"/", "/a", "/b", "/robots.txt"} {
		if n := len(second[site.url("site.test", p)]); n != 2 {
			t.Errorf("%s: %d events over both crawls, want 2", p, n)
		}
	}
	if n := site.hitCount("/private"); n != 0 {
		t.Errorf("/private fetched %d times", n)
	}
}

// Cached robots rules are refetched for a launch stamped after they were
// fetched, and never for a launch stamped in the future: rules fetched
// now would still predate it, and the host would fetch robots.txt for
// every URI until the clock caught up.
func TestFetchedBeforeLaunch(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 500e6, time.UTC)
	launch := func(ts string) messages.Launch {
		return messages.Launch{URL: "http://a.example/", ParentURLMetadata: messages.ParentMetadata{
			HeritableData: messages.HeritableData{LaunchTimestamp: ts}}}
	}
	for _, tc := range []struct {
		name    string
		l       messages.Launch
		fetched time.Time
		want    bool
	}{
		{"rules older than the launch", launch("20261125115900"), now.Add(-time.Hour), true},
		{"rules fetched since the launch", launch("20261125115900"), now.Add(-time.Second), false},
		{"rules fetched in the launch's second", launch("20261125120000"), now, false},
		{"launch stamped in the future", launch("20261125130000"), now.Add(-time.Hour), false},
		{"no launch timestamp", launch(""), now.Add(-time.Hour), false},
		{"bad launch timestamp", launch("yesterday"), now.Add(-time.Hour), false},
		{"rules of unknown age", launch("20261125115900"), time.Time{}, false},
	} {
		if got := fetchedBeforeLaunch(tc.l, tc.fetched, now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
