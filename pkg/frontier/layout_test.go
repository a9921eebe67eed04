package frontier

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// The first frontier to write records its shard count (a look does
// not); one opened with another count refuses to run, at CheckLayout and
// at every script call, and writes nothing.
func TestLayoutGuard(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		look := newTestFrontier(t, rdb, newClock(), Options{Shards: 2})
		if err := look.CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "recorded by a look", rdb.Exists(ctx, LayoutKey("t")).Val(), int64(0))
		f := newTestFrontier(t, rdb, newClock(), Options{Shards: 4})
		var cs []Candidate
		for i := range 20 {
			cs = append(cs, cand(fmt.Sprintf("h%d", i), "/", "L", false))
		}
		admit(t, f, cs...) // records the count on first use
		mustEqual(t, "recorded", rdb.HGet(ctx, LayoutKey("t"), "shards").Val(), "4")
		if err := f.CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}
		before := rdb.DBSize(ctx).Val()

		for _, n := range []int{1, 2, 12} {
			g := newTestFrontier(t, rdb, newClock(), Options{Shards: n})
			err := g.CheckLayout(ctx)
			if !errors.Is(err, ErrLayout) {
				t.Fatalf("shards %d: CheckLayout = %v, want ErrLayout", n, err)
			}
			want := fmt.Sprintf("created with 4 shards, opened with %d", n)
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "rebuild") {
				t.Fatalf("error %q does not say %q and what to do", err, want)
			}
			if _, err := g.Admit(ctx, []Candidate{cand("new", "/", "L", false)}); !errors.Is(err, ErrLayout) {
				t.Fatalf("shards %d: Admit = %v, want ErrLayout", n, err)
			}
			if _, _, err := g.Claim(ctx, 4, time.Minute); !errors.Is(err, ErrLayout) {
				t.Fatalf("shards %d: Claim = %v, want ErrLayout", n, err)
			}
		}
		mustEqual(t, "keys after refused opens", rdb.DBSize(ctx).Val(), before)
		mustEqual(t, "still recorded", rdb.HGet(ctx, LayoutKey("t"), "shards").Val(), "4")
		mustEqual(t, "queued", stats(t, f).Queued, 20)
	})
}

