package frontier

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// HostCount is a host (queue: host[:port]) and the URIs queued at it.
type HostCount struct {
	Host   string
	Queued int64
}

// TopQueuedHosts returns the n hosts with the most URIs queued (held ones
// included), most first, ties by name. It scans every host's state, so it
// costs a pass over the frontier's host keys: the collector runs it at
// most every topHostsEvery, not at every scrape.
func (f *Frontier) TopQueuedHosts(ctx context.Context, n int) ([]HostCount, error) {
	if n < 1 {
		return nil, nil
	}
	top := &hostHeap{}
	for _, p := range f.prefixes {
		var batch []string
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			pipe := f.rdb.Pipeline()
			cmds := make([]*redis.SliceCmd, len(batch))
			for i, h := range batch {
				cmds[i] = pipe.HMGet(ctx, p+"h:"+h, "n", "hp")
			}
			if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
			for i, h := range batch {
				v := cmds[i].Val()
				if q := toInt(v[0]) + toInt(v[1]); q > 0 {
					top.offer(HostCount{Host: h, Queued: q}, n)
				}
			}
			batch = batch[:0]
			return nil
		}
		err := scanKeys(ctx, f.rdb, p+"h:*", func(key string) error {
			batch = append(batch, key[len(p)+2:])
			if len(batch) < 1000 {
				return nil
			}
			return flush()
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return nil, fmt.Errorf("frontier %s top hosts: %w", f.name, err)
		}
	}
	out := slices.Clone(*top)
	slices.SortFunc(out, func(a, b HostCount) int {
		return cmp.Or(cmp.Compare(b.Queued, a.Queued), cmp.Compare(a.Host, b.Host))
	})
	return out, nil
}

// hostHeap is a min-heap on Queued: the smallest of the top n is at the
// root, to be replaced by a larger one.
type hostHeap []HostCount

func (h hostHeap) Len() int { return len(h) }
func (h hostHeap) Less(i, j int) bool {
	if h[i].Queued != h[j].Queued {
		return h[i].Queued < h[j].Queued
	}
	return h[i].Host > h[j].Host // the later name goes first, so ties keep the earlier
}
func (h hostHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *hostHeap) Push(x any)   { *h = append(*h, x.(HostCount)) }
func (h *hostHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// offer keeps c if it is among the n largest seen so far.
func (h *hostHeap) offer(c HostCount, n int) {
	if h.Len() < n {
		heap.Push(h, c)
		return
	}
	if r := (*h)[0]; c.Queued > r.Queued || (c.Queued == r.Queued && c.Host < r.Host) {
		(*h)[0] = c
		heap.Fix(h, 0)
	}
}

// topHosts is how many hosts trawler_frontier_top_host_queued_uris
// exports: enough for a "where is the crawl stuck" panel, few enough that
// the series stay bounded however many hosts the crawl has.
const topHosts = 10

// The scans behind the top-hosts gauge are spaced by their own cost: the
// next waits topHostsCostFactor times as long as the last took, at least
// topHostsMinEvery and at most topHostsMaxEvery, so a small frontier's
// gauge follows the crawl closely and a large one's scans take at most a
// small share of Redis's time. Scrapes in between export the last result.
const (
	topHostsCostFactor = 50
	topHostsMinEvery   = 5 * time.Second
	topHostsMaxEvery   = 5 * time.Minute
)

// topHostsTimeout bounds one scan, so a frontier too large to scan in
// time costs a scrape no more than this; the last result is kept.
const topHostsTimeout = 3 * time.Second

// topHostsRetry spaces the scans of a frontier whose last scan found
// nothing queued but whose counters say URIs are: the crawl started, or a
// launch arrived, since.
const topHostsRetry = time.Second

// topHostsCache holds the last top-hosts scan of a collector.
type topHostsCache struct {
	mu    sync.Mutex
	hosts []HostCount
	last  time.Time // of the last scan
	next  time.Time // when the next scan is due
	err   error     // of the last attempt, reported once
}

// get returns the top hosts, scanning first when one is due. queued says
// whether the frontier's counters (Stats, read just before) show any URI
// queued: with none there is no top and no need to scan, and a crawl that
// starts does not wait out the spacing of the scan that found it empty.
// Scrapes that overlap wait for one scan.
func (c *topHostsCache) get(ctx context.Context, f *Frontier, queued bool) []HostCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !queued {
		c.hosts = nil
		return nil
	}
	start := time.Now()
	stale := len(c.hosts) == 0 && start.Sub(c.last) >= topHostsRetry
	if start.Before(c.next) && !stale {
		return c.hosts
	}
	c.last = start
	ctx, cancel := context.WithTimeout(ctx, topHostsTimeout)
	defer cancel()
	hosts, err := f.TopQueuedHosts(ctx, topHosts)
	c.next = start.Add(min(max(topHostsCostFactor*time.Since(start), topHostsMinEvery), topHostsMaxEvery))
	if err != nil {
		if c.err == nil {
			f.log.Warn("frontier top hosts: keeping the last result", "frontier", f.name, "err", err)
		}
		c.err = err
		return c.hosts
	}
	c.hosts, c.err = hosts, nil
	return hosts
}
