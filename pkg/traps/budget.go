package traps

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Budget counts, per host, the new URLs each self-similar pattern has
// admitted, in Redis so every worker of a crawl shares it: one hash a
// host (<prefix>traps:<host>, pattern -> count), expiring TTL after its
// last count, so a finished crawl's counts go and memory stays bounded by
// the hosts active in a TTL.
type Budget struct {
	rdb    redis.UniversalClient
	prefix string
	ttl    time.Duration
}

// DefaultTTL keeps a host's counts a week after its last new URL.
const DefaultTTL = 7 * 24 * time.Hour

// NewBudget counts under prefix (the frontier's key prefix); ttl 0 is
// DefaultTTL.
func NewBudget(rdb redis.UniversalClient, prefix string, ttl time.Duration) *Budget {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Budget{rdb: rdb, prefix: prefix, ttl: ttl}
}

// Key names one pattern of one host.
type Key struct{ Host, Pattern string }

// Add counts n new URLs for each key in one round trip and returns the
// keys now past max. Another worker's counts are in the totals: a
// pattern is trapped once the crawl's total passes max, and each worker
// stops at most one page's links later.
func (b *Budget) Add(ctx context.Context, adds map[Key]int64, max int64) ([]Key, error) {
	if len(adds) == 0 || max < 0 {
		return nil, nil
	}
	keys := make([]Key, 0, len(adds))
	cmds := make([]*redis.IntCmd, 0, len(adds))
	pipe := b.rdb.Pipeline()
	for k, n := range adds {
		hk := b.prefix + "traps:" + k.Host
		keys = append(keys, k)
		cmds = append(cmds, pipe.HIncrBy(ctx, hk, k.Pattern, n))
		pipe.Expire(ctx, hk, b.ttl)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("trap budget: %w", err)
	}
	var over []Key
	for i, c := range cmds {
		if c.Val() > max {
			over = append(over, keys[i])
		}
	}
	return over, nil
}
