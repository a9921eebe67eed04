package launcher

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Ledger records which launches were sent, so that running an hour again
// (a retried CronJob, two launchers racing, a restart that catches up)
// sends nothing twice. A launch is claimed before it is produced, then
// confirmed once the broker acknowledged it, or released if producing
// failed. Each method handles a batch and answers per key.
type Ledger interface {
	// Claim tries to take each key for this run and reports which ones it
	// got; a key already claimed or confirmed (by any run) is not taken.
	Claim(ctx context.Context, keys []string) ([]bool, error)
	// Confirm marks claimed keys as sent.
	Confirm(ctx context.Context, keys []string) error
	// Release gives claimed keys back, so a later run may send them.
	Release(ctx context.Context, keys []string) error
}

// LaunchKey names one launch in a Ledger: the topic (crawl and stream),
// the hour it belongs to (UTC), the target and the seed. The seed is
// hashed so keys stay short whatever the URL.
func LaunchKey(topic string, hour time.Time, target int64, seed string) string {
	sum := sha256.Sum256([]byte(seed))
	return topic + ":" + hour.UTC().Format("2006010215") + ":" + strconv.FormatInt(target, 10) + ":" +
		hex.EncodeToString(sum[:8])
}

// RedisLedger keeps one Redis key per launch:
//
//	<prefix><topic>:<yyyymmddhh>:<target id>:<seed hash>
//
// Claim is SET NX with the run's id and the claim TTL, atomic per key, so
// of two launchers racing on the same hour exactly one gets each launch.
// Confirm replaces the value with "sent" and the record TTL; Release
// deletes the key. Both only touch keys that still hold the run's id (a Lua
// compare-and-set), so a run whose claim expired cannot undo another's.
// A run that dies between claiming and producing holds its launches until
// the claim TTL ends; a later run of the same hour then sends them.
//
// One key per launch rather than a set per hour: each launch carries its
// own expiry, the claim/confirm states need no script over a whole set, and
// the keys spread over a Redis Cluster.
type RedisLedger struct {
	rdb       redis.Cmdable
	prefix    string
	runID     string
	claimTTL  time.Duration
	recordTTL time.Duration
	confirm   *redis.Script
	release   *redis.Script
}

// DefaultLedgerPrefix is the Redis key prefix of launch records.
const DefaultLedgerPrefix = "trawler:launcher:sent:"

// NewRedisLedger returns a ledger for one run (each run must have its own:
// the ledger's id tells its claims from others'). Zero TTLs mean
// DefaultClaimTTL and DefaultRecordTTL; an empty prefix means
// DefaultLedgerPrefix.
func NewRedisLedger(rdb redis.Cmdable, prefix string, claimTTL, recordTTL time.Duration) (*RedisLedger, error) {
	if rdb == nil {
		return nil, errors.New("launch ledger: no Redis client")
	}
	if claimTTL < 0 || recordTTL < 0 {
		return nil, fmt.Errorf("launch ledger: negative TTL (claim %v, record %v)", claimTTL, recordTTL)
	}
	if prefix == "" {
		prefix = DefaultLedgerPrefix
	}
	if claimTTL == 0 {
		claimTTL = DefaultClaimTTL
	}
	if recordTTL == 0 {
		recordTTL = DefaultRecordTTL
	}
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("launch ledger: run id: %w", err)
	}
	return &RedisLedger{rdb: rdb, prefix: prefix, runID: "claimed:" + hex.EncodeToString(id[:]),
		claimTTL: claimTTL, recordTTL: recordTTL,
		confirm: redis.NewScript(confirmSource), release: redis.NewScript(releaseSource)}, nil
}

// Claim implements Ledger with one pipelined SET NX per key.
func (l *RedisLedger) Claim(ctx context.Context, keys []string) ([]bool, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.BoolCmd, len(keys))
	_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.SetNX(ctx, l.prefix+k, l.runID, l.claimTTL)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("launch ledger: claim %d launches: %w", len(keys), err)
	}
	got := make([]bool, len(keys))
	for i, c := range cmds {
		got[i] = c.Val()
	}
	return got, nil
}

// confirmSource turns this run's claim (or an expired one nobody took
// since) into a "sent" record.
const confirmSource = `
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] or v == false then
  redis.call('SET', KEYS[1], 'sent', 'PX', ARGV[2])
  return 1
end
return 0`

// releaseSource deletes this run's claim.
const releaseSource = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`

// Confirm implements Ledger. A key whose claim expired before the broker
// acknowledged it is still recorded as sent when nobody claimed it since;
// if another run did, its claim is left alone (that launch may then be
// sent twice, which the workers' seen filter absorbs).
func (l *RedisLedger) Confirm(ctx context.Context, keys []string) error {
	return l.runScript(ctx, "confirm", l.confirm, keys, strconv.FormatInt(l.recordTTL.Milliseconds(), 10))
}

// Release implements Ledger.
func (l *RedisLedger) Release(ctx context.Context, keys []string) error {
	return l.runScript(ctx, "release", l.release, keys)
}

func (l *RedisLedger) runScript(ctx context.Context, what string, s *redis.Script, keys []string, args ...any) error {
	if len(keys) == 0 {
		return nil
	}
	if err := s.Load(ctx, l.rdb).Err(); err != nil {
		return fmt.Errorf("launch ledger: load %s script: %w", what, err)
	}
	_, err := l.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			s.EvalSha(ctx, p, []string{l.prefix + k}, append([]any{l.runID}, args...)...)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("launch ledger: %s %d launches: %w", what, len(keys), err)
	}
	return nil
}