// A frontier created before the layout key existed had one shard: a
// sharded opener is refused for its count, an unsharded one for its
// per-host URI index, as is a frontier whose layout has no index format.
func TestLayoutOfOlderFrontier(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		f := newTestFrontier(t, rdb, newClock(), Options{})
		admit(t, f, cand("a", "/", "L", false))
		rdb.Del(ctx, LayoutKey("t"))

		g := newTestFrontier(t, rdb, newClock(), Options{Shards: 3})
		if err := g.CheckLayout(ctx); !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "created with 1 shards, opened with 3") {
			t.Fatalf("sharded open of an unsharded frontier: %v", err)
		}
		mustEqual(t, "nothing recorded", rdb.Exists(ctx, LayoutKey("t")).Val(), int64(0))

		h := newTestFrontier(t, rdb, newClock(), Options{})
		if err := h.RecordLayout(ctx); !errors.Is(err, ErrOldIndex) || !strings.Contains(err.Error(), "trawler frontier rebuild") {
			t.Fatalf("unsharded open of a frontier without layout: %v", err)
		}
		mustEqual(t, "nothing recorded", rdb.Exists(ctx, LayoutKey("t")).Val(), int64(0))

		rdb.HSet(ctx, LayoutKey("t"), "shards", "1")
		k := newTestFrontier(t, rdb, newClock(), Options{})
		if err := k.CheckLayout(ctx); !errors.Is(err, ErrOldIndex) {
			t.Fatalf("open of a frontier whose layout has no index format: %v", err)
		}
		if _, err := k.Admit(ctx, []Candidate{cand("b", "/", "L", false)}); !errors.Is(err, ErrOldIndex) {
			t.Fatalf("admission into an old frontier: %v", err)
		}
		rdb.HSet(ctx, LayoutKey("t"), "ix", "1")
		if err := newTestFrontier(t, rdb, newClock(), Options{}).CheckLayout(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A rebuild into a fresh frontier with several shards queues the same
// URIs as one with a single shard, spread over the shards: the way to
// change the shard count of a crawl.
func TestRebuildSharded(t *testing.T) {
	for _, seen := range []string{profile.SeenRecently, profile.SeenBloom} {
		t.Run(seen, func(t *testing.T) {
			forBackends(t, func(t *testing.T, rdb *redis.Client) {
				testRebuildSharded(t, rdb, seen)
			})
		})
	}
}

func testRebuildSharded(t *testing.T, rdb *redis.Client, seen string) {
	ctx := context.Background()
	ck := newClock()
	t0 := ck.now().Add(-time.Hour)
	j := &memJournal{}
	var want []string
	for i := range 30 {
		c := cand(fmt.Sprintf("h%02d", i%10), fmt.Sprintf("/%d", i), "L", false)
		j.admitted = append(j.admitted, Admission{Launch: c.Launch, At: t0})
		if i%3 == 0 {
			j.crawled = append(j.crawled, Finished{URL: c.Launch.URL, Status: 200, Bytes: 10, Source: "tid:1:http://x/", At: t0.Add(time.Minute)})
			continue
		}
		want = append(want, c.Launch.URL)
	}
	slices.Sort(want)
	for _, shards := range []int{1, 4} {
		rdb.FlushAll(ctx)
		o := Options{Shards: shards}
		if seen == profile.SeenBloom {
			o = bloomOptions(1000, 0.001, 0)
			o.Shards = shards
		}
		f := newTestFrontier(t, rdb, ck, o)
		rep, err := Rebuild(ctx, f, j, func(messages.Launch) Policy { return testPolicy() }, false)
		if err != nil {
			t.Fatalf("shards %d: %v", shards, err)
		}
		mustEqual(t, fmt.Sprintf("shards %d: queued", shards), rep.Queued, int64(len(want)))
		mustEqual(t, "recorded", rdb.HGet(ctx, LayoutKey("t"), "shards").Val(), fmt.Sprint(shards))
		if shards > 1 {
			ready, _ := rdb.Keys(ctx, "{t:*}:ready").Result()
			if len(ready) < 2 {
				t.Fatalf("rebuilt hosts did not spread over shards: %v", ready)
			}
		}
		for _, p := range f.prefixes {
			checkInvariants(t, rdb, p)
		}
		var got []string
		for {
			cs := claim(t, f, 8)
			if len(cs) == 0 {
				break
			}
			got = append(got, urls(cs)...)
			finish(t, f, cs...)
		}
		slices.Sort(got)
		mustEqual(t, fmt.Sprintf("shards %d: crawled after rebuild", shards), sprint(got), sprint(want))
		mustEqual(t, "totals", totals(t, f).URIs, int64(30))
	}
}

// RecordedShards reads the count back: 1 before any is recorded, the
// recorded one after, an error for a damaged key.
func TestRecordedShards(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		n, err := RecordedShards(ctx, rdb, "t")
		mustEqual(t, "unrecorded", n, 1)
		if err != nil {
			t.Fatal(err)
		}
		f := newTestFrontier(t, rdb, newClock(), Options{Shards: 3})
		if err := f.RecordLayout(ctx); err != nil {
			t.Fatal(err)
		}
		n, err = RecordedShards(ctx, rdb, "t")
		mustEqual(t, "recorded", n, 3)
		if err != nil {
			t.Fatal(err)
		}
		rdb.HSet(ctx, LayoutKey("t"), "shards", "x")
		if _, err := RecordedShards(ctx, rdb, "t"); err == nil || !strings.Contains(err.Error(), `"x"`) {
			t.Errorf("damaged count: %v", err)
		}
	})
}
