package harveststats

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Bounded history (docs/provenance.md, Bounded history). A launch whose
// metadata WARC is written keeps its statistics in Redis (hash stats) for
// the admin API and `trawler provenance stats`; the WARC holds them for
// good (harvest-statistics.json), so Redis need not. Two more keys:
//
//	donet    zset  launch key -> when its provenance was written (ms)
//	expired  zset  launch key -> when Expire dropped its statistics (ms)
//
// Expire drops a launch done longer ago than the horizon: its statistics,
// activity entry, launch timestamp and any events that arrived after it
// was written, keeping only its sealed and done entries (a few dozen
// bytes), so that a late event of the launch does not make it active (and
// written) again. One horizon later those go too. So Redis holds two
// horizons' worth of sealed launches at most, whatever the crawl's age.

// expireBatch bounds the launches one Expire call drops, so a first run
// over years of launches does not hold Redis for long.
const expireBatch = 500

// Expire drops the statistics of launches whose provenance was written
// before before, and the sealed entries of those dropped before before
// (at most expireBatch of each per call; call it again while it returns
// expireBatch). It returns how many launches' statistics it dropped.
func (s *Store) Expire(ctx context.Context, before time.Time) (int, error) {
	if err := s.backfillDone(ctx); err != nil {
		return 0, err
	}
	cut := "(" + strconv.FormatInt(before.UnixMilli(), 10)
	keys, err := s.rdb.ZRangeByScore(ctx, s.prefix+"donet", &redis.ZRangeBy{Min: "-inf", Max: cut, Count: expireBatch}).Result()
	if err != nil {
		return 0, fmt.Errorf("harvest statistics: launches to expire: %w", err)
	}
	now := s.now().UnixMilli()
	for _, k := range keys {
		if err := s.expireLaunch(ctx, k, now); err != nil {
			return 0, err
		}
	}
	gone, err := s.rdb.ZRangeByScore(ctx, s.prefix+"expired", &redis.ZRangeBy{Min: "-inf", Max: cut, Count: expireBatch}).Result()
	if err != nil {
		return len(keys), fmt.Errorf("harvest statistics: expired launches: %w", err)
	}
	for _, k := range gone {
		if err := s.forgetLaunch(ctx, k); err != nil {
			return len(keys), err
		}
	}
	return len(keys), nil
}

// expireLaunch drops what Redis holds of launch key k but its sealed and
// done entries, and notes when.
func (s *Store) expireLaunch(ctx context.Context, k string, now int64) error {
	l, err := ParseKey(k)
	if err != nil {
		// Not a key MarkDone writes: drop the entry, there is nothing else.
		return s.rdb.ZRem(ctx, s.prefix+"donet", k).Err()
	}
	window, err := s.unnamedWindow(ctx, l)
	if err != nil {
		return err
	}
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HDel(ctx, s.prefix+"stats", k)
		s.dropEvents(ctx, p, l, window)
		p.ZRem(ctx, s.prefix+"donet", k)
		p.ZAdd(ctx, s.prefix+"expired", redis.Z{Score: float64(now), Member: k})
		return nil
	})
	if err != nil {
		return fmt.Errorf("harvest statistics: expire %s: %w", l, err)
	}
	return s.dropSourceIfEmpty(ctx, l.Source)
}

// forgetLaunch drops the sealed and done entries of launch key k, and
// whatever late events brought back since its statistics were dropped.
func (s *Store) forgetLaunch(ctx context.Context, k string) error {
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if l, err := ParseKey(k); err == nil {
			s.dropEvents(ctx, p, l, nil)
		}
		p.HDel(ctx, s.prefix+"sealed", k)
		p.HDel(ctx, s.prefix+"done", k)
		p.ZRem(ctx, s.prefix+"expired", k)
		return nil
	})
	if err != nil {
		return fmt.Errorf("harvest statistics: forget %s: %w", k, err)
	}
	if l, err := ParseKey(k); err == nil {
		return s.dropSourceIfEmpty(ctx, l.Source)
	}
	return nil
}

// dropEvents queues the removal of the launch's events, counts, URL set,
// activity and launch timestamp, and of the source's unnamed events in
// window (min, max scores; nil: none).
func (s *Store) dropEvents(ctx context.Context, p redis.Pipeliner, l Launch, window []string) {
	p.Del(ctx, s.seenKey(l), s.countsKey(l), s.offsetsKey(l))
	p.HDel(ctx, s.prefix+"act", l.Key())
	if l.Timestamp != "" {
		p.Del(ctx, s.srcKey(l.Source, "e:"+l.Timestamp))
	}
	// A streaming launch without a timestamp is the member "" (stream.go).
	p.ZRem(ctx, s.srcKey(l.Source, "l"), l.Timestamp)
	if window != nil {
		p.ZRemRangeByScore(ctx, s.srcKey(l.Source, "ev"), window[0], window[1])
	}
}

// unnamedWindow is the score range of the source's events that name no
// launch and belong to l by the time rule (window); nil when none can.
func (s *Store) unnamedWindow(ctx context.Context, l Launch) ([]string, error) {
	ls, err := s.launchesOf(ctx, l.Source)
	if err != nil {
		return nil, err
	}
	i := slices.Index(ls, l.Timestamp)
	lo := "-inf"
	switch {
	case i < 0 && l.Timestamp != "":
		return nil, nil // not a launch of the source any more
	case i < 0:
		// The launch without timestamp has no event before the first launch.
		if len(ls) == 0 {
			return []string{lo, "+inf"}, nil
		}
		return []string{lo, "(" + strconv.FormatInt(tsMillis(ls[0]), 10)}, nil
	case l.Timestamp != "":
		lo = strconv.FormatInt(tsMillis(l.Timestamp), 10)
	}
	hi := "+inf"
	if i+1 < len(ls) {
		hi = "(" + strconv.FormatInt(tsMillis(ls[i+1]), 10)
	}
	return []string{lo, hi}, nil
}

// dropSourceIfEmpty forgets a source with no launch and no event left, so
// the sealing loop does not visit it at every poll.
func (s *Store) dropSourceIfEmpty(ctx context.Context, source string) error {
	pipe := s.rdb.Pipeline()
	nl := pipe.ZCard(ctx, s.srcKey(source, "l"))
	ne := pipe.ZCard(ctx, s.srcKey(source, "ev"))
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("harvest statistics: launches of %s: %w", source, err)
	}
	if nl.Val() > 0 || ne.Val() > 0 {
		return nil
	}
	if err := s.rdb.ZRem(ctx, s.prefix+"srcs", source).Err(); err != nil {
		return fmt.Errorf("harvest statistics: forget source %s: %w", source, err)
	}
	return nil
}

// backfillDone gives the launches written before donet existed their
// time, once per store: they age from now.
func (s *Store) backfillDone(ctx context.Context) error {
	if s.backfilled.Load() {
		return nil
	}
	done, err := s.rdb.HKeys(ctx, s.prefix+"done").Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("harvest statistics: done launches: %w", err)
	}
	now := float64(s.now().UnixMilli())
	for i := 0; i < len(done); i += 1000 {
		zs := make([]redis.Z, 0, 1000)
		for _, k := range done[i:min(i+1000, len(done))] {
			zs = append(zs, redis.Z{Score: now, Member: k})
		}
		if err := s.rdb.ZAddNX(ctx, s.prefix+"donet", zs...).Err(); err != nil {
			return fmt.Errorf("harvest statistics: date done launches: %w", err)
		}
	}
	s.backfilled.Store(true)
	return nil
}
