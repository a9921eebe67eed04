package warciojs

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/internal/viralsite"
	"github.com/trawler-crawl/trawler/pkg/clamav/clamdtest"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/services/standalone"
)

// crawlRun is one standalone run and the WARC files it wrote.
type crawlRun struct {
	name  string
	files []string
}

// The demo crawl, then a --relaunch of it on the same data directory, then
// a second relaunch: every WARC written (normal, viral, with dns: records)
// is read by warcio.js, every digest it can compute matches, its CDX index
// agrees with `trawler cdx index`, and the acceptance holds: a
// relaunch captures again everything the first crawl captured, and every
// revisit resolves, as pywb resolves it, to the response it repeats.
func TestDemoRelaunchedTwiceReadsInWarcio(t *testing.T) {
	w := findWarcio(t)
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
	resolver := viralsite.Resolver(srv.Resolver())
	p, err := profile.Shipped("demo")
	if err != nil {
		t.Fatal(err)
	}
	// As the profile documents: clamd refuses a longer stream (the site's
	// large files), so the worker must send it no more than this.
	p.ClamAV.StreamMaxLengthBytes = streamMax
	dir := t.TempDir()

	var runs []crawlRun
	seen := map[string]bool{}
	for i, relaunch := range []bool{false, true, true} {
		if i > 0 {
			// Launch timestamps have one-second resolution, and a URI
			// finished in the second of a launch counts as crawled in it:
			// the next launch must come in a later second than this run's
			// end. This waits for the clock, not for a condition.
			time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		sum, err := standalone.Run(ctx, standalone.Config{
			DataDir: dir, Seeds: seeds, Relaunch: relaunch, UntilIdle: true, ClamdAddr: clamd.Addr,
			KafkaListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0",
			Crawl: "fc", Stream: "npld", Threads: 8, Partitions: 2, TimeZone: "Europe/London",
		}, standalone.Deps{Profile: p, Resolver: resolver, Logger: slog.New(slog.DiscardHandler),
			Registry: prometheus.NewRegistry(), Version: "test"})
		cancel()
		if err != nil {
			t.Fatalf("run %d (relaunch %v): %v", i+1, relaunch, err)
		}
		run := crawlRun{name: []string{"demo", "first relaunch", "second relaunch"}[i]}
		for _, f := range warcFiles(t, dir) {
			if !seen[f] {
				seen[f] = true
				run.files = append(run.files, f)
			}
		}
		if len(run.files) == 0 {
			t.Fatalf("%s wrote no WARC files (summary %+v)", run.name, sum)
		}
		t.Logf("%s: %d URIs in all, by status %v; %d new WARC files", run.name, sum.URIs, sum.ByStatus, len(run.files))
		runs = append(runs, run)
	}

	var all []string
	for _, r := range runs {
		all = append(all, r.files...)
	}
	rep := w.run(t, all)
	rep.writeTo(t)
	recs := checkRecords(t, rep)
	if n := compareCDX(t, rep); n == 0 {
		t.Error("no index lines compared")
	}
	byFile := map[string][]*record{}
	for _, r := range recs {
		byFile[r.file] = append(byFile[r.file], r)
	}
	var kinds []string
	for _, r := range recs {
		kinds = append(kinds, recordKind(r))
	}
	for _, want := range []string{"warcinfo", "request", "response", "metadata", "dns", "viral response", "revisit"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("no %s record among the %d validated: the crawl did not exercise it", want, len(recs))
		}
	}

	perRun := make([][]*record, len(runs))
	for i, r := range runs {
		for _, f := range r.files {
			perRun[i] = append(perRun[i], byFile[f]...)
		}
	}
	t.Run("relaunches capture every URI of the first crawl", func(t *testing.T) {
		first := captured(perRun[0])
		for i := 1; i < len(runs); i++ {
			again := captured(perRun[i])
			var missing []string
			for u := range first {
				if !again[u] {
					missing = append(missing, u)
				}
			}
			sort.Strings(missing)
			if len(missing) > 0 {
				t.Errorf("%s did not capture %d of the %d URIs the demo crawl captured, e.g. %v",
					runs[i].name, len(missing), len(first), missing[:min(len(missing), 8)])
			}
		}
	})
	t.Run("revisits resolve to 2xx responses with the same payload digest", func(t *testing.T) {
		checkRevisits(t, recs)
	})
}

// warcFiles lists the finished WARC files under dir, normal and viral, and
// fails if any is still .open.
func warcFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	for _, sub := range []string{"warcs", "warcs-viral"} {
		open, _ := filepath.Glob(filepath.Join(dir, sub, "*", "*.open"))
		if len(open) > 0 {
			t.Fatalf("WARC files left open: %v", open)
		}
		done, _ := filepath.Glob(filepath.Join(dir, sub, "*", "*.warc.gz"))
		files = append(files, done...)
	}
	sort.Strings(files)
	return files
}

