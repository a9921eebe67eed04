package replay_test

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/replay"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/services/standalone"
)

// dedupRun is a crawl and one relaunch of the site on a data directory of
// its own, with cross-URL dedup on or off.
type dedupRun struct {
	dir string
	// first holds the files the first crawl wrote.
	first   map[string]bool
	bytes   []int64 // WARC bytes written by the crawl, then by the relaunch
	records []*record
	cdxPath string
}

func crawlTwice(t *testing.T, srv *testweb.Server, acrossURLs bool) dedupRun {
	t.Helper()
	p, err := profile.Shipped("demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Dedup.AcrossURLs = acrossURLs
	run := dedupRun{dir: t.TempDir()}
	seen := map[string]bool{}
	for i, relaunch := range []bool{false, true} {
		if i > 0 {
			// A launch timestamp has one-second resolution: the relaunch
			// must come in a later second than the crawl's end. This
			// waits for the clock, not for a condition.
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		sum, err := standalone.Run(ctx, standalone.Config{
			DataDir: run.dir, Seeds: srv.Seeds(), Relaunch: relaunch, UntilIdle: true,
			KafkaListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0",
			Crawl: collection, Stream: "npld", Threads: 8, Partitions: 2, TimeZone: "Europe/London",
		}, standalone.Deps{Profile: p, Resolver: srv.Resolver(), Logger: slog.New(slog.DiscardHandler),
			Registry: prometheus.NewRegistry(), Version: "test"})
		cancel()
		if err != nil {
			t.Fatalf("run %d (acrossUrls %v): %v", i+1, acrossURLs, err)
		}
		run.cdxPath = sum.CDXPath
		var n int64
		_, files := warcFiles(t, run.dir)
		for _, f := range files {
			if !seen[f] {
				seen[f] = true
				fi, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				n += fi.Size()
			}
		}
		run.bytes = append(run.bytes, n)
		if i == 0 {
			run.first = maps.Clone(seen)
		}
	}
	_, files := warcFiles(t, run.dir)
	run.records = readRecords(t, files)
	return run
}

// duplicateShare is the share of the first crawl's 2xx captures whose
// payload was captured before under another URL.
func duplicateShare(run dedupRun) (dups, all int) {
	firstURL := map[string]string{}
	byDate := slices.Clone(run.records)
	slices.SortStableFunc(byDate, func(a, b *record) int { return strings.Compare(a.date, b.date) })
	for _, r := range byDate {
		if !run.first[r.file] || r.status < 200 || r.status > 299 || r.digest == "" {
			continue
		}
		all++
		if u, ok := firstURL[r.digest]; ok && u != r.uri {
			dups++
		} else if !ok {
			firstURL[r.digest] = r.uri
		}
	}
	return dups, all
}

// A crawl and a relaunch of a site where about a fifth of the payloads
// reappear under other URLs (query-string variants), with cross-URL dedup
// and without: it writes fewer bytes, and every capture of the dedup'd
// crawl still replays as captured under pywb's rules.
func TestCrossURLDedupStoresLessAndReplays(t *testing.T) {
	site, err := testweb.Generate(testweb.Config{Seed: 3, Hosts: 2, PagesPerHost: 40, PageBytes: 10_000, QueryVariantOneIn: 2,
		// The large file (3 MiB by default) would be most of the bytes.
		LargeFileBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	plain := crawlTwice(t, srv, false)
	dedup := crawlTwice(t, srv, true)

	dups, all := duplicateShare(plain)
	t.Logf("site: %d of %d 2xx captures (%.0f%%) have a payload first captured under another URL",
		dups, all, 100*float64(dups)/float64(max(all, 1)))
	t.Logf("WARC bytes, crawl + relaunch: without cross-URL dedup %v = %d, with it %v = %d (%.1f%% less)",
		plain.bytes, plain.bytes[0]+plain.bytes[1], dedup.bytes, dedup.bytes[0]+dedup.bytes[1],
		100*(1-float64(dedup.bytes[0]+dedup.bytes[1])/float64(plain.bytes[0]+plain.bytes[1])))
	if dedup.bytes[0]+dedup.bytes[1] >= plain.bytes[0]+plain.bytes[1] {
		t.Errorf("cross-URL dedup wrote %v bytes, without it %v: want fewer", dedup.bytes, plain.bytes)
	}

	embedded, err := cdxindex.Open(dedup.cdxPath, cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = embedded.Close() })
	dirs, _ := warcFiles(t, dedup.dir)
	r, err := replay.New(replay.Options{Index: replay.NewCDXIndex(embedded, collection), Records: replay.NewDirs(dirs...)})
	if err != nil {
		t.Fatal(err)
	}
	captures := append([]*record(nil), dedup.records...)
	sortRecords(captures)
	c := replayAll(t, r, captures, originals(dedup.records))
	t.Logf("dedup'd crawl: %s", c)
	if c.failed() > 0 {
		t.Errorf("%d of %d captures did not replay as captured: %s", c.failed(), c.captures, sorted(c.failures))
	}
	if c.differentURL == 0 {
		t.Error("no revisit resolved at a different URL: cross-URL dedup was not exercised")
	}
}
