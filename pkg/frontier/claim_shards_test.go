package frontier

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A shard that fails (its master away) fails a claim only when no other
// shard gave a URI: URIs already leased on other shards are returned, not
// left to wait for their leases to expire.
func TestClaimShardFailure(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		f := newTestFrontier(t, rdb, newClock(), Options{Shards: 4})
		var cs []Candidate
		for i := range 40 {
			cs = append(cs, cand(fmt.Sprintf("h%02d", i), "/", "L", false))
		}
		admit(t, f, cs...)
		// Shard 1's ready set of the wrong type makes its claim script fail.
		rdb.Del(ctx, "{t:1}:ready")
		rdb.Set(ctx, "{t:1}:ready", "x", 0)
		// The first claim starts at shard 1 (the rotation), the second at
		// shard 2 and reaches shard 1 last.
		if got, _, err := f.Claim(ctx, 100, time.Minute); err == nil || len(got) != 0 {
			t.Fatalf("claim starting at the failing shard: %d claims, err %v", len(got), err)
		}
		got, wait, err := f.Claim(ctx, 100, time.Minute)
		if err != nil || len(got) == 0 || wait != 0 {
			t.Fatalf("claim reaching the failing shard last: %d claims, wait %v, err %v", len(got), wait, err)
		}
		for _, c := range got {
			if c.shard == 1 {
				t.Fatalf("claim %s from the failing shard", c.Lease())
			}
		}
		finish(t, f, got...)
	})
}
