// Package frontier keeps the live crawl frontier in Redis: per-host queues,
// a ready set of hosts keyed by the time each may next be fetched, leases on
// claimed hosts and a seen filter. Every multi-key change is one Lua script,
// so many workers in many processes can share one frontier.
//
// Keys all carry the hash tag of the frontier name ("{fc-npld}:…") so the
// scripts run unchanged on Redis Cluster. Queue items are launch messages
// (the inscope schema), so the frontier can always be rebuilt from Kafka.
package frontier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Item is one URI offered to the frontier.
type Item struct {
	// Host is the queue the URI belongs to (its authority).
	Host string
	// Key is the seen-filter key (the canonical form of the URL).
	Key string
	// Launch is the URI with everything it inherits.
	Launch messages.Launch
}

// Claim is a URI handed to a worker under a lease on its host.
type Claim struct {
	Host   string
	Launch messages.Launch
	raw    string
	score  string
}

// Stats counts the frontier's contents.
type Stats struct {
	Queued   int64 // URIs waiting in host queues
	InFlight int64 // hosts claimed under a lease
	Hosts    int64 // hosts with waiting URIs and no lease
}

// Frontier is a Redis-backed frontier.
type Frontier struct {
	rdb    redis.UniversalClient
	prefix string
	now    func() time.Time
}

// Option configures a Frontier.
type Option func(*Frontier)

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(f *Frontier) { f.now = now } }

// New returns the frontier called name (e.g. "fc-npld").
func New(rdb redis.UniversalClient, name string, opts ...Option) *Frontier {
	f := &Frontier{rdb: rdb, prefix: "{" + name + "}:", now: time.Now}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Prefix is the key prefix with its hash tag; other packages that keep
// per-crawl state beside the frontier use it so their keys share the slot.
func (f *Frontier) Prefix() string { return f.prefix }

// Admit offers items; the result says which were new (not seen before) and
// so were queued. A forceFetch item is queued even when seen.
func (f *Frontier) Admit(ctx context.Context, items []Item) ([]bool, error) {
	if len(items) == 0 {
		return nil, nil
	}
	args := []any{f.prefix, f.now().UnixMilli()}
	for _, it := range items {
		if it.Host == "" || it.Key == "" {
			return nil, fmt.Errorf("admit %q: host and key are required", it.Launch.URL)
		}
		b, err := json.Marshal(it.Launch)
		if err != nil {
			return nil, fmt.Errorf("admit %q: %w", it.Launch.URL, err)
		}
		force := "0"
		if it.Launch.ForceFetch {
			force = "1"
		}
		args = append(args, it.Key, it.Host, precedence(it.Launch), force, string(b))
	}
	res, err := admitScript.Run(ctx, f.rdb, nil, args...).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("frontier admit: %w", err)
	}
	out := make([]bool, len(res))
	for i, v := range res {
		out[i] = v == 1
	}
	return out, nil
}

// precedence orders a host queue: seeds and forced URIs first, then by hop
// depth; arrival order breaks ties inside the script.
func precedence(l messages.Launch) int64 {
	if l.IsSeed || l.ForceFetch {
		return 0
	}
	return int64(len(l.HopPath()) + 1)
}

// Claim leases the next ready host and pops its best URI. It returns nil
// when no host is ready.
func (f *Frontier) Claim(ctx context.Context, lease time.Duration) (*Claim, error) {
	now := f.now()
	res, err := claimScript.Run(ctx, f.rdb, nil, f.prefix, now.UnixMilli(), now.Add(lease).UnixMilli()).StringSlice()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("frontier claim: %w", err)
	}
	if len(res) != 3 {
		return nil, fmt.Errorf("frontier claim: unexpected reply of %d fields", len(res))
	}
	c := &Claim{Host: res[0], raw: res[1], score: res[2]}
	if err := json.Unmarshal([]byte(res[1]), &c.Launch); err != nil {
		// A corrupt item cannot be crawled; drop it so the host is not stuck.
		_ = f.Complete(ctx, c, now)
		return nil, fmt.Errorf("frontier claim %s: corrupt item dropped: %w", c.Host, err)
	}
	return c, nil
}

// Renew extends the lease on a claimed host.
func (f *Frontier) Renew(ctx context.Context, c *Claim, lease time.Duration) error {
	until := f.now().Add(lease).UnixMilli()
	if err := f.rdb.ZAddXX(ctx, f.prefix+"leases", redis.Z{Score: float64(until), Member: c.Host}).Err(); err != nil {
		return fmt.Errorf("frontier renew %s: %w", c.Host, err)
	}
	return nil
}

// Complete releases the host; it becomes ready again at nextReady if it has
// more URIs queued.
func (f *Frontier) Complete(ctx context.Context, c *Claim, nextReady time.Time) error {
	if err := completeScript.Run(ctx, f.rdb, nil, f.prefix, c.Host, nextReady.UnixMilli()).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("frontier complete %s: %w", c.Host, err)
	}
	return nil
}

// Reap returns URIs whose lease expired (a crashed worker) to their queues
// without charging anything, and makes their hosts ready. It returns how
// many it recovered.
func (f *Frontier) Reap(ctx context.Context) (int, error) {
	n, err := reapScript.Run(ctx, f.rdb, nil, f.prefix, f.now().UnixMilli(), f.now().UnixMilli()).Int()
	if err != nil {
		return 0, fmt.Errorf("frontier reap: %w", err)
	}
	return n, nil
}

// NextReady reports the earliest time a host becomes ready, or false when
// no host waits.
func (f *Frontier) NextReady(ctx context.Context) (time.Time, bool, error) {
	zs, err := f.rdb.ZRangeWithScores(ctx, f.prefix+"ready", 0, 0).Result()
	if err != nil {
		return time.Time{}, false, fmt.Errorf("frontier next ready: %w", err)
	}
	if len(zs) == 0 {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(int64(zs[0].Score)), true, nil
}

// Stats reads the counters.
func (f *Frontier) Stats(ctx context.Context) (Stats, error) {
	pipe := f.rdb.Pipeline()
	q := pipe.Get(ctx, f.prefix+"queued")
	l := pipe.ZCard(ctx, f.prefix+"leases")
	r := pipe.ZCard(ctx, f.prefix+"ready")
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return Stats{}, fmt.Errorf("frontier stats: %w", err)
	}
	queued, _ := strconv.ParseInt(q.Val(), 10, 64)
	return Stats{Queued: queued, InFlight: l.Val(), Hosts: r.Val()}, nil
}

// ReleaseAll returns every leased URI to its queue at once. Only for a
// frontier no live worker shares (the standalone embedded Redis at start).
func (f *Frontier) ReleaseAll(ctx context.Context) (int, error) {
	n, err := reapScript.Run(ctx, f.rdb, nil, f.prefix, "+inf", f.now().UnixMilli()).Int()
	if err != nil {
		return 0, fmt.Errorf("frontier release all: %w", err)
	}
	return n, nil
}

// Release puts a claimed URI back at the head of its queue, uncharged, and
// frees the host: for work interrupted by shutdown or a local failure.
func (f *Frontier) Release(ctx context.Context, c *Claim) error {
	if err := releaseScript.Run(ctx, f.rdb, nil, f.prefix, c.Host, f.now().UnixMilli()).Err(); err != nil {
		return fmt.Errorf("frontier release %s: %w", c.Host, err)
	}
	return nil
}
