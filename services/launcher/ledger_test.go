package launcher

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

func newLedger(t *testing.T, rdb *redis.Client, claim time.Duration) *RedisLedger {
	t.Helper()
	l, err := NewRedisLedger(rdb, "", claim, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLaunchKey(t *testing.T) {
	hour := time.Date(2024, 1, 17, 9, 0, 0, 0, time.FixedZone("x", 3600))
	k := LaunchKey("fc.tocrawl.npld", hour, 1001, "https://news.example.org/")
	if !strings.HasPrefix(k, "fc.tocrawl.npld:2024011708:1001:") || len(k) != len("fc.tocrawl.npld:2024011708:1001:")+16 {
		t.Errorf("key %q", k)
	}
	others := []string{
		LaunchKey("fc.tocrawl.bypm", hour, 1001, "https://news.example.org/"),
		LaunchKey("fc.tocrawl.npld", hour.Add(time.Hour), 1001, "https://news.example.org/"),
		LaunchKey("fc.tocrawl.npld", hour, 1002, "https://news.example.org/"),
		LaunchKey("fc.tocrawl.npld", hour, 1001, "https://news.example.org/x"),
	}
	for _, o := range others {
		if o == k {
			t.Errorf("%q collides with %q", o, k)
		}
	}
}

func TestRedisLedger(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	a, b := newLedger(t, rdb, time.Minute), newLedger(t, rdb, time.Minute)
	keys := []string{"k1", "k2", "k3"}
	got, err := a.Claim(ctx, keys[:2])
	if err != nil || !slices.Equal(got, []bool{true, true}) {
		t.Fatalf("first claim %v %v", got, err)
	}
	got, err = b.Claim(ctx, keys)
	if err != nil || !slices.Equal(got, []bool{false, false, true}) {
		t.Fatalf("racing claim %v %v", got, err)
	}
	// b cannot confirm or release a's claims.
	if err := b.Release(ctx, []string{"k1"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Confirm(ctx, []string{"k2"}); err != nil {
		t.Fatal(err)
	}
	if v := rdb.Get(ctx, DefaultLedgerPrefix+"k1").Val(); v != a.runID {
		t.Errorf("k1 = %q after another run's release", v)
	}
	if v := rdb.Get(ctx, DefaultLedgerPrefix+"k2").Val(); v != a.runID {
		t.Errorf("k2 = %q after another run's confirm", v)
	}
	// a confirms k1 and releases k2: k1 is sent for the record TTL, k2 is
	// free for anyone.
	if err := a.Confirm(ctx, []string{"k1"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, []string{"k2"}); err != nil {
		t.Fatal(err)
	}
	if v, ttl := rdb.Get(ctx, DefaultLedgerPrefix+"k1").Val(), rdb.PTTL(ctx, DefaultLedgerPrefix+"k1").Val(); v != "sent" ||
		ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("confirmed k1 = %q, TTL %v", v, ttl)
	}
	if claimTTL := rdb.PTTL(ctx, DefaultLedgerPrefix+"k3").Val(); claimTTL <= 0 || claimTTL > time.Minute {
		t.Errorf("claim TTL %v", claimTTL)
	}
	got, err = b.Claim(ctx, keys)
	if err != nil || !slices.Equal(got, []bool{false, true, false}) {
		t.Fatalf("claim after release %v %v", got, err)
	}
	// A claim that expired before the broker answered is still recorded
	// when nobody took it meanwhile.
	if err := a.Confirm(ctx, []string{"never-claimed"}); err != nil {
		t.Fatal(err)
	}
	if v := rdb.Get(ctx, DefaultLedgerPrefix+"never-claimed").Val(); v != "sent" {
		t.Errorf("expired claim confirmed as %q", v)
	}
	// Empty batches do nothing.
	if got, err := a.Claim(ctx, nil); err != nil || got != nil {
		t.Errorf("empty claim %v %v", got, err)
	}
}

func TestRedisLedgerErrors(t *testing.T) {
	if _, err := NewRedisLedger(nil, "", 0, 0); err == nil || !strings.Contains(err.Error(), "no Redis client") {
		t.Errorf("nil client: %v", err)
	}
	rdb := embeddedtest.Redis(t)
	if _, err := NewRedisLedger(rdb, "", -time.Second, 0); err == nil || !strings.Contains(err.Error(), "negative TTL") {
		t.Errorf("negative TTL: %v", err)
	}
	l := newLedger(t, rdb, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Claim(ctx, []string{"k"}); err == nil || !strings.Contains(err.Error(), "claim 1 launches") {
		t.Errorf("cancelled claim: %v", err)
	}
	if err := l.Confirm(ctx, []string{"k"}); err == nil || !strings.Contains(err.Error(), "confirm") {
		t.Errorf("cancelled confirm: %v", err)
	}
}
