package frontier

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// Finished is one URI the crawled journal reports as finished.
type Finished struct {
	URL    string
	Status int
	Bytes  int64
	Source string
	At     time.Time
	// Revisit marks a revisit record (not novel).
	Revisit bool
}

// Admission is one URI the inscope journal reports as admitted, and when.
type Admission struct {
	Launch messages.Launch
	At     time.Time
}

// Journal reads the frontier's journal (ARCHITECTURE.md 5.5): the crawled
// topic and the inscope topic, each in batches, up to their ends as they
// were when the rebuild began.
type Journal interface {
	Crawled(ctx context.Context, fn func([]Finished) error) error
	Admitted(ctx context.Context, fn func([]Admission) error) error
}

// RebuildReport counts what a rebuild replayed.
type RebuildReport struct {
	Finished  int64 // crawled events replayed
	Admitted  int64 // inscope records replayed
	Queued    int64 // URIs queued again
	Skipped   int64 // inscope records already finished or queued
	Malformed int64 // records that could not be used
}

// ErrNotEmpty is returned by Rebuild on a frontier that holds state.
var ErrNotEmpty = errors.New("frontier is not empty")

// Rebuild restores the frontier from its journal: first every finished URI
// is recorded (with the crawl totals and quota counters), then every
// admission is replayed and queued unless the URI finished after it was
// admitted. It refuses a non-empty frontier unless force is set; with
// force it replays onto what is there (nothing is queued twice).
// policy gives each replayed URI its settings.
func Rebuild(ctx context.Context, f *Frontier, j Journal, policy func(messages.Launch) Policy, force bool) (RebuildReport, error) {
	var rep RebuildReport
	empty, err := f.Empty(ctx)
	if err != nil {
		return rep, err
	}
	if !empty && !force {
		return rep, fmt.Errorf("frontier %s rebuild: %w (use force to replay onto it)", f.name, ErrNotEmpty)
	}
	err = j.Crawled(ctx, func(evs []Finished) error {
		n, bad, err := f.MarkFinished(ctx, evs)
		rep.Finished += int64(n)
		rep.Malformed += int64(bad)
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("frontier %s rebuild from crawled journal: %w", f.name, err)
	}
	// A Bloom filter in use cannot tell finished URIs from queued ones (it
	// keeps no finish times), so a replay onto it admits only what it has
	// never seen: nothing is crawled twice, but a forced re-admission the
	// journal holds may be skipped.
	plain := !empty && f.mode == "b"
	err = j.Admitted(ctx, func(as []Admission) error {
		cs := make([]Candidate, len(as))
		for i, a := range as {
			cs[i] = Candidate{Launch: a.Launch, Policy: policy(a.Launch), JournalTime: a.At}
			if plain {
				cs[i].JournalTime = time.Time{}
			}
		}
		res, err := f.Admit(ctx, cs)
		if err != nil {
			return err
		}
		rep.Admitted += int64(len(as))
		for _, r := range res {
			switch {
			case r.Verdict == Invalid:
				rep.Malformed++
			case r.New():
				rep.Queued++
			default:
				rep.Skipped++
			}
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("frontier %s rebuild from inscope journal: %w", f.name, err)
	}
	if f.mode == "b" {
		if err := f.purgeFinished(ctx); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// MarkFinished records URIs as finished (for the seen filter, the totals
// and the quota counters) without them having been queued: a rebuild
// replays the crawled journal through it. It returns how many it recorded
// and how many it could not use (no URL or host).
func (f *Frontier) MarkFinished(ctx context.Context, evs []Finished) (marked, malformed int, err error) {
	args := make(map[int][]any)
	var order []int
	for _, e := range evs {
		host, err1 := hostkey.Authority(e.URL)
		key, err2 := surt.CDXKey(e.URL)
		if err1 != nil || err2 != nil {
			malformed++
			continue
		}
		s := f.shardOf(host)
		if _, ok := args[s]; !ok {
			order = append(order, s)
		}
		args[s] = append(args[s], host, uriKey(key), e.At.Unix(), e.Status, max(e.Bytes, 0), sourceID(e.Source), flag(!e.Revisit))
	}
	if len(order) == 0 {
		return 0, malformed, nil
	}
	calls := make([]call, len(order))
	for i, s := range order {
		calls[i] = call{shard: s, args: args[s]}
	}
	replies, err := f.runAll(ctx, f.sc.journal, calls)
	if err != nil {
		return 0, malformed, fmt.Errorf("frontier %s mark finished: %w", f.name, err)
	}
	for _, r := range replies {
		marked += int(toInt(r))
	}
	return marked, malformed, nil
}

// purgeFinished drops the finished records a Bloom-mode rebuild left in
// the URI indexes: the Bloom filter remembers those URIs now.
func (f *Frontier) purgeFinished(ctx context.Context) error {
	for s, p := range f.prefixes {
		err := scanKeys(ctx, f.rdb, p+"x:*", func(key string) error {
			if _, err := f.runAll(ctx, f.sc.purge, []call{{shard: s, args: []any{key}}}); err != nil {
				return fmt.Errorf("frontier %s purge %s: %w", f.name, key, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// scanKeys calls fn for every key matching pattern, from one goroutine.
// The pattern starts with a frontier shard's prefix, a hash tag, so on a
// Redis Cluster all its keys are on the master that owns the tag's slot,
// the one scanned (while a slot migrates, keys already moved are missed).
func scanKeys(ctx context.Context, rdb redis.UniversalClient, pattern string, fn func(string) error) error {
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			if err := fn(iter.Val()); err != nil {
				return err
			}
		}
		if err := iter.Err(); err != nil {
			return fmt.Errorf("scan %s: %w", pattern, err)
		}
		return nil
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		c, err := cc.MasterForKey(ctx, pattern)
		if err != nil {
			return fmt.Errorf("scan %s: the master of its slot: %w", pattern, err)
		}
		return scan(ctx, c)
	}
	return scan(ctx, rdb)
}
