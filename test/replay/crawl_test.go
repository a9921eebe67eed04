// Package replay_test is issue 32's replay acceptance: a crawl of the
// synthetic web and two relaunches of it, each capture replayed at its own
// time through pkg/replay (pywb's rules) over the crawl's embedded index
// and over an external OutbackCDX the crawl forwarded its lines to.
package replay_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/internal/viralsite"
	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/clamav/clamdtest"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/replay"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/services/standalone"
)

// collection is the crawl, and so the index collection, of the runs.
const collection = "fc"

// The demo crawl of the synthetic web (plus a host serving the EICAR
// file, so that viral WARCs are written too), then two relaunches on the
// same data directory, forwarding every CDX line to an external
// OutbackCDX. Every response and revisit of an http(s) URI in the normal
// WARCs is replayed at its URL and timestamp, as pywb would replay it, over
// each index: the status must be that of the response whose payload the
// capture has, and a 2xx body that response's payload.
func TestCrawlAndRelaunchesReplayAsCaptured(t *testing.T) {
	site, err := testweb.Generate(testweb.Config{Seed: 1, Hosts: 2, PagesPerHost: 10})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	const streamMax = 1 << 20
	clamd := clamdtest.Start(t, streamMax)
	seeds := append(srv.Seeds(), viralsite.Start(t))
	p, err := profile.Shipped("demo")
	if err != nil {
		t.Fatal(err)
	}
	p.ClamAV.StreamMaxLengthBytes = streamMax

	// The external OutbackCDX: a second index served over HTTP, its
	// writes open as OutbackCDX's are.
	external, err := cdxindex.Open(t.TempDir(), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = external.Close() })
	outback := httptest.NewServer(external.Handler(cdxindex.HandlerOptions{OpenWrites: true}))
	t.Cleanup(outback.Close)

	dir := t.TempDir()
	var sum *standalone.Summary
	for i, relaunch := range []bool{false, true, true} {
		if i > 0 {
			// Launch timestamps have one-second resolution, and a URI
			// finished in the second of a launch counts as crawled in it:
			// the next launch must come in a later second than this run's
			// end. This waits for the clock, not for a condition.
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		sum, err = standalone.Run(ctx, standalone.Config{
			DataDir: dir, Seeds: seeds, Relaunch: relaunch, UntilIdle: true, ClamdAddr: clamd.Addr,
			KafkaListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0",
			CDXForwardURL: outback.URL, CDXForwardFailures: true,
			Crawl: collection, Stream: "npld", Threads: 8, Partitions: 2, TimeZone: "Europe/London",
		}, standalone.Deps{Profile: p, Resolver: viralsite.Resolver(srv.Resolver()),
			Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(), Version: "test"})
		cancel()
		if err != nil {
			t.Fatalf("run %d (relaunch %v): %v", i+1, relaunch, err)
		}
		t.Logf("run %d: %d URIs in all, by status %v", i+1, sum.URIs, sum.ByStatus)
	}

	warcDirs, files := warcFiles(t, dir)
	recs := readRecords(t, files)
	truths := originals(recs)
	var captures []*record
	for _, r := range recs {
		if !r.viral {
			captures = append(captures, r)
		}
	}
	sortRecords(captures)
	if len(captures) == 0 {
		t.Fatal("no captures in the WARCs")
	}

	embedded, err := cdxindex.Open(sum.CDXPath, cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = embedded.Close() })
	t.Logf("embedded index: %s", indexCounts(t, embedded))
	t.Logf("external OutbackCDX: %s", indexCounts(t, external))

	client, err := replay.NewOutbackCDX(replay.OutbackCDXOptions{URL: outback.URL, Collection: collection})
	if err != nil {
		t.Fatal(err)
	}
	records := replay.NewDirs(warcDirs...)
	for _, tc := range []struct {
		name            string
		index           replay.Index
		resolveRevisits bool
	}{
		{"embedded index", replay.NewCDXIndex(embedded, collection), false},
		{"external OutbackCDX", client, false},
		{"embedded index, resolveRevisits", replay.NewCDXIndex(embedded, collection), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := replay.New(replay.Options{Index: tc.index, Records: records, ResolveRevisits: tc.resolveRevisits})
			if err != nil {
				t.Fatal(err)
			}
			c := replayAll(t, r, captures, truths)
			t.Logf("%s: %s", tc.name, c)
			for _, e := range c.examples {
				t.Log(e)
			}
			if c.failed() > 0 {
				t.Errorf("%d of %d captures did not replay as captured: %s", c.failed(), c.captures, sorted(c.failures))
			}
			if c.byKind["revisit (identical-payload-digest)"]+c.notModified == 0 {
				t.Error("no revisits among the captures: the relaunches exercised nothing")
			}
		})
	}
}

// indexCounts summarises an index's lines.
func indexCounts(t *testing.T, ix *cdxindex.Index) string {
	t.Helper()
	n := map[string]int{}
	err := ix.Each(context.Background(), collection, func(l cdx.Line) error {
		n["lines"]++
		switch {
		case strings.HasPrefix(l.Original, "dns:"):
			n["dns"]++
		case l.Filename == "":
			n["no WARC record (failures)"]++
		case strings.Contains(l.Filename, "-VIRAL-"):
			n["viral"]++
		case l.Mimetype == cdx.RevisitMime:
			n["revisit status "+l.Status]++
		default:
			n["status "+l.Status]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sorted(n)
}

// warcFiles returns the crawl's WARC directories, normal and viral, and
// the finished files in them.
func warcFiles(t *testing.T, dataDir string) (dirs, files []string) {
	t.Helper()
	for _, sub := range []string{"warcs", "warcs-viral"} {
		found, _ := filepath.Glob(filepath.Join(dataDir, sub, "*"))
		dirs = append(dirs, found...)
		for _, d := range found {
			if open, _ := filepath.Glob(filepath.Join(d, "*.open")); len(open) > 0 {
				t.Fatalf("WARC files left open: %v", open)
			}
			done, _ := filepath.Glob(filepath.Join(d, "*.warc.gz"))
			files = append(files, done...)
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no WARC files under %s", dataDir)
	}
	return dirs, files
}
