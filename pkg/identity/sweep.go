package identity

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// A janitor recovers the open WARCs of processes that died and whose
// identity nobody took again (a scaled-down replica, a pod replaced by one
// with another slot). Each sweep lists the identities named by ".open"
// files in the shared directories, and for each that is not the sweeper's
// own and whose lease is gone it takes that lease itself, as KindJanitor,
// so that neither another janitor nor a process starting with that
// identity touches the files meanwhile; holding it, it lets the caller
// recover the files, then releases the lease.
//
// An identity whose lease is live is never touched: its owner is running.
// A lease expires only when its owner has not renewed it for the whole
// lease time; an owner that could not renew it gives it up (ErrLost) a
// sixth of the lease time before that, and one that finds it taken stops
// at once.

// RecoverFunc recovers dead identity id's open files while the janitor
// holds id's lease, and returns how many files it closed. Files it could
// not close stay .open for the next sweep.
type RecoverFunc func(ctx context.Context, id string) (int, error)

// Sweep recovers, through recover, the open files of every dead identity
// (other than own) that it finds in dirs, and returns how many files were
// closed. o gives the scope, lease time and logger; its Kind is not used.
func Sweep(ctx context.Context, rdb redis.UniversalClient, o Options, dirs []string, own string, recover RecoverFunc) (int, error) {
	var ids []string
	for _, dir := range dirs {
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
		if id == own || !Valid(id) {
			continue
		}
		n, err := recoverDead(ctx, rdb, o, id, recover)
		total += n
		if err != nil {
			errs = append(errs, fmt.Errorf("identity %s: %w", id, err))
		}
	}
	return total, errors.Join(errs...)
}

// recoverDead takes identity id's lease as a janitor and, if it got it,
// runs recover. A live (or already janitored) identity is skipped.
func recoverDead(ctx context.Context, rdb redis.UniversalClient, o Options, id string, recover RecoverFunc) (n int, err error) {
	l, err := Try(ctx, rdb, Key(o.Scope, id), KindJanitor, o.TTL, o.logger())
	if err != nil || l == nil {
		return 0, err
	}
	defer func() { err = errors.Join(err, l.Release()) }()
	return recover(ctx, id)
}

// RunJanitor calls sweep at once and then every period until ctx ends,
// logging what it recovered; what names the owners in the log ("dead
// workers").
func RunJanitor(ctx context.Context, o Options, period time.Duration, what string, sweep func(context.Context) (int, error)) {
	log := o.logger()
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if n, err := sweep(ctx); err != nil && ctx.Err() == nil {
			log.Error("janitor: recover open WARCs of "+what, "err", err)
		} else if n > 0 {
			log.Warn("janitor: recovered open WARCs of "+what, "files", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
