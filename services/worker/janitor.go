package worker

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/identity"
	"github.com/trawler-crawl/trawler/pkg/spool"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// The janitor recovers the open WARCs of workers that died and whose
// identity nobody took again (a scaled-down replica, a slot a restarted
// worker did not get back). Every worker with a leased identity runs one:
// each period it lists the identities named by ".open" files in its WARC
// directories (which it shares with whoever else uses the data directory),
// and for each that is not its own and whose identity lease is gone it
// takes that lease itself, marked as a janitor's, so that neither another
// janitor nor a worker starting with that identity touches the files
// meanwhile (identity.Sweep). Holding it, it recovers the files as their
// owner's next start would (warcwriter.RecoverOpenHost), publishes their
// closed-WARC notices in the owner's name, writes the crawl.log lines the
// crash kept from the owner's crawl.log (recoverCrawlLogOf), then releases
// the lease.
//
// An identity whose lease is live is never touched: its owner is running.
// A lease expires only when its owner has not renewed it for the whole
// lease time, and an owner that finds its lease taken stops at once
// (ErrIdentityLost).

// janitorLoop sweeps at once and then every JanitorPeriod until ctx ends.
func (w *Worker) janitorLoop(ctx context.Context) {
	identity.RunJanitor(ctx, identityOptions(w.cfg, w.log), w.cfg.JanitorPeriod, "dead workers", w.sweep)
}

// sweep recovers the open files of every dead identity it sees, and
// returns how many files it closed.
func (w *Worker) sweep(ctx context.Context) (int, error) {
	return identity.Sweep(ctx, w.rdb, identityOptions(w.cfg, w.log), []string{w.cfg.WARCDir(), w.cfg.ViralDir()},
		w.cfg.ID, w.recoverDead)
}

// recoverDead recovers and announces dead identity id's open files and
// writes their missing crawl.log lines; the janitor holds id's lease.
func (w *Worker) recoverDead(_ context.Context, id string) (int, error) {
	var recovered []warcwriter.ClosedFile
	var errs []error
	for _, dir := range []string{w.cfg.WARCDir(), w.cfg.ViralDir()} {
		// Partial results are still announced: a file that failed stays
		// .open for the next sweep.
		fs, err := warcwriter.RecoverOpenHost(dir, id, w.log)
		if err != nil {
			errs = append(errs, err)
		}
		recovered = append(recovered, fs...)
	}
	for _, f := range recovered {
		w.log.Warn("janitor: closed WARC left open by a dead worker", "identity", id, "file", f.Name, "records", f.Records)
		w.announceWARC(f, id)
	}
	// Its spool directory goes too (spilled responses, record buffers).
	spool.RemoveStaleLogged(w.cfg.spoolDirOf(id), w.log, warcwriter.BufferFilePrefix)
	if w.cfg.leased() {
		_ = os.Remove(w.cfg.spoolDirOf(id)) // only when empty: the identity may come back
	}
	if len(recovered) > 0 {
		clog, err := crawllog.Open(crawllog.Options{Dir: w.cfg.logDirOf(id), Logger: w.log})
		if err != nil {
			errs = append(errs, fmt.Errorf("open crawl.log of %s: %w", id, err))
		} else {
			w.recoverCrawlLogOf(id, clog, recovered)
			if err := clog.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close crawl.log of %s: %w", id, err))
			}
		}
	}
	return len(recovered), errors.Join(errs...)
}
