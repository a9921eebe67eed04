package standalone

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/profiles"
	"github.com/trawler-crawl/trawler/services/launcher"
)

// demoProfile is what `trawler demo` crawls with: the shipped demo profile
// over the defaults (robots.txt obeyed, sitemaps followed, conditional
// requests sent and outlinks kept).
func demoProfile(t *testing.T) profile.Profile {
	t.Helper()
	b, err := profiles.FS.ReadFile("demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := profile.Default()
	if err := profile.Decode(bytes.NewReader(b), &p); err != nil {
		t.Fatalf("demo profile: %v", err)
	}
	return p
}

// relaunchesAfterFirst is how many --relaunch runs follow the first crawl.
const relaunchesAfterFirst = 5

// A crawl of the synthetic web, then --relaunch after --relaunch on the
// same data directory, each launched the instant the last run ended: every
// launch captures again every URL the first crawl captured. From the first
// relaunch on, every page below the seeds answers 304, so the crawl goes on
// only through the outlinks kept with the pages' original captures: the
// page listed only in sitemaps, and the 404s linked only from unchanged
// pages, are reached that way or not at all. They are also what a run
// finishes last, so a relaunch that took what was finished in its own
// second for crawled in it (launchSecond) lost them.
func TestRelaunchesReachEverythingEveryTime(t *testing.T) {
	if testing.Short() {
		t.Skip("six standalone runs")
	}
	// 20 pages a host: the last one is listed only in the sitemaps.
	srv := startSite(t, testweb.Config{Seed: 1, Hosts: 2, PagesPerHost: 20})
	p := demoProfile(t)
	dir := t.TempDir()

	var first map[string]int // URL -> HTTP status the first crawl captured
	seenFiles := map[string]bool{}
	var ended time.Time
	for i := 0; i <= relaunchesAfterFirst; i++ {
		name := "first crawl"
		var clock launcher.Clock
		if i > 0 {
			name = fmt.Sprintf("relaunch %d", i)
			// The worst case of a user relaunching at once: the launch is
			// made when the last run ended, before this one's start-up.
			clock = &resumedClock{at: ended}
		}
		sum := runWithClock(t, Config{DataDir: dir, Seeds: srv.Seeds(), Relaunch: i > 0, Render: renderOff}, srv, p, clock)
		ended = time.Now()
		var files []string
		for _, f := range sum.WARCFiles {
			if !seenFiles[f] {
				seenFiles[f] = true
				files = append(files, f)
			}
		}
		got := capturedStatus(t, files)
		classes := map[string]int{}
		for _, st := range got {
			classes[statusClass(st)]++
		}
		t.Logf("%s: captured %d URLs (%v) in %d new WARC files", name, len(got), classes, len(files))
		if i == 0 {
			if classes["404"] == 0 || classes["2xx"] == 0 {
				t.Fatalf("the first crawl captured %v: want pages and 404s", classes)
			}
			first = got
			continue
		}
		if classes["304"] == 0 {
			t.Errorf("%s: no page answered 304: the kept outlinks were not exercised", name)
		}
		var missing []string
		for u := range first {
			if _, ok := got[u]; !ok {
				missing = append(missing, u)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("%s did not capture %d of the %d URLs the first crawl captured: %v",
				name, len(missing), len(first), missing[:min(len(missing), 10)])
			for _, u := range missing[:min(len(missing), 3)] {
				t.Logf("crawl.log lines of %s and of the pages it was found on:\n%s", u, logTrail(t, dir, u))
			}
		}
	}
}

// resumedClock reads at on its first reading and runs on from there in
// real time.
type resumedClock struct {
	mu    sync.Mutex
	at    time.Time
	first time.Time // when it was first read
}

func (c *resumedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first.IsZero() {
		c.first = time.Now()
	}
	return c.at.Add(time.Since(c.first))
}

// runWithClock is runCrawlProfile with the clock that stamps the launches
// (nil: the system's).
func runWithClock(t *testing.T, cfg Config, srv *testweb.Server, p profile.Profile, clock launcher.Clock) *Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg.UntilIdle, cfg.KafkaListen, cfg.AdminAddr = true, "127.0.0.1:0", "127.0.0.1:0"
	cfg.Crawl, cfg.Stream, cfg.Threads, cfg.Partitions, cfg.TimeZone = "fc", "npld", 8, 2, "Europe/London"
	sum, err := Run(ctx, cfg, Deps{Profile: p, Resolver: srv.Resolver(), Clock: clock,
		Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(), Version: "test"})
	if err != nil {
		t.Fatalf("standalone run: %v", err)
	}
	return sum
}

// capturedStatus is the HTTP status of each HTTP URL with a response or
// revisit record in files: robots.txt included, dns: left out (a lookup
// is recorded when its cached answer expires, not once per launch).
func capturedStatus(t *testing.T, files []string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for u, cs := range capturesByURL(t, files) {
		if !strings.HasPrefix(u, "http") {
			continue
		}
		for _, c := range cs {
			if c.status > 0 {
				out[u] = c.status
			}
		}
	}
	return out
}

func statusClass(st int) string {
	switch st {
	case 304, 404:
		return fmt.Sprint(st)
	}
	return fmt.Sprintf("%dxx", st/100)
}

// logTrail is every crawl.log line of u and of the pages it was found on
// (in any run), to tell a URL that was never admitted again from one that
// was lost after.
func logTrail(t *testing.T, dir, u string) string {
	t.Helper()
	var b strings.Builder
	vias := map[string]bool{}
	lines := readCrawlLog(t, dir)
	for _, l := range lines {
		if l.url == u {
			vias[l.via] = true
		}
	}
	for _, l := range lines {
		if l.url == u || vias[l.url] {
			fmt.Fprintf(&b, "  %d %s %s via %s\n", l.status, l.url, l.hops, l.via)
		}
	}
	return b.String()
}
