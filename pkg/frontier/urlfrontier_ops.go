package frontier

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// The operations below serve pkg/urlfrontier, the URLFrontier gRPC
// service, which hands URIs to an outside crawler by URL rather than by
// claim and lists queues and URLs for it. They reuse the claim and take
// scripts' state and are not on a worker's hot path.

// holdBody sets a host's next fetch time and reschedules it (ARGV: P,
// host, until ms, now ms): what URLFrontier's BlockQueueUntil and its
// per-queue delay need. It returns 0 for a host the frontier does not
// know.
const holdBody = `
local host, untilms, now = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local hk = P .. 'h:' .. host
if redis.call('EXISTS', hk) == 0 then return 0 end
redis.call('HSET', hk, 'next', untilms)
local v = redis.call('HMGET', hk, 'n', 'a', 'pq', 'p')
schedule(host, num(v[1]), num(v[2]), v[3], v[4], untilms, now)
return 1
`

func libScript(body string) *redis.Script {
	return redis.NewScript(luaLib + "\nlocal function main()\n" + body + "\nend\nlocal result = main()\nflush()\nreturn result\n")
}

// HoldHost makes host wait until the given time before a claim may take
// from it (an earlier time, or the zero time, frees it at once). It
// replaces the host's politeness wait; a completion afterwards sets a new
// one. It reports false for a host the frontier does not know.
func (f *Frontier) HoldHost(ctx context.Context, host string, until time.Time) (bool, error) {
	now := f.now()
	if until.Before(now) {
		until = now
	}
	replies, err := f.runAll(ctx, libScript(holdBody), []call{{shard: f.shardOf(host), args: []any{host, ms(until), ms(now)}}})
	if err != nil {
		return false, fmt.Errorf("frontier %s hold host %s: %w", f.name, host, err)
	}
	return toInt(replies[0]) == 1, nil
}

// TakeNext leases up to n of host's queued URIs in the order a claim takes
// them, provided the host is ready now (in the ready set, due): one
// queue's worth for a caller that asks for a given queue. The host stays
// busy until they are completed, released or their leases expire.
func (f *Frontier) TakeNext(ctx context.Context, host string, n int, lease time.Duration) ([]*Claim, error) {
	due, err := f.rdb.ZScore(ctx, f.prefixes[f.shardOf(host)]+"ready", host).Result()
	if errors.Is(err, redis.Nil) || (err == nil && int64(due) > ms(f.now())) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("frontier %s take next of %s: %w", f.name, host, err)
	}
	return f.TakeMore(ctx, host, n, lease)
}

// TakeMore leases up to n of host's queued URIs in the order a claim
// takes them, whether or not the host is ready: for a caller that has
// just claimed the host and hands out several of its URIs at once.
func (f *Frontier) TakeMore(ctx context.Context, host string, n int, lease time.Duration) ([]*Claim, error) {
	if n < 1 {
		return nil, nil
	}
	s := f.shardOf(host)
	p := f.prefixes[s]
	var items []any
	var reads []queueRead
	for level := LevelForced; level <= LevelNormal && len(items) < n; level++ {
		q, err := f.readQueue(ctx, p+"q:"+host+":"+strconv.Itoa(level), 0, int64(2*(n-len(items)))-1)
		if err != nil {
			return nil, fmt.Errorf("frontier %s take next of %s: %w", f.name, host, err)
		}
		reads = append(reads, q)
		live, err := f.liveRaw(ctx, p, host, q.items)
		if err != nil {
			return nil, err
		}
		for _, r := range live {
			if len(items) < n {
				items = append(items, r)
			}
		}
	}
	if err := f.unpackFor(ctx, s, reads, items); err != nil {
		return nil, err
	}
	return f.take(ctx, s, host, items, lease)
}

// take leases the given queued items of host with the take script.
func (f *Frontier) take(ctx context.Context, shard int, host string, items []any, lease time.Duration) ([]*Claim, error) {
	if len(items) == 0 {
		return nil, nil
	}
	take := libScript(luaTake)
	now := f.now()
	args := append([]any{ms(now), ms(now.Add(lease)), host}, items...)
	replies, err := f.runAll(ctx, take, []call{{shard: shard, args: args}})
	if err != nil {
		return nil, fmt.Errorf("frontier %s take of %s: %w", f.name, host, err)
	}
	got, _, _, _ := f.parseClaims(ctx, shard, replies[0])
	return got, nil
}

