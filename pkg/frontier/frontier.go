// Package frontier keeps the live crawl frontier in Redis
// (ARCHITECTURE.md section 5): per-host queues ordered by precedence, a
// ready set of hosts keyed by the time each may next be fetched, leases on
// claimed URIs, per-host politeness state, quota counters, crawl totals and
// the seen filter (recently-seen or a Bloom filter in Redis bitmaps).
//
// Every change is one Lua script call that works on a batch: Admit queues
// many candidates, Claim leases up to N URIs across ready hosts, Complete
// settles many outcomes. Many workers in many processes share one frontier
// safely; a crashed worker's leases expire back into the queues.
//
// Every key of a shard carries the shard's hash tag ("{fc-npld}:…", or
// "{fc-npld:3}:…" with several shards) so the scripts run unchanged on
// Redis Cluster. docs/frontier.md documents the key schema and its memory
// use.
//
// Settings are per URI: candidates and outcomes carry a Policy, so sheets
// can give each URI its own politeness, retry and quota settings.
package frontier

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
)

// Options configure a Frontier. Unlike Policy they hold for the whole
// crawl.
type Options struct {
	// Shards splits the frontier over this many hash tags (default 1), so a
	// Redis Cluster can spread it over nodes. Hosts are assigned to shards
	// by a hash of their name. Source quotas are counted per shard. The
	// count is part of the key layout: it is recorded when the frontier is
	// first used, and a frontier opened with another count refuses to run
	// (CheckLayout).
	Shards int
	// SeenFilter is profile.SeenRecently (default) or profile.SeenBloom.
	SeenFilter string
	// BloomExpectedURIs and BloomFalsePositiveRate size the Bloom filter.
	BloomExpectedURIs      int64
	BloomFalsePositiveRate float64
	// BloomChunkBits is the size of one Bloom bitmap key, at most 2^32
	// (Redis strings stop at 512 MB); default defaultChunkBits. A filter
	// already built keeps the chunk it was built with.
	BloomChunkBits uint64
	// Now replaces time.Now, for tests. Workers sharing a frontier must
	// have synchronised clocks: leases and ready times are wall-clock ms.
	Now func() time.Time
	// Logger receives reports of corrupt queue entries. Nil discards them.
	Logger *slog.Logger
}

// OptionsFrom takes the crawl-wide frontier settings of a profile.
func OptionsFrom(p profile.Profile) Options {
	return Options{
		Shards: p.Frontier.Shards, SeenFilter: p.Frontier.SeenFilter, BloomExpectedURIs: p.Frontier.BloomExpectedURIs,
		BloomFalsePositiveRate: p.Frontier.BloomFalsePositiveRate,
	}
}

// maxChunkBits is the largest bitmap Redis allows in one string.
const maxChunkBits = 1 << 32

// defaultChunkBits sizes a Bloom bitmap key so that its allocation ends
// inside one of jemalloc's size classes (128 MiB). SETBIT grows a string
// with 1 MiB of room to spare, and jemalloc rounds a large allocation up
// to the next class, a quarter of a power of two above: a 2^32-bit key,
// 512 MiB long, took 640 MiB. This one's header, bits and spare MiB come
// to just under 128 MiB.
const defaultChunkBits = (1<<27 - 1<<20 - 1<<12) * 8

