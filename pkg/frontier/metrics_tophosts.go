package frontier

import (
	"context"
	"sync"
	"time"

	"github.com/trawler-crawl/trawler/internal/costcache"
)

// topHosts is how many hosts trawler_frontier_top_host_queued_uris
// exports: enough for a "where is the crawl stuck" panel, few enough that
// the series stay bounded however many hosts the crawl has.
const topHosts = 10

// The scans behind the top-hosts gauge are spaced by their own cost: a
// result is kept topHostsCostFactor times as long as its scan took, at
// least topHostsMinEvery and at most topHostsMaxEvery, so a small
// frontier's gauge follows the crawl closely and a large one's scans take
// at most a small share of Redis's time. A scrape waits for a scan at
// most topHostsWait and otherwise exports the last result; the scan goes
// on (for a domain crawl's millions of hosts it takes a minute or more)
// and the scrapes after it export it.
const (
	topHostsCostFactor = 50
	topHostsMinEvery   = 5 * time.Second
	topHostsMaxEvery   = 5 * time.Minute
	topHostsWait       = 3 * time.Second
)

// topHostsRetry spaces the scans of a frontier whose last scan found
// nothing queued but whose counters say URIs are: the crawl started, or a
// launch arrived, since.
const topHostsRetry = time.Second

// topHostsCache holds the last top-hosts scan of a collector.
type topHostsCache struct {
	once sync.Once
	c    *costcache.Cache[[]HostCount]

	mu    sync.Mutex // scrapes may overlap
	empty bool       // the counters showed nothing queued at the last scrape
	err   error      // of the last scan, logged once
}

// get returns the top hosts, scanning first when one is due. queued says
// whether the frontier's counters (Stats, read just before) show any URI
// queued: with none there is no top and no need to scan, and a crawl that
// starts does not wait out the spacing of the scan that found it empty.
func (t *topHostsCache) get(ctx context.Context, f *Frontier, queued bool) []HostCount {
	t.once.Do(func() {
		t.c = costcache.New(func(ctx context.Context) ([]HostCount, error) { return f.TopQueuedHosts(ctx, topHosts) },
			costcache.Options{Factor: topHostsCostFactor, MinAge: topHostsMinEvery, MaxAge: topHostsMaxEvery, Wait: topHostsWait})
	})
	t.mu.Lock()
	wasEmpty := t.empty
	t.empty = !queued
	t.mu.Unlock()
	if !queued {
		return nil
	}
	if wasEmpty {
		t.c.Expire() // the last scan may predate the first URI
	}
	hosts, at, err := t.c.Get(ctx)
	t.mu.Lock()
	if err != nil && t.err == nil {
		f.log.Warn("frontier top hosts: keeping the last result", "frontier", f.name, "err", err)
	}
	t.err = err
	t.mu.Unlock()
	if len(hosts) == 0 && !at.IsZero() && time.Since(at) >= topHostsRetry {
		t.c.Expire() // found none, but the counters say some are queued
	}
	return hosts
}
