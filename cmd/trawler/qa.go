package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/browser"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/metawarc"
	"github.com/trawler-crawl/trawler/pkg/mitm"
	"github.com/trawler-crawl/trawler/pkg/qa"
	"github.com/trawler-crawl/trawler/pkg/replay"
	"github.com/trawler-crawl/trawler/pkg/streamname"
)

// qaFlags are `trawler qa`'s settings.
type qaFlags struct {
	c                   common
	data, crawl, stream string
	source, launch      string
	cdxDir, cdxURL, out string
	warcDirs, logs      repeated
	sample, tabs        int
	scroll              int
	pageTimeout         time.Duration
	chromium            string
	noSandbox, patch    bool
	perPage, perLaunch  int
	kc                  kafka.Config
}

func (f *qaFlags) register(fs *flag.FlagSet) {
	f.c.register(fs, "")
	fs.StringVar(&f.data, "data", "", "a standalone crawl's data directory: sets the defaults of --cdx-dir, --warc-dir, --crawl-log and --out")
	fs.StringVar(&f.crawl, "crawl", "fc", "crawl name: the index collection, and the tocrawl topic of --patch")
	fs.StringVar(&f.stream, "stream", "npld", "stream of the tocrawl topic of --patch")
	fs.StringVar(&f.source, "source", "", "check only pages of this source tag (a launch's target)")
	fs.StringVar(&f.launch, "launch", "", "check only pages logged at or after this launch timestamp (14 digits); names the report")
	fs.StringVar(&f.cdxDir, "cdx-dir", "", "the crawl's embedded CDX index directory, opened read-only (not while its crawl runs: use --cdx-url)")
	fs.StringVar(&f.cdxURL, "cdx-url", "", "an OutbackCDX-compatible API (a running standalone's --cdx-addr) instead of --cdx-dir")
	fs.Var(&f.warcDirs, "warc-dir", "directory of the crawl's WARC files (repeatable; globs allowed)")
	fs.Var(&f.logs, "crawl-log", "crawl.log file the pages come from (repeatable; globs allowed)")
	fs.StringVar(&f.out, "out", "", "directory for qa-report.json and qa-report.html (default with --data, --source and --launch: the launch's report directory, where its metadata WARC takes the report from)")
	fs.IntVar(&f.sample, "sample", 0, "check at most this many pages, spread over the selection (0: all)")
	fs.IntVar(&f.tabs, "tabs", 2, "pages loaded in Chromium at once")
	fs.IntVar(&f.scroll, "scroll-steps", 2, "viewport heights to scroll each page, as the crawl's renderer did (render.scrollSteps)")
	fs.DurationVar(&f.pageTimeout, "page-timeout", time.Minute, "budget of one page's replay; a page that never finishes loading is reported severe")
	fs.StringVar(&f.chromium, "chromium", "", "Chromium binary (default: found in PATH)")
	fs.BoolVar(&f.noSandbox, "no-sandbox", false, "run Chromium without its sandbox (needed as root and in most containers)")
	fs.BoolVar(&f.patch, "patch", false, "send the missing URLs to the crawl's tocrawl topic (hop E via their page), for a patch crawl")
	fs.IntVar(&f.perPage, "patch-per-page", 50, "with --patch, at most this many missing URLs of one page")
	fs.IntVar(&f.perLaunch, "patch-per-launch", 1000, "with --patch, at most this many missing URLs in all")
	f.kc.RegisterFlags(fs)
}

// defaults fills the archive's locations from --data.
func (f *qaFlags) defaults() error {
	if f.data != "" {
		if f.cdxDir == "" && f.cdxURL == "" {
			f.cdxDir = filepath.Join(f.data, "cdx", "index")
		}
		if len(f.warcDirs) == 0 {
			f.warcDirs = repeated{filepath.Join(f.data, "warcs", "*")}
		}
		if len(f.logs) == 0 {
			f.logs = repeated{filepath.Join(f.data, "logs", "*", "crawl.log"), filepath.Join(f.data, "logs", "*", "*", "crawl.log")}
		}
		if f.out == "" && f.source != "" && f.launch != "" {
			f.out = filepath.Join(f.data, "provenance", f.crawl, metawarc.SourceID(f.source)+"-"+f.launch)
		}
	}
	var errs []error
	if (f.cdxDir == "") == (f.cdxURL == "") {
		errs = append(errs, errors.New("give one of --cdx-dir and --cdx-url (or --data)"))
	}
	if len(f.warcDirs) == 0 || len(f.logs) == 0 {
		errs = append(errs, errors.New("--warc-dir and --crawl-log are required (or --data)"))
	}
	if f.launch != "" {
		if _, err := time.Parse("20060102150405", f.launch); err != nil {
			errs = append(errs, fmt.Errorf("--launch %q: want 14 digits, yyyyMMddHHmmss", f.launch))
		}
	}
	if f.tabs < 1 || f.sample < 0 || f.perPage < 1 || f.perLaunch < 1 {
		errs = append(errs, errors.New("--tabs, --patch-per-page and --patch-per-launch must be at least 1, --sample at least 0"))
	}
	return errors.Join(errs...)
}

