package standalone

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/services/worker"
)

// recoverFrontier makes the frontier whole before the crawl resumes. An
// empty frontier over a journal that holds an earlier crawl (a Redis that
// lost its data, or miniredis, which keeps nothing) is rebuilt from the
// journal: inscope minus crawled. Otherwise, with an embedded Redis that
// no other process shares, leases a killed run left behind belong to no
// live worker, so their URIs go back at once.
func recoverFrontier(ctx context.Context, cfg Config, cl *cluster, w *worker.Worker, wcfg worker.Config, p profile.Profile, log *slog.Logger) error {
	f := w.Frontier()
	empty, err := f.Empty(ctx)
	if err != nil {
		return err
	}
	if empty {
		j := worker.NewJournal(cl.kafka, wcfg, p.Crawl.Name, log.With("role", "rebuild"))
		has, err := j.HasData(ctx)
		if err != nil {
			return err
		}
		if !has {
			return nil
		}
		log.Info("the frontier is empty but the journal holds an earlier crawl: rebuilding it")
		rep, err := worker.RebuildFrontier(ctx, cl.rdb, f, j, p, false)
		if err != nil {
			return fmt.Errorf("rebuild frontier: %w", err)
		}
		log.Info("frontier rebuilt from the journal", "finished", rep.Finished, "admitted", rep.Admitted,
			"queued", rep.Queued, "skipped", rep.Skipped, "malformed", rep.Malformed)
		// The worker read Redis before the rebuild restored the seeds and
		// launch sheets: its first claims must not use what it read then.
		if err := w.ReloadLaunchState(ctx); err != nil {
			return fmt.Errorf("rebuild frontier: %w", err)
		}
		return nil
	}
	if cfg.Redis != "" {
		return nil
	}
	n, err := f.ReleaseAll(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		log.Info("returned URIs left in flight by the previous run", "uris", n)
	}
	return nil
}
