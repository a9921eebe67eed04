package frontier

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// ErrLayout is returned when a frontier is opened with another shard
// count than the one it was created with.
var ErrLayout = errors.New("frontier shard count differs from the one it was created with")

// ErrOldIndex is returned when a frontier was written by a trawler that
// kept a URI index per host (before 2026-11-28): its URIs would not be
// found in the shard's index buckets, so they would be queued twice.
var ErrOldIndex = errors.New("frontier written with a per-host URI index")

// layoutScript returns the shard count recorded in the layout key
// (KEYS[1]); when there is none and ARGV[2] is 1 it records ARGV[1]
// (the script is atomic, so of two racing openers the first wins) with
// the index format (ix), else it answers an empty string. A frontier
// that holds state but no layout key predates the key and had one shard
// (nothing set Shards before), so for a sharded opener it answers 1 when
// the unsharded frontier's keys (KEYS[2..]) exist, and records nothing;
// such a frontier, and one whose layout has no ix, kept its URI index
// per host: 'old'.
var layoutScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], 'shards')
if cur then
  if redis.call('HEXISTS', KEYS[1], 'ix') == 0 then return 'old' end
  return cur
end
if redis.call('EXISTS', KEYS[2], KEYS[3], KEYS[4]) > 0 then
  if ARGV[1] ~= '1' then return '1' end
  return 'old'
end
if ARGV[2] ~= '1' then return '' end
redis.call('HSET', KEYS[1], 'shards', ARGV[1], 'ix', '1')
return ARGV[1]
`)

// LayoutKey is the key that records a frontier's shard count, under the
// unsharded name so it is found whatever count an opener has.
func LayoutKey(name string) string { return "{" + name + "}:layout" }

// CheckLayout makes sure the frontier in Redis has the shard count f
// was opened with: the count decides which shard a host's keys are in,
// so with another count queued URIs would be orphaned and hosts queued
// twice. A frontier with no count recorded passes and is left so, so
// that a look (frontier stats) before the first worker runs does not
// fix the count; RecordLayout records it.
func (f *Frontier) CheckLayout(ctx context.Context) error { return f.layout(ctx, false) }

// RecordLayout is CheckLayout for roles that write: when no count is
// recorded it records f's. Every script call runs it once per Frontier,
// so nothing is written under another layout; the worker runs it at
// start so a mismatch stops it at once.
func (f *Frontier) RecordLayout(ctx context.Context) error { return f.layout(ctx, true) }

func (f *Frontier) layout(ctx context.Context, record bool) error {
	if f.layoutOK.Load() {
		return nil
	}
	f.layoutMu.Lock()
	defer f.layoutMu.Unlock()
	if f.layoutOK.Load() {
		return nil
	}
	flat := "{" + f.name + "}:"
	keys := []string{LayoutKey(f.name), flat + "meta", flat + "stats", flat + "seq"}
	v, err := layoutScript.Run(ctx, f.rdb, keys, len(f.prefixes), flag(record)).Result()
	if err != nil {
		return fmt.Errorf("frontier %s layout: %w", f.name, err)
	}
	switch toString(v) {
	case "":
		return nil // nothing recorded yet, and not asked to record
	case "old":
		return fmt.Errorf("frontier %s: %w: rebuild it from the journal with this version "+
			"(stop the workers, delete its keys {%s}:* and {%s:<i>}:*, then trawler frontier rebuild)",
			f.name, ErrOldIndex, f.name, f.name)
	}
	got, _ := strconv.Atoi(toString(v))
	if got != len(f.prefixes) {
		return fmt.Errorf("frontier %s: %w: created with %d shards, opened with %d (frontier.shards in the profile): "+
			"keep frontier.shards at %d, or rebuild from the journal into a fresh frontier "+
			"(delete its keys {%s}:* and {%s:<i>}:*, then trawler frontier rebuild with the new count)",
			f.name, ErrLayout, got, len(f.prefixes), got, f.name, f.name)
	}
	f.layoutOK.Store(true)
	return nil
}

// RecordedShards is the shard count recorded for the frontier name: 1
// when none is (a frontier not yet written to, or one from before the
// count was recorded, which had one shard). Tools that work on whatever
// frontier they find (state backup and restore) open it with this count.
func RecordedShards(ctx context.Context, rdb redis.UniversalClient, name string) (int, error) {
	v, err := rdb.HGet(ctx, LayoutKey(name), "shards").Result()
	if errors.Is(err, redis.Nil) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("frontier %s layout: %w", name, err)
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("frontier %s layout: shard count %q is not a positive number", name, v)
	}
	return n, nil
}
