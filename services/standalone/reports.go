package standalone

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/reports"
	"github.com/trawler-crawl/trawler/services/worker"
)

// ReportsDir is where a standalone crawl's Heritrix-style reports are
// written, under the data directory.
func ReportsDir(dataDir string) string { return filepath.Join(dataDir, "reports") }

// writeReports reads every crawled event of the crawl (all runs on this
// data directory, from the journal) and writes crawl-report.txt,
// seeds-report.txt, hosts-report.txt, mimetype-report.txt,
// responsecode-report.txt and source-report.txt, as Heritrix does when a
// job ends.
func writeReports(ctx context.Context, cl *cluster, cfg Config, wcfg worker.Config, w *worker.Worker,
	crawlName string, info reports.RunInfo, log *slog.Logger) error {
	// The report's rows are host names and the frontier's queues are
	// host:port, so #remaining adds up every port of a host.
	queued, err := w.Frontier().QueuedByHostName(ctx)
	if err != nil {
		log.Warn("reports: #remaining left at 0", "err", err)
	}
	info.Remaining = func(host string) int64 { return queued[host] }
	j := worker.NewJournal(cl.kafka, wcfg, crawlName, log.With("role", "reports"))
	dir := ReportsDir(cfg.DataDir)
	opts := reports.Options{CrawlName: crawlName, Seeds: cfg.Seeds, RedirectSeedHops: w.SeedRedirectHops()}
	sum, err := reports.Build(ctx, j.Events, reports.Filter{}, opts, info, dir)
	if err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	if sum.Undecodable > 0 || sum.Unusable > 0 {
		log.Warn("crawled events left out of the reports", "undecodable", sum.Undecodable, "unusable", sum.Unusable)
	}
	log.Info("reports written", "dir", dir)
	return nil
}

// crawlStatus is Heritrix's CrawlStatus text for how the run ended.
func crawlStatus(endedBy string) string {
	switch endedBy {
	case endedIdle:
		return "Finished"
	case frontier.LimitDocuments, frontier.LimitNovelURIs:
		return "Finished - Maximum number of documents limit hit"
	case frontier.LimitBytes, frontier.LimitNovelSize:
		return "Finished - Maximum amount of data limit hit"
	case frontier.LimitTime:
		return "Finished - Timelimit hit"
	default:
		return "Finished - Ended by operator"
	}
}
