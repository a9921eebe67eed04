package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/baseline"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// A small benchmark run of each site crawls every URL the baseline fetched,
// attributes CPU to the worker's stages and prints its table. (The figures
// themselves are for `trawler bench`; here only their consistency counts.)
func TestRunSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two standalone crawls")
	}
	for _, tc := range []struct {
		name, site     string
		fanout, levels int
	}{{"synthetic", SiteSynthetic, 0, 0}, {"docs", SiteDocs, 0, 2}, {"docs-tree", SiteDocs, 2, 4}} {
		site := tc.site
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			base := profile.Default()
			trace := filepath.Join(t.TempDir(), "trace.out")
			r, err := Run(ctx, Config{Site: site, Hosts: 2, PagesPerHost: 10, PageBytes: 10_000, DocsPages: 12,
				DocsFanout: tc.fanout, GzipLevel: 6, Threads: 8, Goroutines: 8, Base: base, Trace: trace})
			if err != nil {
				t.Fatal(err)
			}
			if r.Levels != tc.levels { // 12 pages of fanout 2: levels 1, 2-5, 6-12 below the index
				t.Errorf("site has %d levels, want %d", r.Levels, tc.levels)
			}
			if fi, err := os.Stat(trace); err != nil || fi.Size() == 0 {
				t.Errorf("execution trace %s: %v (empty: %v)", trace, err, err == nil && fi.Size() == 0)
			}
			if len(r.Baselines) != 2 {
				t.Fatalf("%d baseline runs, want one before and one after the crawl", len(r.Baselines))
			}
			for i, b := range r.Baselines {
				if b.Pages != r.URLs || b.Errors != 0 {
					t.Fatalf("baseline #%d fetched %d of %d URLs, %d errors", i+1, b.Pages, r.URLs, b.Errors)
				}
			}
			if r.Baseline.Pages != 2*r.URLs || r.Baseline.Wall != r.Baselines[0].Wall+r.Baselines[1].Wall {
				t.Fatalf("pooled baseline %+v does not add up the runs %+v", r.Baseline, r.Baselines)
			}
			// The crawl fetches every URL once; robots.txt counts once more
			// when the site has no such file (a 404 is still a page).
			if r.Crawl.Pages < r.URLs || r.Crawl.Pages > r.URLs+2 {
				t.Fatalf("crawl fetched %d pages for %d URLs", r.Crawl.Pages, r.URLs)
			}
			// A run this short gets a few dozen 10 ms samples: some land in
			// the worker's labelled stages, and none under unknown labels.
			var staged time.Duration
			for st, d := range r.Crawl.Stages {
				if rank(st) == len(stageOrder) {
					t.Errorf("CPU under an unknown stage %q", st)
				}
				if st != "other" {
					staged += d
				}
			}
			if staged <= 0 {
				t.Errorf("no CPU attributed to the worker's stages: %v", r.Crawl.Stages)
			}
			if r.Crawl.Window <= 0 || r.Crawl.CPU <= 0 || r.Crawl.PeakRSS <= 0 {
				t.Errorf("crawl measures missing: %+v", r.Crawl)
			}
			var out bytes.Buffer
			r.Print(&out)
			for _, want := range []string{"baseline", "trawler", "CPU-µs per page by stage", "warc", "time ratio: the crawl took"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("report lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// Bad settings are refused before anything starts.
func TestRunRejectsUnknownSite(t *testing.T) {
	_, err := Run(context.Background(), Config{Site: "nowhere", Base: profile.Default()})
	if err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("err = %v", err)
	}
}

// TestPrintSummary takes the median of an odd and an even number of runs
// and the range, from reports whose ratios are known.
func TestPrintSummary(t *testing.T) {
	report := func(windowMs int64) *Report {
		// The baseline passes 100 URLs at 100 pages/s: one pass is 1 s.
		return &Report{URLs: 100, Baseline: baseline.Result{PagesPerSec: 100, CPUMicrosPerPage: 1000},
			Crawl: CrawlResult{Pages: 100, Window: time.Duration(windowMs) * time.Millisecond, CPU: 150 * time.Millisecond}}
	}
	for _, c := range []struct {
		windows []int64
		want    string
	}{
		{[]int64{1400, 1200, 1600}, "time ratio 1.40x (1.20x-1.60x); CPU-µs/page vs baseline 150% (150%-150%); pages/s vs baseline 71% (62%-83%);"},
		{[]int64{1300, 1100, 1500, 1200}, "time ratio 1.25x (1.10x-1.50x);"},
	} {
		var rs []*Report
		for _, w := range c.windows {
			rs = append(rs, report(w))
		}
		var out bytes.Buffer
		PrintSummary(&out, rs)
		if !strings.Contains(out.String(), c.want) || !strings.HasPrefix(out.String(), "over "+strconv.Itoa(len(rs))+" runs") {
			t.Errorf("%v: %q, want %q", c.windows, out.String(), c.want)
		}
	}
}