// liveRaw keeps the items whose URI index entry points at them (queued,
// not superseded).
func (f *Frontier) liveRaw(ctx context.Context, p, host string, raw []string) ([]string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var parsed []item
	var keep []string
	uks := make([]string, 0, len(raw))
	for _, s := range raw {
		it, err := parseItem(s)
		if err != nil {
			continue
		}
		parsed, keep, uks = append(parsed, it), append(keep, s), append(uks, it.uk)
	}
	if len(uks) == 0 {
		return nil, nil
	}
	idx, err := f.indexStates(ctx, p, uks)
	if err != nil {
		return nil, fmt.Errorf("frontier %s queue of %s: %w", f.name, host, err)
	}
	var out []string
	for i, it := range parsed {
		if idx[i] == queuedState(it.level, it.seq) {
			out = append(out, keep[i])
		}
	}
	return out, nil
}

// TakeURL leases url if it is queued (not in flight, not finished) and
// returns its claim; nil when it is not queued. Its host's queue is read
// whole: for the rare update of a URI that was never handed out.
func (f *Frontier) TakeURL(ctx context.Context, url string, lease time.Duration) (*Claim, error) {
	host, err := hostkey.Authority(url)
	if err != nil {
		return nil, fmt.Errorf("frontier %s take %q: %w", f.name, url, err)
	}
	s := f.shardOf(host)
	items, err := f.selectQueued(ctx, s, host, Selector{URL: func(u string) bool { return u == url }}, true)
	if err != nil || len(items) == 0 {
		return nil, err
	}
	got, err := f.take(ctx, s, host, items[:1], lease)
	if err != nil || len(got) == 0 {
		return nil, err
	}
	return got[0], nil
}

// LeaseOf returns the claim under which url is in flight, so that a
// caller that handed it out by URL can complete it; nil when it is not in
// flight.
func (f *Frontier) LeaseOf(ctx context.Context, url string) (*Claim, error) {
	st, err := f.URIState(ctx, url)
	if err != nil || st.State != URIInFlight || st.Lease == "" {
		return nil, err
	}
	s := f.shardOf(st.Host)
	p := f.prefixes[s]
	raw, err := f.rdb.HGet(ctx, p+"leased", st.Lease).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil // completed or reaped meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("frontier %s lease of %q: %w", f.name, url, err)
	}
	cs, err := f.decodeLeased(ctx, s, map[string]string{st.Lease: raw})
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	return cs[0], nil
}

// decodeLeased turns lease → item entries of shard s into claims, with
// their contexts.
func (f *Frontier) decodeLeased(ctx context.Context, s int, leased map[string]string) ([]*Claim, error) {
	p := f.prefixes[s]
	leases := make([]string, 0, len(leased))
	for l := range leased {
		leases = append(leases, l)
	}
	sort.Strings(leases)
	ids := make([]string, len(leases))
	for i, l := range leases {
		if it, err := parseItem(leased[l]); err == nil {
			ids[i] = it.ctx
		}
	}
	blobs, err := f.blobs(ctx, p, ids)
	if err != nil {
		return nil, err
	}
	ctxs := ctxCache{}
	var out []*Claim
	for i, l := range leases {
		c, err := decodeClaim(ctxs, l, leased[l], blobs[i])
		if err != nil {
			continue // the reaper or a completion deals with it
		}
		c.shard = s
		out = append(out, c)
	}
	return out, nil
}

// blobs reads context blobs by id ("" for an unknown one).
func (f *Frontier) blobs(ctx context.Context, p string, ids []string) ([]string, error) {
	out := make([]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	vals, err := f.rdb.HMGet(ctx, p+"ctx", ids...).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("frontier %s contexts: %w", f.name, err)
	}
	for i, v := range vals {
		out[i], _ = v.(string)
	}
	return out, nil
}

