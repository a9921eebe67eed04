package frontier

import (
	"cmp"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"
)

// queuedPage is how many host queues one read of queued counts takes at a
// time: one SCAN page, then one pipeline of HMGETs. A frontier of
// millions of hosts is read in pages, never held in memory at once: a
// pass costs about 7 µs per host on the 2-core test machine
// (BenchmarkQueuedByHostName), 7 s at a million hosts.
const queuedPage = 1000

// eachQueued calls fn with every host queue (host:port) that has URIs
// queued, held ones included, and how many.
func (f *Frontier) eachQueued(ctx context.Context, fn func(host string, n int64)) error {
	for _, p := range f.prefixes {
		page := make([]string, 0, queuedPage)
		flush := func() error {
			if len(page) == 0 {
				return nil
			}
			pipe := f.rdb.Pipeline()
			cmds := make([]*redis.SliceCmd, len(page))
			for i, h := range page {
				cmds[i] = pipe.HMGet(ctx, p+"h:"+h, "n", "hp") // queued, held ones too
			}
			if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
			for i, h := range page {
				v := cmds[i].Val()
				if n := toInt(v[0]) + toInt(v[1]); n > 0 {
					fn(h, n)
				}
			}
			page = page[:0]
			return nil
		}
		err := scanKeys(ctx, f.rdb, p+"h:*", func(key string) error {
			page = append(page, key[len(p)+2:])
			if len(page) < queuedPage {
				return nil
			}
			return flush()
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return fmt.Errorf("frontier %s queued by host: %w", f.name, err)
		}
	}
	return nil
}

// QueuedByHostName sums the URIs queued per host name over all its ports
// (the frontier's queues are per host:port): what Heritrix's hosts report
// calls #remaining, whose rows are host names. The map holds every host
// name with URIs queued; TopQueuedHostNames is for when only the largest
// matter.
func (f *Frontier) QueuedByHostName(ctx context.Context) (map[string]int64, error) {
	out := map[string]int64{}
	if err := f.eachQueued(ctx, func(host string, n int64) { out[hostnameOf(host)] += n }); err != nil {
		return nil, err
	}
	return out, nil
}

// HostCount is a host (queue: host[:port], or a host name) and the URIs
// queued at it.
type HostCount struct {
	Host   string
	Queued int64
}

// TopQueuedHosts returns the n hosts (queues: host[:port]) with the most
// URIs queued (held ones included), most first, ties by name, in memory
// bounded by n.
func (f *Frontier) TopQueuedHosts(ctx context.Context, n int) ([]HostCount, error) {
	if n < 1 {
		return nil, nil
	}
	top := &hostHeap{}
	if err := f.eachQueued(ctx, func(host string, q int64) { top.offer(HostCount{host, q}, n) }); err != nil {
		return nil, err
	}
	return sortedTop(*top, n), nil
}

// TopQueuedHostNames returns the n host names with the most URIs queued
// over their ports, most first, ties by name. Its memory is bounded by
// n, not by the frontier's hosts: it keeps the largest max(1000, 50n)
// queues as it reads and sums those by host name, so a host name is
// counted without any of its ports' queues that are each below all of
// those (a host whose ports all have big queues is counted whole).
func (f *Frontier) TopQueuedHostNames(ctx context.Context, n int) ([]HostCount, error) {
	if n < 1 {
		return nil, nil
	}
	keep := max(1000, 50*n)
	top := &hostHeap{}
	if err := f.eachQueued(ctx, func(host string, q int64) { top.offer(HostCount{host, q}, keep) }); err != nil {
		return nil, err
	}
	byName := map[string]int64{}
	for _, c := range *top {
		byName[hostnameOf(c.Host)] += c.Queued
	}
	names := make([]HostCount, 0, len(byName))
	for h, q := range byName {
		names = append(names, HostCount{h, q})
	}
	return sortedTop(names, n), nil
}

// sortedTop sorts hosts most queued first, ties by name, and keeps n.
func sortedTop(hosts []HostCount, n int) []HostCount {
	out := slices.Clone(hosts)
	slices.SortFunc(out, func(a, b HostCount) int {
		return cmp.Or(cmp.Compare(b.Queued, a.Queued), cmp.Compare(a.Host, b.Host))
	})
	return out[:min(len(out), n)]
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
