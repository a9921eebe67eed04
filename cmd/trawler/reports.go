package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/reports"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/services/worker"
)

// runReports writes Heritrix's six reports from a cluster's crawled topic:
// the whole crawl, or one stream, launch or target of it. A cluster has no
// end of job at which to write them (the standalone crawl writes them when
// it ends), so an operator or a CronJob asks for them. Reading the topic
// from its start is the only state needed: no worker, Redis or frontier.
func runReports(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("reports", stderr)
	var c common
	c.registerBase(fs, "info")
	var kc kafka.Config
	kc.RegisterFlags(fs)
	crawl := fs.String("crawl", "fc", "crawl whose <crawl>.crawled topic to read: fc (frequent) or dc (domain)")
	var f reports.Filter
	fs.StringVar(&f.Stream, "stream", "", "only this stream of the frequent crawl: npld or bypm (empty: every stream)")
	fs.StringVar(&f.Source, "source", "", "only this target: its source tag, e.g. tid:1001:https://example.org/ (empty: every target)")
	fs.StringVar(&f.Launch, "launch", "", "only this launch: its 14-digit launch timestamp, e.g. 20240117090000 (empty: every launch)")
	out := fs.String("out", "./reports", "directory to write the six report files into (created if missing)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *crawl != "fc" && *crawl != "dc" {
		return fmt.Errorf("%w: --crawl %q: want fc or dc", errUsage, *crawl)
	}
	if f.Stream != "" && f.Stream != "npld" && f.Stream != "bypm" {
		return fmt.Errorf("%w: --stream %q: want npld or bypm", errUsage, f.Stream)
	}
	if f.Launch != "" {
		if _, err := time.Parse("20060102150405", f.Launch); err != nil {
			return fmt.Errorf("%w: --launch %q: want a 14-digit timestamp such as 20240117090000", errUsage, f.Launch)
		}
	}
	if err := kc.Validate(); err != nil {
		return err
	}
	p, err := loadProfile(c)
	if err != nil {
		return err
	}
	log, err := newLogger(c.logFormat, c.logLevel, stderr)
	if err != nil {
		return err
	}
	kc.ClientID = "trawler-reports"
	// The crawl name only labels crawl-report.txt: the crawled topic is
	// per crawl already, and the filter picks within it.
	j := worker.NewJournal(kc, worker.Config{Crawl: *crawl, Stream: f.Stream}, "", log)
	opts := reports.Options{CrawlName: p.Crawl.Name}
	if p.Scope.SeedsRedirectNewSeeds {
		opts.RedirectSeedHops = scope.SeedRedirectMaxHops
	}
	// The crawl runs on: its status is Heritrix's for a running job, and
	// its span is that of the events reported (Build fills Start and End).
	sum, err := reports.Build(ctx, j.Events, f, opts, reports.RunInfo{Status: "Running"}, *out)
	if err != nil {
		return err
	}
	if sum.Undecodable > 0 || sum.Unusable > 0 {
		log.Warn("crawled events left out of the reports", "undecodable", sum.Undecodable, "unusable", sum.Unusable)
	}
	fmt.Fprintf(stdout, "reports written to %s: %d events reported, %d of other streams, launches or targets skipped\n", *out, sum.Matched, sum.Skipped)
	return nil
}
