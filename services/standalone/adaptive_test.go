package standalone

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// launchResult is what one launch of a run wrote.
type launchResult struct {
	fetches int   // HTTP captures (responses and revisits)
	bytes   int64 // size of the WARC files it wrote
	missed  []string
	// digests are the payload digests each URL was captured with.
	digests map[string][]string
}

// adaptiveLaunches crawls a synthetic web whose volatile pages (one in ten)
// change before every launch, five launches at a fixed pace, with adaptive
// recrawl or without; every URL is due at each launch by its launch
// timestamp, unless adaptive recrawl holds it back. A changed page is
// missed when the launch after its change did not capture it with a
// payload no earlier launch had (a response, or a revisit of another URL
// that has the new payload, such as a ?ref= variant of a changed page).
func adaptiveLaunches(t *testing.T, adaptive bool) ([]launchResult, *Summary, []string) {
	const launches, gap = 5, 10 * time.Second
	srv := startSite(t, testweb.Config{Seed: 5, Hosts: 2, PagesPerHost: 30, VolatileOneIn: 10})
	p := testProfile()
	// Intervals in seconds to fit a test: a URL starts at 4 s, 4 times
	// longer after an unchanged fetch, half after a changed one; launches
	// come every 10 s, so an unchanged page waits out the next launch.
	p.Frontier.RecrawlIntervalSeconds = 4
	p.Frontier.RecrawlAdaptive = adaptive
	p.Frontier.RecrawlMinIntervalSeconds, p.Frontier.RecrawlIncreaseFactor, p.Frontier.RecrawlDecreaseFactor = 1, 4, 0.5
	dir := t.TempDir()
	start := time.Now().Truncate(time.Second).Add(time.Second)
	seen := map[string]bool{}
	var out []launchResult
	var sum *Summary
	for k := range launches {
		srv.SetEpoch(k)
		// The launches' pace is the point of the test: this waits for the
		// clock, not for a condition.
		time.Sleep(time.Until(start.Add(time.Duration(k) * gap)))
		sum = runCrawlProfile(t, Config{DataDir: dir, Seeds: srv.Seeds(), Relaunch: true}, srv, p)
		var files []string
		var r launchResult
		for _, f := range sum.WARCFiles {
			if !seen[f] {
				seen[f] = true
				files = append(files, f)
				if fi, err := os.Stat(f); err == nil {
					r.bytes += fi.Size()
				}
			}
		}
		r.digests = map[string][]string{}
		for u, cs := range capturesByURL(t, files) {
			r.fetches += len(cs)
			for _, c := range cs {
				r.digests[u] = append(r.digests[u], c.digest)
			}
		}
		for _, u := range srv.Changed(max(k-1, 0), k) {
			if k > 0 && len(out[0].digests[u]) > 0 && !newPayload(r.digests[u], out) {
				r.missed = append(r.missed, u)
			}
		}
		out = append(out, r)
	}
	return out, sum, srv.Seeds()
}

// newPayload reports whether one of digests is new: captured in no
// earlier launch.
func newPayload(digests []string, earlier []launchResult) bool {
	for _, d := range digests {
		old := false
		for _, e := range earlier {
			for _, ds := range e.digests {
				old = old || slices.Contains(ds, d)
			}
		}
		if !old {
			return true
		}
	}
	return false
}

// Adaptive recrawl fetches less over five launches and misses no page
// that changed: the one in ten pages that change every time keep short
// intervals and are fetched at every launch, found below the unchanged
// pages it holds back through their kept outlinks.
func TestAdaptiveRecrawlFiveLaunches(t *testing.T) {
	var results [2][]launchResult
	var sums [2]*Summary
	var seeds [2][]string
	// One after the other: two crawls in one process side by side race on
	// gowarc's global uuid setting (uuid.EnableRandPool).
	for i := range results {
		results[i], sums[i], seeds[i] = adaptiveLaunches(t, i == 1)
	}
	total := func(rs []launchResult) (fetches int, bytes int64) {
		for _, r := range rs {
			fetches, bytes = fetches+r.fetches, bytes+r.bytes
		}
		return fetches, bytes
	}
	for i, adaptive := range []bool{false, true} {
		rs := results[i]
		f, b := total(rs)
		per := make([]int, len(rs))
		for i, r := range rs {
			per[i] = r.fetches
			if len(r.missed) > 0 {
				t.Errorf("adaptive %v, launch %d: %d changed pages not captured anew, e.g. %v", adaptive, i+1,
					len(r.missed), r.missed[:min(len(r.missed), 5)])
			}
		}
		t.Logf("adaptive %v: fetches per launch %v, %d fetches and %d WARC bytes in all; saved by launch %v",
			adaptive, per, f, b, sums[i].AdaptiveSaved)
	}
	plainF, plainB := total(results[0])
	adaptF, adaptB := total(results[1])
	if adaptF >= plainF || adaptB >= plainB {
		t.Errorf("adaptive recrawl: %d fetches and %d bytes, without it %d and %d: want fewer", adaptF, adaptB, plainF, plainB)
	}
	var saved int64
	for _, n := range sums[1].AdaptiveSaved {
		saved += n
	}
	if saved == 0 || saved > int64(plainF-adaptF) || len(sums[0].AdaptiveSaved) != 0 {
		t.Errorf("savings counted: adaptive %v, plain %v; want some, at most the %d fetches not made",
			sums[1].AdaptiveSaved, sums[0].AdaptiveSaved, plainF-adaptF)
	}
	// Every launch fetched the seeds.
	for i, r := range results[1] {
		for _, s := range seeds[1] {
			if len(r.digests[s]) == 0 {
				t.Errorf("launch %d did not fetch seed %s", i+1, s)
			}
		}
	}
}