// InFlight returns the URIs in flight at host (every host when host is
// ""), ordered by lease.
func (f *Frontier) InFlight(ctx context.Context, host string) ([]*Claim, error) {
	var out []*Claim
	for s, p := range f.prefixes {
		if host != "" && s != f.shardOf(host) {
			continue
		}
		all, err := f.rdb.HGetAll(ctx, p+"leased").Result()
		if err != nil {
			return nil, fmt.Errorf("frontier %s in flight: %w", f.name, err)
		}
		if host != "" {
			for l := range all {
				if h, _, _ := cutLast(l, " "); h != host {
					delete(all, l)
				}
			}
		}
		cs, err := f.decodeLeased(ctx, s, all)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// Queued returns all of host's queued URIs (held ones last) in the order
// a claim takes them, with what they inherit: a dump, not for the hot
// path.
func (f *Frontier) Queued(ctx context.Context, host string) ([]messages.Launch, error) {
	s := f.shardOf(host)
	p := f.prefixes[s]
	items, err := f.selectQueued(ctx, s, host, Selector{}, false)
	if err != nil {
		return nil, err
	}
	raw := make([]string, len(items))
	for i, it := range items {
		raw[i] = it.(string)
	}
	// selectQueued keeps superseded entries; the index tells.
	live, err := f.liveRaw(ctx, p, host, raw)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(live))
	parsed := make([]item, len(live))
	for i, r := range live {
		parsed[i], _ = parseItem(r)
		ids[i] = parsed[i].ctx
	}
	blobs, err := f.blobs(ctx, p, ids)
	if err != nil {
		return nil, err
	}
	ctxs := ctxCache{}
	out := make([]messages.Launch, 0, len(live))
	for i, it := range parsed {
		var l messages.Launch
		if decodePayload(it.payload, host, &l) != nil || ctxs.decode(blobs[i], &l) != nil {
			continue
		}
		out = append(out, l)
	}
	return out, nil
}

// HostQueue is one host queue's counts, as a queue listing shows them.
type HostQueue struct {
	Host     string
	Queued   int64 // held ones included
	InFlight int64
	Paused   bool
	// NextFetch is when the host may be fetched again (zero: at once).
	NextFetch time.Time
}

// HostQueues lists every host the frontier knows, sorted by name.
func (f *Frontier) HostQueues(ctx context.Context) ([]HostQueue, error) {
	var out []HostQueue
	for _, p := range f.prefixes {
		var hosts []string
		if err := scanKeys(ctx, f.rdb, p+"h:*", func(k string) error {
			hosts = append(hosts, strings.TrimPrefix(k, p+"h:"))
			return nil
		}); err != nil {
			return nil, fmt.Errorf("frontier %s hosts: %w", f.name, err)
		}
		pipe := f.rdb.Pipeline()
		cmds := make([]*redis.SliceCmd, len(hosts))
		for i, h := range hosts {
			cmds[i] = pipe.HMGet(ctx, p+"h:"+h, "n", "hp", "a", "p", "next")
		}
		if len(hosts) > 0 {
			if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
				return nil, fmt.Errorf("frontier %s hosts: %w", f.name, err)
			}
		}
		for i, h := range hosts {
			v := cmds[i].Val()
			q := HostQueue{Host: h, Queued: toInt(v[0]) + toInt(v[1]), InFlight: toInt(v[2]), Paused: toString(v[3]) == "1"}
			if next := toInt(v[4]); next > 0 {
				q.NextFetch = time.UnixMilli(next)
			}
			out = append(out, q)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Host < out[j].Host })
	return out, nil
}

// Drop deletes every key of the frontier, all shards and its layout
// record: the frontier is then as new. Keys other packages keep under its
// prefix go too.
func (f *Frontier) Drop(ctx context.Context) error {
	for _, p := range f.prefixes {
		var keys []string
		if err := scanKeys(ctx, f.rdb, p+"*", func(k string) error {
			keys = append(keys, k)
			return nil
		}); err != nil {
			return fmt.Errorf("frontier %s drop: %w", f.name, err)
		}
		for len(keys) > 0 {
			n := min(len(keys), 500)
			if err := f.rdb.Unlink(ctx, keys[:n]...).Err(); err != nil {
				return fmt.Errorf("frontier %s drop: %w", f.name, err)
			}
			keys = keys[n:]
		}
	}
	if err := f.rdb.Unlink(ctx, "{"+f.name+"}:layout").Err(); err != nil {
		return fmt.Errorf("frontier %s drop: %w", f.name, err)
	}
	f.layoutOK.Store(false)
	return nil
}
