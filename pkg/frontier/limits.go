package frontier

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The crawl clock: maxTimeSeconds counts from the crawl's start, kept in
// Redis under the first shard's prefix so that every worker reads the same
// start and a worker started later (or restarted) does not reset it.

// startedKey holds the crawl's start, Unix milliseconds.
func (f *Frontier) startedKey() string { return f.prefixes[0] + "started" }

// CrawlStart returns when the crawl started: the first caller records now
// (SETNX) and every later caller, in any process, reads that time back.
func (f *Frontier) CrawlStart(ctx context.Context) (time.Time, error) {
	now := ms(f.now())
	if err := f.rdb.SetNX(ctx, f.startedKey(), now, 0).Err(); err != nil {
		return time.Time{}, fmt.Errorf("frontier %s crawl start: %w", f.name, err)
	}
	v, err := f.rdb.Get(ctx, f.startedKey()).Int64()
	if err != nil {
		return time.Time{}, fmt.Errorf("frontier %s crawl start: %w", f.name, err)
	}
	return time.UnixMilli(v), nil
}

// RestartCrawlClock starts the crawl clock again now, for a new job run
// (standalone's --relaunch), as Heritrix's elapsed time is per job run.
// Workers already running keep the start they read.
func (f *Frontier) RestartCrawlClock(ctx context.Context) error {
	if err := f.rdb.Set(ctx, f.startedKey(), ms(f.now()), 0).Err(); err != nil {
		return fmt.Errorf("frontier %s restart crawl clock: %w", f.name, err)
	}
	return nil
}

// Waiting for a retry: settle.lua records in the shard's retrywait zset
// each host that a retry put to wait, scored by the end of the wait
// (retryDelaySeconds, or the politeness delay when longer). A host counts
// as waiting while that time is ahead and the host is still scheduled in
// the ready set after now: a host paused, or made ready earlier by another
// of its URIs finishing (parallelQueues > 1), does not.

// maxRetryHosts bounds the hosts per shard Stats looks at for their
// queued URIs; past it RetryURIs counts those of the first (earliest due)
// only, so it can be less than the URIs that really wait.
const maxRetryHosts = 10000

// retryStats reads how many hosts, and URIs queued at them, wait for a
// retry, and when the first wait ends.
func (f *Frontier) retryStats(ctx context.Context, now int64) (hosts, uris int64, next time.Time, err error) {
	lo := "(" + strconv.FormatInt(now, 10)
	pipe := f.rdb.Pipeline()
	ranges := make([]*redis.ZSliceCmd, len(f.prefixes))
	for i, p := range f.prefixes {
		ranges[i] = pipe.ZRangeByScoreWithScores(ctx, p+"retrywait", &redis.ZRangeBy{Min: lo, Max: "+inf", Count: maxRetryHosts})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("frontier %s retry stats: %w", f.name, err)
	}
	type hostCmds struct {
		n     *redis.StringCmd
		ready *redis.FloatCmd
	}
	var cmds []hostCmds
	pipe = f.rdb.Pipeline()
	for i, p := range f.prefixes {
		for _, z := range ranges[i].Val() {
			host, _ := z.Member.(string)
			cmds = append(cmds, hostCmds{n: pipe.HGet(ctx, p+"h:"+host, "n"), ready: pipe.ZScore(ctx, p+"ready", host)})
		}
	}
	if len(cmds) == 0 {
		return 0, 0, time.Time{}, nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, time.Time{}, fmt.Errorf("frontier %s retry stats: %w", f.name, err)
	}
	var first int64
	for _, c := range cmds {
		at, err := c.ready.Result()
		if err != nil || int64(at) <= now {
			continue // paused, or ready already
		}
		n, _ := c.n.Int64()
		hosts++
		uris += n
		if first == 0 || int64(at) < first {
			first = int64(at)
		}
	}
	if first > 0 {
		next = time.UnixMilli(first)
	}
	return hosts, uris, next, nil
}

// OnlyRetriesLeft reports that nothing is in flight and every queued URI
// waits at a host held back by a retry: only the retry delays stand
// between the crawl and its end.
func (s Stats) OnlyRetriesLeft() bool {
	return s.InFlight == 0 && s.Queued > 0 && s.RetryURIs >= s.Queued
}