func (o Options) withDefaults() Options {
	if o.Shards == 0 {
		o.Shards = 1
	}
	if o.SeenFilter == "" {
		o.SeenFilter = profile.SeenRecently
	}
	if o.BloomChunkBits == 0 {
		o.BloomChunkBits = defaultChunkBits
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	if o.Shards < 1 || o.Shards > 1024 {
		errs = append(errs, fmt.Errorf("shards %d: want 1..1024", o.Shards))
	}
	switch o.SeenFilter {
	case profile.SeenRecently:
	case profile.SeenBloom:
		if o.BloomExpectedURIs < 1 || o.BloomFalsePositiveRate <= 0 || o.BloomFalsePositiveRate >= 1 {
			errs = append(errs, fmt.Errorf("bloom: need expected URIs >= 1 (have %d) and 0 < false-positive rate < 1 (have %g)",
				o.BloomExpectedURIs, o.BloomFalsePositiveRate))
		}
		if o.BloomChunkBits > maxChunkBits {
			errs = append(errs, fmt.Errorf("bloom chunk of %d bits: Redis strings hold at most 2^32 bits", o.BloomChunkBits))
		}
	default:
		errs = append(errs, fmt.Errorf("seen filter %q: want %s or %s", o.SeenFilter, profile.SeenRecently, profile.SeenBloom))
	}
	return errors.Join(errs...)
}

// Frontier is a Redis-backed frontier. It is safe for concurrent use.
type Frontier struct {
	rdb      redis.UniversalClient
	name     string
	prefixes []string
	mode     string // "r" recently seen, "b" Bloom
	bloom    bloomFilter
	now      func() time.Time
	log      *slog.Logger
	sc       scripts
	blocks   *blockCodec
	rotate   atomic.Uint32

	bloomMu      sync.Mutex
	bloomChecked bool

	// layoutMu and layoutOK: CheckLayout or RecordLayout has found the
	// recorded shard count equal to len(prefixes).
	layoutMu sync.Mutex
	layoutOK atomic.Bool
}

// New returns the frontier called name (e.g. "fc-npld").
func New(rdb redis.UniversalClient, name string, o Options) (*Frontier, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("frontier %s: %w", name, err)
	}
	if name == "" {
		return nil, errors.New("frontier: name is required")
	}
	blocks, err := newBlockCodec()
	if err != nil {
		return nil, fmt.Errorf("frontier %s: %w", name, err)
	}
	f := &Frontier{rdb: rdb, name: name, mode: "r", now: o.Now, log: o.Logger, sc: newScripts(), blocks: blocks}
	for i := range o.Shards {
		tag := name
		if o.Shards > 1 {
			tag = name + ":" + strconv.Itoa(i)
		}
		f.prefixes = append(f.prefixes, "{"+tag+"}:")
	}
	if o.SeenFilter == profile.SeenBloom {
		f.mode = "b"
		f.bloom = newBloomFilter(o.BloomExpectedURIs, o.BloomFalsePositiveRate, o.Shards, o.BloomChunkBits)
	}
	return f, nil
}

// Name is the frontier's name.
func (f *Frontier) Name() string { return f.name }

// Prefix is the key prefix of the first shard; packages that keep
// per-crawl state beside the frontier use it so their keys share its slot.
func (f *Frontier) Prefix() string { return f.prefixes[0] }

// shardOf assigns a host to a shard.
func (f *Frontier) shardOf(host string) int {
	if len(f.prefixes) == 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(host))
	return int(h.Sum32() % uint32(len(f.prefixes)))
}

// call is one script invocation on one shard; args exclude the prefix.
type call struct {
	shard int
	args  []any
}

// runAll runs a script once per call, pipelined when there are several
// (one round trip on a single Redis), and returns the replies in order.
func (f *Frontier) runAll(ctx context.Context, s *redis.Script, calls []call) ([]any, error) {
	// Every change goes through a script, so this is where a frontier
	// opened with the wrong shard count is stopped before it writes.
	if err := f.RecordLayout(ctx); err != nil {
		return nil, err
	}
	argv := func(c call) []any { return append([]any{f.prefixes[c.shard]}, c.args...) }
	keys := func(c call) []string { return []string{f.prefixes[c.shard] + "ready"} }
	out := make([]any, len(calls))
	if len(calls) == 1 {
		v, err := s.Run(ctx, f.rdb, keys(calls[0]), argv(calls[0])...).Result()
		if err != nil {
			return nil, err
		}
		out[0] = v
		return out, nil
	}
	pipe := f.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(calls))
	for i, c := range calls {
		cmds[i] = s.EvalSha(ctx, pipe, keys(c), argv(c)...)
	}
	_, _ = pipe.Exec(ctx) // errors are read per command below
	errs := make([]error, len(cmds))
	var wg sync.WaitGroup
	for i, cmd := range cmds {
		v, err := cmd.Result()
		if err != nil && (redis.HasErrorPrefix(err, "NOSCRIPT") || notRun(err)) {
			// Sent again alone, in parallel so that the shards of a
			// master that is away cost its outage once.
			wg.Go(func() {
				out[i], errs[i] = s.Run(ctx, f.rdb, keys(calls[i]), argv(calls[i])...).Result()
			})
			continue
		}
		out[i], errs[i] = v, err
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			out[i], errs[i] = nil, fmt.Errorf("shard %d: %w", calls[i].shard, err)
		}
	}
	return out, errors.Join(errs...)
}

// notRun tells the errors of a pipelined script call that never ran
// (redisconn.NotRun). go-redis's cluster client retries a pipeline only
// MaxRedirects times (3, well under a second), a single command
// MaxRetries times more on each (about 5 s, as redisconn.OpenUniversal
// sets them), so such a call is sent again alone: a sharded frontier
// then rides out a master restart as an unsharded one, whose calls are
// single commands, does. Errors after the script may have run (a
// connection lost mid-reply) are not retried here: a completion applied
// twice would be reported as a lost lease.
func notRun(err error) bool { return redisconn.NotRun(err) }

// ms is a time as Unix milliseconds, the unit of every score.
func ms(t time.Time) int64 { return t.UnixMilli() }

func toInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	}
	return ""
}