// globs expands each pattern that has glob characters; a plain path is
// kept as given, so that a missing file is reported by its name.
func globs(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		if !strings.ContainsAny(p, "*?[") {
			out = append(out, p)
			continue
		}
		m, _ := filepath.Glob(p) // a malformed pattern matches nothing
		out = append(out, m...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func runQA(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("qa", stderr)
	var f qaFlags
	f.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := f.defaults(); err != nil {
		fmt.Fprintf(stderr, "trawler qa: %v\n", err)
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	log, err := newLogger(f.c.logFormat, f.c.logLevel, stderr)
	if err != nil {
		return err
	}
	p, err := loadProfile(f.c)
	if err != nil {
		return err
	}
	reg := newRegistry()
	if f.c.adminAddr != "" {
		adm, err := admin.Listen(f.c.adminAddr, reg, log)
		if err != nil {
			return err
		}
		defer func() { _ = adm.Close() }()
	}
	m, err := qa.NewMetrics(reg)
	if err != nil {
		return err
	}
	logs, warcDirs := globs(f.logs), globs(f.warcDirs)
	if len(logs) == 0 || len(warcDirs) == 0 {
		return fmt.Errorf("no crawl.log files (%s) or no WARC directories (%s)", strings.Join(f.logs, ", "), strings.Join(f.warcDirs, ", "))
	}
	ix, closeIndex, err := f.index()
	if err != nil {
		return err
	}
	defer closeIndex()
	ca, err := mitm.NewCA()
	if err != nil {
		return err
	}
	// Chromium that cannot start (as root without --no-sandbox, say)
	// never says so: its start is bounded.
	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	pool, err := browser.New(startCtx, browser.Config{ExecPath: f.chromium, Tabs: f.tabs, PageTimeout: f.pageTimeout,
		SPKIHashes: []string{ca.SPKIHash()}, NoSandbox: f.noSandbox, Log: log})
	if err != nil {
		return fmt.Errorf("start Chromium (as root, add --no-sandbox): %w", err)
	}
	defer func() { _ = pool.Close() }()
	job := qa.Job{Index: ix, WARCDirs: warcDirs, LogFiles: logs,
		Selection: qa.Selection{Source: f.source, Sample: f.sample}, Crawl: f.crawl, Source: f.source, Launch: f.launch,
		Browser: pool, CA: ca, UserAgent: p.UserAgent(buildVersion()), ScrollSteps: f.scroll, Workers: f.tabs,
		OutDir: f.out, Metrics: m, Log: log}
	if f.launch != "" {
		job.Selection.From, _ = time.Parse("20060102150405", f.launch)
	}
	if f.patch {
		cl, err := kafka.NewClient(f.kc)
		if err != nil {
			return err
		}
		defer cl.Close()
		job.Patch = &qa.PatchTarget{Client: cl, Topic: streamname.Topic(f.crawl, f.stream, "tocrawl"),
			Bounds: qa.PatchBounds{PerPage: f.perPage, PerLaunch: f.perLaunch, LaunchID: f.launch}}
	}
	rep, pt, err := job.Run(ctx)
	if rep != nil {
		fmt.Fprintln(stdout, rep.Summary())
	}
	if pt != nil {
		fmt.Fprintf(stdout, "patch: %d URLs sent, %d left out by the bounds\n", len(pt.Launches), pt.Dropped)
	}
	return err
}

// index opens the archive's CDX index.
func (f *qaFlags) index() (replay.Index, func(), error) {
	if f.cdxURL != "" {
		o, err := replay.NewOutbackCDX(replay.OutbackCDXOptions{URL: f.cdxURL, Collection: f.crawl})
		return o, func() {}, err
	}
	// Opening would create an index where there is none.
	if _, err := os.Stat(f.cdxDir); err != nil {
		return nil, nil, fmt.Errorf("--cdx-dir: %w", err)
	}
	ix, err := cdxindex.Open(f.cdxDir, cdxindex.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("--cdx-dir: %w", err)
	}
	return replay.NewCDXIndex(ix, f.crawl), func() { _ = ix.Close() }, nil
}
