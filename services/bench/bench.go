// Package bench measures a standalone crawl against the machine's ceiling:
// it serves a site on loopback (the synthetic web, or a static
// documentation site from disk), fetches every page with the bare baseline
// (32 goroutines, each response gzipped into a discard writer and digested
// with SHA-1), then crawls the same site with `trawler standalone` (politeness off) and
// reports pages/s, CPU-µs per page by stage (from a CPU profile whose
// samples carry the worker's pprof stage labels) and peak RSS.
package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/trawler-crawl/trawler/internal/baseline"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/services/standalone"
)

// Sites the benchmark can serve.
const (
	SiteSynthetic = "synthetic"
	SiteDocs      = "docs"
	// SiteDir serves a directory of real pages, such as Debian's
	// documentation packages' HTML; Config.Dir names it.
	SiteDir = "dir"
)

// Config says what to measure.
type Config struct {
	// Site is SiteSynthetic, SiteDocs or SiteDir.
	Site string
	// Dir is the directory a SiteDir serves.
	Dir string
	// Launcher starts the process that serves the site (see ServeSite).
	Launcher SiteLauncher
	// Hosts and PagesPerHost size the synthetic web; PageBytes pads its
	// HTML pages.
	Hosts, PagesPerHost, PageBytes int
	// DocsPages sizes the documentation site; DocsFanout > 0 makes its
	// pages a tree of that fanout below the index (a crawl discovers them
	// level by level) instead of a flat table of contents.
	DocsPages, DocsFanout int
	// GzipLevel is used by both the baseline and the WARC writer.
	GzipLevel int
	// Threads are the crawl's worker threads; Goroutines the baseline's.
	Threads, Goroutines int
	// ClamdAddr, when set, has the crawl scan every response.
	ClamdAddr string
	// DataDir holds the crawl's output; "" means a temporary directory,
	// removed afterwards.
	DataDir string
	// CPUProfile, when set, keeps the crawl's CPU profile there.
	CPUProfile string
	// Trace, when set, writes the crawl's execution trace there.
	Trace string
	// MemProfile, when set, keeps the allocation profile there as it was
	// after the crawl, and as it was before it in MemProfile+".base".
	MemProfile string
	// Base is the profile the crawl starts from (politeness is turned off).
	Base   profile.Profile
	Logger *slog.Logger
}

// Report is what one benchmark run measured.
type Report struct {
	Site string
	URLs int
	// Levels is how many link levels the site has below its seed (0: not
	// known, the synthetic web).
	Levels int
	// Baselines are the baseline runs before and after the crawl; Baseline
	// pools them, and is what the crawl is compared with.
	Baselines []baseline.Result
	Baseline  baseline.Result
	// BaselineInstructions and BaselineCycles are what all CPUs retired
	// and spent during the baseline runs, 0 when perf counters are not
	// available.
	BaselineInstructions, BaselineCycles uint64
	// BaselineSiteCPU is what the site process spent serving the
	// baselines (not part of their CPU).
	BaselineSiteCPU time.Duration
	// Startup is an empty crawl's: what starting and stopping costs,
	// taken off the crawl's CPU in the ratios.
	Startup Startup
	Crawl   CrawlResult
}

// Startup is the cost of starting and stopping a standalone crawl with
// nothing to crawl.
type Startup struct {
	Wall time.Duration
	// CPU is the process's and its children's (redis-server).
	CPU time.Duration
	// Phases is where the wall time went (standalone.Summary.Phases); the
	// broker's and Redis's stop come after the last.
	Phases []standalone.Phase
}

// CrawlResult is the standalone crawl's side.
type CrawlResult struct {
	// Pages counts fetched URIs (crawl.log lines with an HTTP status),
	// in Window: from the first fetch start to the last log line.
	Pages  int
	Window time.Duration
	// CPU is the process's user+system time over the whole run, startup
	// and shutdown included; ChildCPU is its children's (the embedded
	// redis-server); MachineCPU is every process's, from /proc/stat
	// (adding the site process, and clamd when scanning). SiteCPU is the
	// site process's, which is neither side's cost.
	CPU, ChildCPU, MachineCPU, SiteCPU time.Duration
	// Links counts the candidate URIs the crawl's extractors found (every
	// outcome: admitted, seen, rejected...).
	Links int
	// Stages is the profiled CPU time by worker stage; "other" is
	// everything unlabelled (broker, Redis client, site server, GC, cdx
	// writer).
	Stages map[string]time.Duration
	// Top are the functions with the most CPU samples of their own (flat),
	// most first.
	Top []FuncCPU
	// PeakRSS is the process's high-water resident set, in bytes.
	PeakRSS int64
	// Redis is the embedded redis-server's commands over the whole run
	// (start-up included), busiest first; empty without a redis-server.
	Redis []redisconn.CommandStat
	// Instructions and Cycles are what all CPUs retired and spent during
	// the crawl, 0 when perf counters are not available.
	Instructions, Cycles uint64
}

