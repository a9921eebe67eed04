package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/trawler-crawl/trawler/pkg/crawllog"
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
// meanwhile. Holding it, it recovers the files as their owner's next start
// would (warcwriter.RecoverOpenHost), publishes their closed-WARC notices
// in the owner's name, writes the crawl.log lines the crash kept from the
// owner's crawl.log (recoverCrawlLogOf), then releases the lease.
//
// An identity whose lease is live is never touched: its owner is running.
// A lease expires only when its owner has not renewed it for the whole
// lease time, and an owner that finds its lease taken stops at once
// (ErrIdentityLost).

// janitorLoop sweeps at once and then every JanitorPeriod until ctx ends.
func (w *Worker) janitorLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.JanitorPeriod)
	defer t.Stop()
	for {
		if n, err := w.sweep(ctx); err != nil && ctx.Err() == nil {
			w.log.Error("janitor: recover dead workers' WARCs", "err", err)
		} else if n > 0 {
			w.log.Warn("janitor: recovered open WARCs of dead workers", "files", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweep recovers the open files of every dead identity it sees, and
// returns how many files it closed.
func (w *Worker) sweep(ctx context.Context) (int, error) {
	var ids []string
	for _, dir := range []string{w.cfg.WARCDir(), w.cfg.ViralDir()} {
		hs, err := warcwriter.OpenHosts(dir)
		if err != nil {
			return 0, fmt.Errorf("janitor: %w", err)
		}
		ids = append(ids, hs...)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	total := 0
	var errs []error
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		if id == w.cfg.ID || !validIdentity.MatchString(id) {
			continue
		}
		n, err := w.recoverDead(ctx, id)
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("identity %s: %w", id, err))
		}
	}
	return total, errors.Join(errs...)
}

// recoverDead takes identity id's lease as a janitor and, if it got it,
// recovers and announces id's open files and writes their missing
// crawl.log lines. A live (or already janitored) identity is skipped.
func (w *Worker) recoverDead(ctx context.Context, id string) (n int, err error) {
	l, err := tryLease(ctx, w.rdb, identityKey(w.cfg.Name(), id), holderJanitor, w.cfg.IdentityLease, w.log)
	if err != nil || l == nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, l.release()) }()
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