// recordKind names what a record is for the coverage check.
func recordKind(r *record) string {
	switch {
	case strings.HasPrefix(r.URI, "dns:"):
		return "dns"
	case strings.Contains(filepath.Base(r.file), "-VIRAL-") && r.Type == "response":
		return "viral response"
	}
	return r.Type
}

// captured is the set of URIs a run captured: a response or revisit of an
// HTTP URI, whatever its status (a 304 revisit and a 404 included), and
// robots.txt, which a new launch fetches again. dns: lookups are left out:
// they are prerequisites recorded when the cached answer expires (the DNS
// TTL), not once per launch.
func captured(recs []*record) map[string]bool {
	out := map[string]bool{}
	for _, r := range recs {
		if (r.Type == "response" || r.Type == "revisit") && r.isHTTP() && r.HTTPStatus > 0 {
			out[r.URI] = true
		}
	}
	return out
}

// checkRevisits resolves every revisit to the record it repeats, as pywb
// does: by WARC-Refers-To-Target-URI and WARC-Refers-To-Date (the capture
// of that URL at that time), and by WARC-Refers-To (the record id) when
// given, which must name the same record. The original must be a response
// (a revisit of a revisit cannot be replayed: pywb looks the original up
// once) with a 2xx status, and the revisit's WARC-Payload-Digest must be
// the original's, which checkRecords has had warcio.js verify.
func checkRevisits(t *testing.T, recs []*record) {
	bad := newFailures(t, "revisit")
	defer bad.done()
	byID := map[string]*record{}
	byTime := map[string][]*record{} // URI and 14-digit timestamp, as a CDX lookup finds it
	for _, r := range recs {
		byID[r.ID] = r
		if r.Type == "response" || r.Type == "revisit" {
			byTime[r.URI+" "+timestamp14(r.Date)] = append(byTime[r.URI+" "+timestamp14(r.Date)], r)
		}
	}
	revisits := 0
	for _, r := range recs {
		if r.Type != "revisit" {
			continue
		}
		revisits++
		if r.RefersToURI == "" || r.RefersToDate == "" {
			bad.add("%s: no WARC-Refers-To-Target-URI/Date (%q, %q): pywb cannot find its original", r, r.RefersToURI, r.RefersToDate)
			continue
		}
		var orig *record
		for _, c := range byTime[r.RefersToURI+" "+timestamp14(r.RefersToDate)] {
			// The exact WARC-Date first; a capture of the same second
			// otherwise, as a 14-digit CDX lookup would return it.
			if orig == nil || c.Date == r.RefersToDate {
				orig = c
			}
		}
		if r.RefersTo != "" {
			byRef := byID[r.RefersTo]
			switch {
			case byRef == nil:
				bad.add("%s: WARC-Refers-To %s is no record of the crawl", r, r.RefersTo)
			case orig != nil && byRef != orig:
				bad.add("%s: WARC-Refers-To names %s, its target URI and date %s", r, byRef, orig)
			}
			if orig == nil {
				orig = byRef
			}
		}
		switch {
		case orig == nil:
			bad.add("%s: refers to %s at %s, which is not in the crawl's WARCs", r, r.RefersToURI, r.RefersToDate)
		case orig.Type != "response":
			bad.add("%s: refers to %s, a %s (refers to %s at %s): a revisit must point at the response it repeats",
				r, orig, orig.Type, orig.RefersToURI, orig.RefersToDate)
		case orig.HTTPStatus < 200 || orig.HTTPStatus > 299:
			bad.add("%s: refers to %s, whose status is %d, not 2xx", r, orig, orig.HTTPStatus)
		case r.PayloadDigest == "":
			bad.add("%s (%s, status %d): no WARC-Payload-Digest; its original's is %s", r, r.Profile, r.HTTPStatus, orig.PayloadDigest)
		case !strings.EqualFold(r.PayloadDigest, orig.PayloadDigest):
			bad.add("%s: WARC-Payload-Digest %s, its original %s has %s", r, r.PayloadDigest, orig, orig.PayloadDigest)
		}
	}
	if revisits == 0 {
		t.Error("no revisit records: relaunching an unchanged site should write them")
	}
	t.Logf("%d revisits resolved", revisits)
}

// timestamp14 turns a WARC-Date into a CDX timestamp.
func timestamp14(date string) string {
	d := strings.NewReplacer("-", "", ":", "", "T", "").Replace(date)
	return d[:min(len(d), 14)]
}
