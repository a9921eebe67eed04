package frontier

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

//go:embed lua/take.lua
var luaTake string

// StatusDeleted is Heritrix's S_DELETED_BY_USER (FetchStatusCodes): a URI
// an operator deleted from the frontier before it was fetched.
const StatusDeleted = -6000

// takeBatch bounds the items handed to one take.lua call, so a host with a
// huge queue does not block Redis for long.
const takeBatch = 500

// Selector picks the queued URIs TakeQueued takes. Host, when set, is
// asked first about each queue (host[:port]) so that a delete of one
// site's prefix does not read every other queue; URL decides per URI.
type Selector struct {
	Host func(host string) bool
	URL  func(url string) bool
	// Source, when set, takes only the URIs of the target with this
	// source tag (exactly), e.g. for a terminate of a target.
	Source string
}

// TakeQueued leases the queued URIs (not those in flight) that sel
// selects, for an operator's delete: the caller finishes each claim with
// Complete (status StatusDeleted, NotFetched), which keeps the counters,
// the ready set and the seen record exactly as for any finished URI. It
// reads the queues (one LRANGE per level per host) and takes the items in
// one script call per host and batch; an item claimed or superseded
// between the read and the take is skipped. It is an operator's tool, not
// for the hot path.
func (f *Frontier) TakeQueued(ctx context.Context, sel Selector, lease time.Duration) ([]*Claim, error) {
	// A script of its own, built here: TakeQueued is rare and the scripts
	// set of the hot path stays as it is.
	take := redis.NewScript(luaLib + "\nlocal function main()\n" + luaTake + "\nend\nlocal result = main()\nflush()\nreturn result\n")
	var out []*Claim
	for shard, p := range f.prefixes {
		var hosts []string
		err := scanKeys(ctx, f.rdb, p+"h:*", func(k string) error {
			if h := strings.TrimPrefix(k, p+"h:"); sel.Host == nil || sel.Host(h) {
				hosts = append(hosts, h)
			}
			return nil
		})
		if err != nil {
			return out, fmt.Errorf("frontier %s take queued: %w", f.name, err)
		}
		for _, host := range hosts {
			items, err := f.selectQueued(ctx, shard, host, sel, true)
			if err != nil {
				return out, err
			}
			for len(items) > 0 {
				n := min(len(items), takeBatch)
				now := f.now()
				args := append([]any{ms(now), ms(now.Add(lease)), host}, items[:n]...)
				items = items[n:]
				replies, err := f.runAll(ctx, take, []call{{shard: shard, args: args}})
				if err != nil {
					return out, fmt.Errorf("frontier %s take queued of %s: %w", f.name, host, err)
				}
				got, _, _, _ := f.parseClaims(ctx, shard, replies[0])
				out = append(out, got...)
			}
		}
	}
	return out, nil
}

// selectQueued reads a host's queues and returns the items sel selects.
// For a take (take.lua finds items by value), the blocks holding them
// are unpacked in their queues first.
func (f *Frontier) selectQueued(ctx context.Context, shard int, host string, sel Selector, forTake bool) ([]any, error) {
	p := f.prefixes[shard]
	pipe := f.rdb.Pipeline()
	var cmds [4]*redis.StringSliceCmd
	keys := [4]string{}
	for lvl := range 3 {
		keys[lvl] = fmt.Sprintf("%sq:%s:%d", p, host, lvl)
		cmds[lvl] = pipe.LRange(ctx, keys[lvl], 0, -1)
	}
	// URIs held while their target is paused are queued too.
	keys[3] = p + "qh:" + host
	cmds[3] = pipe.LRange(ctx, keys[3], 0, -1)
	if _, err := pipe.Exec(ctx); err != nil && err != redis.Nil {
		return nil, fmt.Errorf("frontier %s read queue of %s: %w", f.name, host, err)
	}
	reads := make([]queueRead, len(cmds))
	for i, c := range cmds {
		reads[i] = f.unpackRead(keys[i], c.Val())
	}
	items, err := f.selectItems(ctx, p, host, sel, reads)
	if err != nil || !forTake {
		return items, err
	}
	return items, f.unpackFor(ctx, shard, reads, items)
}

func (f *Frontier) selectItems(ctx context.Context, p, host string, sel Selector, reads []queueRead) ([]any, error) {
	var items []any
	var ctxIDs []string
	for _, q := range reads {
		for _, raw := range q.items {
			it, err := parseItem(raw)
			if err != nil {
				continue // claim finishes a corrupt item as -7 when it comes up
			}
			var l messages.Launch
			if err := decodePayload(it.payload, host, &l); err != nil {
				continue
			}
			if sel.URL == nil || sel.URL(l.URL) {
				items = append(items, raw)
				ctxIDs = append(ctxIDs, it.ctx)
			}
		}
	}
	if sel.Source == "" || len(items) == 0 {
		return items, nil
	}
	return f.ofSource(ctx, p, sel.Source, items, ctxIDs)
}

// ofSource keeps the items whose context names source: the blob's first
// line is the source id.
func (f *Frontier) ofSource(ctx context.Context, p, source string, items []any, ctxIDs []string) ([]any, error) {
	want := sourceID(source)
	match := map[string]bool{}
	for _, id := range ctxIDs {
		if _, ok := match[id]; ok {
			continue
		}
		blob, err := f.rdb.HGet(ctx, p+"ctx", id).Result()
		if err != nil && err != redis.Nil {
			return nil, fmt.Errorf("frontier %s launch context %s: %w", f.name, id, err)
		}
		first, _, _ := strings.Cut(blob, "\n")
		match[id] = err == nil && first == want
	}
	out := items[:0]
	for i, it := range items {
		if match[ctxIDs[i]] {
			out = append(out, it)
		}
	}
	return out, nil
}
