package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/baseline"
	"github.com/trawler-crawl/trawler/internal/testchild"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/testweb/docsite"
)

// siteEnv carries the site process's spec to the test binary run again.
const siteEnv = "TRAWLER_BENCH_TEST_SITE"

func TestMain(m *testing.M) {
	testchild.Main(siteEnv, func(spec SiteSpec) int {
		if err := ServeSite(context.Background(), spec, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	})
	os.Exit(m.Run())
}

// testLauncher runs the site in the test binary started again.
func testLauncher(spec SiteSpec) (*exec.Cmd, error) { return testchild.Command(siteEnv, spec) }

// realishSite writes a small directory of pages like a documentation
// package's: pages in subdirectories linking up with "../", a style sheet
// with an image, a link to a missing page and one leaving the site.
func realishSite(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"index.html":     `<html><head><link rel="stylesheet" href="_static/s.css"></head><body><span class="n">x</span><a href="lib/a.html#x">a</a> <a href="lib">lib</a> <a href="http://elsewhere.test/">out</a></body></html>`,
		"lib/a.html":     `<p class="x"><a href="../index.html">up</a> <a href="b.html">b</a> <a href="../missing.html">gone</a></p>`,
		"lib/b.html":     `<img src="../_static/i.png"><a href="./a.html">a</a>`,
		"lib/index.html": `<a href="a.html">a</a>`,
		"_static/s.css":  `body { background: url(bg.png) }`,
		"_static/i.png":  "png",
		"_static/bg.png": "png",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// walk finds what a crawl of a directory fetches: robots.txt, every link
// and embed on the host, redirects and 404s included, nothing elsewhere.
func TestWalk(t *testing.T) {
	srv, err := docsite.ServeDir(context.Background(), realishSite(t), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	got, err := walk(context.Background(), srv.URL()+"/")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range []string{"/", "/_static/bg.png", "/_static/i.png", "/_static/s.css", "/index.html", "/lib",
		"/lib/a.html", "/lib/b.html", "/missing.html", "/robots.txt"} {
		want = append(want, srv.URL()+p)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("walk found\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := walk(context.Background(), "not a url"); err == nil {
		t.Fatal("walk accepted a seed that is not a URL")
	}
}

// procStatCPU reads utime and stime past a command name with spaces.
func TestProcStatCPU(t *testing.T) {
	for _, c := range []struct {
		stat string
		want time.Duration
	}{
		{"1234 (trawler bench) S 1 2 3 4 5 6 7 8 9 10 150 25 0 0", 1750 * time.Millisecond},
		{"1 (a) b) R 0 0 0 0 0 0 0 0 0 0 3 4", 70 * time.Millisecond},
		{"garbage", 0}, {"1 (x) S 1 2", 0}, {"1 (x) S 1 2 3 4 5 6 7 8 9 10 x y", 0},
	} {
		if got := procStatCPU(c.stat); got != c.want {
			t.Errorf("procStatCPU(%q) = %v, want %v", c.stat, got, c.want)
		}
	}
}

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
	}{{"synthetic", SiteSynthetic, 0, 0}, {"docs", SiteDocs, 0, 2}, {"docs-tree", SiteDocs, 2, 4}, {"dir", SiteDir, 0, 0}} {
		site := tc.site
		t.Run(tc.name, func(t *testing.T) {
			var dir string
			if site == SiteDir {
				dir = realishSite(t)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			base := profile.Default()
			trace := filepath.Join(t.TempDir(), "trace.out")
			r, err := Run(ctx, Config{Site: site, Dir: dir, Launcher: testLauncher, Hosts: 2, PagesPerHost: 10, PageBytes: 10_000, DocsPages: 12,
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
			// when the site has no such file (a 404 is still a page). CI,
			// under load, once saw 88 fetches for the synthetic web's 84
			// URLs (not reproduced idle; its cause is open in issue 33),
			// so a tenth more is allowed.
			if r.Crawl.Pages < r.URLs || r.Crawl.Pages > r.URLs+2+r.URLs/10 {
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
			if r.Crawl.Window <= 0 || r.Crawl.CPU <= 0 || r.Crawl.PeakRSS <= 0 || r.Crawl.Links <= 0 {
				t.Errorf("crawl measures missing: %+v", r.Crawl)
			}
			// The crawl's redis-server is a child that ends with the crawl:
			// its CPU is counted on the crawl's side.
			names := map[string]bool{}
			for _, p := range r.Startup.Phases {
				names[p.Name] = p.Took >= 0
			}
			if !names["cluster"] || !names["idle"] || !names["reports"] {
				t.Errorf("empty crawl's phases %+v lack cluster, idle or reports", r.Startup.Phases)
			}
			if len(r.Crawl.Redis) == 0 {
				t.Errorf("no Redis command statistics")
			}
			if r.Crawl.ChildCPU <= 0 || r.Startup.Wall <= 0 || r.Startup.CPU <= 0 {
				t.Errorf("redis-server's CPU (%v) or the empty crawl's cost (%+v) not measured", r.Crawl.ChildCPU, r.Startup)
			}
			var out bytes.Buffer
			r.Print(&out)
			wants := []string{"baseline", "trawler", "CPU-µs per page by stage", "time ratio: the crawl took",
				"start-up and stop of an empty crawl", "µs per link", "top functions", "redis-server per page (calls, µs):", "to stop the broker and Redis"}
			if site != SiteDir { // ten pages may leave no sample in a stage
				wants = append(wants, "warc")
			}
			for _, want := range wants {
				if !strings.Contains(out.String(), want) {
					t.Errorf("report lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// Bad settings are refused before anything starts.
func TestRunRejectsUnknownSite(t *testing.T) {
	_, err := Run(context.Background(), Config{Site: "nowhere", Launcher: testLauncher, Base: profile.Default()})
	if err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Fatalf("err = %v", err)
	}
	_, err = Run(context.Background(), Config{Site: SiteDir, Dir: filepath.Join(t.TempDir(), "absent"), Launcher: testLauncher, Base: profile.Default()})
	if err == nil || !strings.Contains(err.Error(), "absent") {
		t.Fatalf("missing directory: err = %v", err)
	}
	if _, err = Run(context.Background(), Config{Site: SiteSynthetic, Base: profile.Default()}); err == nil {
		t.Fatal("Run without a launcher: no error")
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
