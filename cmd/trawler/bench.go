package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/trawler-crawl/trawler/services/bench"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("bench", stderr)
	var c common
	c.registerBase(fs, "warn")
	cfg := bench.Config{}
	fs.StringVar(&cfg.Site, "site", bench.SiteSynthetic, "site to crawl: synthetic (the synthetic web), docs (a generated documentation site) or dir:DIR (a directory of real pages, e.g. dir:/usr/share/doc/python3/html), served by a separate process")
	serveSite := fs.String("serve-site", "", "internal: serve the site this JSON spec describes (the benchmark's site process)")
	fs.IntVar(&cfg.Hosts, "hosts", 40, "synthetic web hosts")
	fs.IntVar(&cfg.PagesPerHost, "pages", 250, "synthetic web HTML pages per host")
	fs.IntVar(&cfg.PageBytes, "page-bytes", 10_000, "pad synthetic HTML pages to this size")
	fs.IntVar(&cfg.DocsPages, "docs-pages", 1000, "documentation site pages (about 100 KB each)")
	fs.IntVar(&cfg.DocsFanout, "docs-fanout", 0, "make the documentation site a tree of this fanout, discovered level by level (0: a flat table of contents; 557 pages of fanout 4 are 6 levels)")
	fs.IntVar(&cfg.GzipLevel, "gzip", 6, "gzip level of the WARCs and of the baseline")
	fs.IntVar(&cfg.Threads, "threads", 128, "crawl threads (and parallel queues per host: politeness is off)")
	fs.IntVar(&cfg.Goroutines, "goroutines", 32, "baseline fetch goroutines")
	fs.StringVar(&cfg.ClamdAddr, "clamd-addr", "", "scan every response with this clamd (tcp://host:port or unix:///path)")
	fs.StringVar(&cfg.DataDir, "data", "", "keep the crawl's output here (default: a temporary directory)")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write the crawl's CPU profile here (go tool pprof -tags shows the stages)")
	fs.StringVar(&cfg.MemProfile, "memprofile", "", "write the allocation profile after the crawl here, and before it in <file>.base (go tool pprof -sample_index=alloc_space -diff_base <file>.base)")
	fs.StringVar(&cfg.Trace, "trace", "", "write the crawl's execution trace here (go tool trace shows where threads wait)")
	runs := fs.Int("runs", 1, "run the whole benchmark this many times and print the median and range of its ratios")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *serveSite != "" {
		var spec bench.SiteSpec
		if err := json.Unmarshal([]byte(*serveSite), &spec); err != nil {
			return fmt.Errorf("bench --serve-site: %w", err)
		}
		return bench.ServeSite(ctx, spec, os.Stdin, stdout)
	}
	if dir, ok := strings.CutPrefix(cfg.Site, bench.SiteDir+":"); ok {
		if dir == "" {
			return fmt.Errorf("bench: --site dir: names no directory (dir:/usr/share/doc/python3/html)")
		}
		cfg.Site, cfg.Dir = bench.SiteDir, dir
	}
	if *runs < 1 {
		return fmt.Errorf("bench: --runs %d: want at least 1", *runs)
	}
	if *runs > 1 && (cfg.DataDir != "" || cfg.CPUProfile != "" || cfg.MemProfile != "" || cfg.Trace != "") {
		return fmt.Errorf("bench: --data, --cpuprofile, --memprofile and --trace keep one run's output: use them with --runs 1")
	}
	if c.profilePath == "" {
		c.profilePath = "demo"
	}
	log, err := newLogger(c.logFormat, c.logLevel, stderr)
	if err != nil {
		return err
	}
	if cfg.Base, err = loadProfile(c); err != nil {
		return err
	}
	cfg.Logger = log
	cfg.Launcher = siteLauncher
	tuneGC()
	fmt.Fprintf(stdout, "Benchmarking a standalone crawl of the %s site against the bare baseline...\n", cfg.Site)
	var reports []*bench.Report
	for i := range *runs {
		if *runs > 1 {
			fmt.Fprintf(stdout, "run %d of %d\n", i+1, *runs)
		}
		r, err := bench.Run(ctx, cfg)
		if err != nil {
			return err
		}
		r.Print(stdout)
		reports = append(reports, r)
	}
	if *runs > 1 {
		bench.PrintSummary(stdout, reports)
	}
	return nil
}

// siteLauncher runs this binary again as the benchmark's site process.
func siteLauncher(spec bench.SiteSpec) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this binary: %w", err)
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	return exec.Command(self, "bench", "--serve-site", string(b)), nil
}