// FuncCPU is one function's flat CPU time in a profile.
type FuncCPU struct {
	Name string
	CPU  time.Duration
}

// PagesPerSec is the crawl rate over its window.
func (c CrawlResult) PagesPerSec() float64 {
	if c.Window <= 0 {
		return 0
	}
	return float64(c.Pages) / c.Window.Seconds()
}

// site is a served benchmark site.
type site struct {
	levels   int
	seeds    []string
	urls     []string
	resolver fetch.Resolver
}

// Run serves the site and runs the baseline, the crawl, and the baseline
// again.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	tmp, err := os.MkdirTemp("", "trawler-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(tmp)
	if cfg.Launcher == nil {
		return nil, errors.New("bench: no launcher for the site process")
	}
	spec := SiteSpec{Kind: cfg.Site, Hosts: cfg.Hosts, PagesPerHost: cfg.PagesPerHost, PageBytes: cfg.PageBytes,
		DocsPages: cfg.DocsPages, DocsFanout: cfg.DocsFanout, Dir: cfg.Dir}
	if cfg.Site == SiteDocs {
		spec.Dir = filepath.Join(tmp, "docs")
	}
	proc, err := startSite(ctx, cfg.Launcher, spec)
	if err != nil {
		return nil, err
	}
	defer func() { _, _ = proc.close() }()
	s := &proc.site
	if cfg.Site == SiteDir {
		if s.urls, err = walk(ctx, s.seeds[0]); err != nil {
			return nil, err
		}
	}
	name := cfg.Site
	if cfg.Site == SiteDir {
		name = SiteDir + ":" + cfg.Dir
	}
	r := &Report{Site: name, URLs: len(s.urls), Levels: s.levels}
	dataDir := cfg.DataDir
	if dataDir == "" {
		dataDir = filepath.Join(tmp, "crawl")
	}
	// The baseline runs before and after the crawl, and the ratio is taken
	// to both together: a VM's speed drifts by tens of percent within a
	// minute, and a crawl compared with one neighbouring run takes the
	// drift for its own speed.
	runBaseline := func() error {
		var b baseline.Result
		site0 := proc.cpu()
		n, cycles, err := countInstructions(func() (err error) {
			b, err = baseline.Run(ctx, s.urls, baseline.Options{
				Goroutines: cfg.Goroutines, GzipLevel: cfg.GzipLevel, Resolver: s.resolver, Logger: cfg.Logger,
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("bench baseline: %w", err)
		}
		r.Baselines = append(r.Baselines, b)
		r.BaselineSiteCPU += proc.cpu() - site0
		r.BaselineInstructions += n
		r.BaselineCycles += cycles
		return nil
	}
	if err := runBaseline(); err != nil {
		return nil, err
	}
	if r.Startup, err = emptyCrawl(ctx, cfg, filepath.Join(tmp, "empty")); err != nil {
		return nil, err
	}
	site0 := proc.cpu()
	if r.Crawl, err = crawl(ctx, cfg, s, dataDir); err != nil {
		return nil, err
	}
	r.Crawl.SiteCPU = proc.cpu() - site0
	if err := runBaseline(); err != nil {
		return nil, err
	}
	r.Baseline = baseline.Merge(r.Baselines...)
	return r, nil
}

// countInstructions runs fn and returns the instructions and cycles of all
// CPUs meanwhile: 0 when they cannot be counted.
func countInstructions(fn func() error) (instructions, cycles uint64, err error) {
	c, err := startInstructions()
	if err != nil {
		return 0, 0, fn()
	}
	if err := fn(); err != nil {
		c.close()
		return 0, 0, err
	}
	instructions, cycles, _ = c.stop()
	return instructions, cycles, nil
}
