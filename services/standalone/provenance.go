package standalone

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/services/provenance"
	"github.com/trawler-crawl/trawler/services/worker"
)

// WatchedFile is where a standalone run looks for the launcher's watched
// export (`trawler launcher export --watched`); when it exists the
// document finder runs.
func WatchedFile(dataDir string) string { return filepath.Join(dataDir, "watched.jsonl") }

// newProvenance builds the provenance role (docs/provenance.md) over the
// worker's directories and frontier. A launch is sealed a few seconds
// after its last URI completes; whatever is still open at the end of the
// run is sealed by endProvenance.
func newProvenance(cfg Config, d Deps, cl *cluster, w *worker.Worker, wcfg worker.Config, log *slog.Logger) (*provenance.Service, error) {
	pc := provenance.Config{Crawl: cfg.Crawl, Stream: cfg.Stream, DataDir: cfg.DataDir, WARCDir: wcfg.WARCDir() + "-metadata",
		DocWARCDirs: []string{wcfg.WARCDir(), wcfg.WARCDir() + "-render"},
		LogDirs:     []string{wcfg.LogDir()}, Hostname: "standalone", PollInterval: 2 * time.Second, Settle: 5 * time.Second,
		Batch: provenance.DefaultBatch}
	if _, err := os.Stat(WatchedFile(cfg.DataDir)); err == nil {
		pc.Watched = WatchedFile(cfg.DataDir)
	}
	return provenance.New(pc, provenance.Deps{Kafka: cl.kafka, Redis: cl.rdb, Frontier: w.Frontier(), Profile: d.Profile,
		Version: d.Version, Logger: log.With("role", "provenance"), Registerer: d.Registry})
}

// endProvenance seals the launches still open as the run ends, in the
// state the run's end gives them (completed when idle, else the limit that
// ended it), and writes their metadata WARCs. It runs while the roles
// still do, so the last events are counted first. An interrupted run
// seals nothing: its roles are already stopping, and the next run on the
// data directory continues its launches.
func endProvenance(ctx context.Context, p *provenance.Service, endedBy string) error {
	state := endedBy
	switch endedBy {
	case endedIdle:
		state = harveststats.StateCompleted
	case endedInterrupted:
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	return p.EndCrawl(ctx, state)
}
