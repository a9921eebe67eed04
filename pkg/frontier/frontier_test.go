package frontier

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

func startRedis(t *testing.T) *redis.Client { return embeddedtest.Redis(t) }

type clock struct{ t atomic.Int64 }

func (c *clock) now() time.Time      { return time.UnixMilli(c.t.Load()) }
func (c *clock) add(d time.Duration) { c.t.Add(d.Milliseconds()) }

func item(host, path, hops string, seed bool) Item {
	u := "http://" + host + path
	return Item{Host: host, Key: u, Launch: messages.Launch{URL: u, IsSeed: seed, Hop: hops[len(hops)-min(1, len(hops)):],
		ParentURLMetadata: messages.ParentMetadata{PathFromSeed: hops[:len(hops)-min(1, len(hops))]}}}
}

func TestAdmitClaimCompletePoliteness(t *testing.T) {
	rdb := startRedis(t)
	ck := &clock{}
	ck.t.Store(1_000_000)
	f := New(rdb, "t", WithClock(ck.now))
	ctx := context.Background()

	got, err := f.Admit(ctx, []Item{item("a", "/deep", "LL", false), item("a", "/", "", true), item("a", "/deep", "LL", false), item("b", "/x", "L", false)})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[true true false true]" {
		t.Fatalf("admitted %v", got)
	}
	st, _ := f.Stats(ctx)
	if st.Queued != 3 || st.Hosts != 2 {
		t.Fatalf("stats %+v", st)
	}
	c1, err := f.Claim(ctx, time.Minute)
	if err != nil || c1 == nil {
		t.Fatalf("claim: %v %v", c1, err)
	}
	c2, _ := f.Claim(ctx, time.Minute)
	if c2 == nil || c2.Host == c1.Host {
		t.Fatalf("second claim should take the other host: %+v", c2)
	}
	if c3, _ := f.Claim(ctx, time.Minute); c3 != nil {
		t.Fatalf("both hosts leased, got %+v", c3)
	}
	ca := c1
	if c2.Host == "a" {
		ca = c2
	}
	if ca.Launch.URL != "http://a/" {
		t.Fatalf("seed must come first, got %s", ca.Launch.URL)
	}
	if err := f.Complete(ctx, ca, ck.now().Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.Claim(ctx, time.Minute); c != nil {
		t.Fatalf("host a is in its politeness delay, got %+v", c)
	}
	ck.add(3 * time.Second)
	c, _ := f.Claim(ctx, time.Minute)
	if c == nil || c.Launch.URL != "http://a/deep" {
		t.Fatalf("after delay: %+v", c)
	}
}

func TestExpiredLeaseReturnsURI(t *testing.T) {
	rdb := startRedis(t)
	ck := &clock{}
	ck.t.Store(5_000_000)
	f := New(rdb, "t", WithClock(ck.now))
	ctx := context.Background()
	if _, err := f.Admit(ctx, []Item{item("h", "/1", "", true)}); err != nil {
		t.Fatal(err)
	}
	c, _ := f.Claim(ctx, 10*time.Second)
	if c == nil {
		t.Fatal("no claim")
	}
	if n, _ := f.Reap(ctx); n != 0 {
		t.Fatalf("reaped a live lease: %d", n)
	}
	ck.add(11 * time.Second) // the worker died
	if n, err := f.Reap(ctx); n != 1 || err != nil {
		t.Fatalf("reap = %d, %v", n, err)
	}
	again, _ := f.Claim(ctx, 10*time.Second)
	if again == nil || again.Launch.URL != c.Launch.URL {
		t.Fatalf("URI not returned: %+v", again)
	}
}

// Many claimers in parallel never hold the same host at once and every
// URI is claimed exactly once.
func TestConcurrentClaimers(t *testing.T) {
	rdb := startRedis(t)
	f := New(rdb, "c")
	ctx := context.Background()
	var items []Item
	for h := range 20 {
		for p := range 10 {
			items = append(items, item(fmt.Sprintf("h%d", h), fmt.Sprintf("/%d", p), "L", false))
		}
	}
	if _, err := f.Admit(ctx, items); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	held := map[string]bool{}
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := f.Claim(ctx, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if c == nil {
					st, _ := f.Stats(ctx)
					if st.Queued == 0 {
						return
					}
					continue
				}
				mu.Lock()
				if held[c.Host] {
					t.Errorf("host %s claimed twice at once", c.Host)
				}
				held[c.Host] = true
				seen[c.Launch.URL]++
				mu.Unlock()
				mu.Lock()
				held[c.Host] = false
				mu.Unlock()
				if err := f.Complete(ctx, c, time.Now()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != len(items) {
		t.Fatalf("claimed %d distinct URIs, want %d", len(seen), len(items))
	}
	for u, n := range seen {
		if n != 1 {
			t.Fatalf("%s claimed %d times", u, n)
		}
	}
}

func TestCorruptItemIsDropped(t *testing.T) {
	rdb := startRedis(t)
	f := New(rdb, "x")
	ctx := context.Background()
	rdb.ZAdd(ctx, "{x}:q:bad", redis.Z{Score: 1, Member: "{not json"})
	rdb.Incr(ctx, "{x}:queued")
	rdb.ZAdd(ctx, "{x}:ready", redis.Z{Score: 0, Member: "bad"})
	if _, err := f.Claim(ctx, time.Minute); err == nil {
		t.Fatal("want error for corrupt item")
	}
	st, _ := f.Stats(ctx)
	if st.Queued != 0 || st.InFlight != 0 {
		t.Fatalf("corrupt item left state behind: %+v", st)
	}
	if _, err := f.Admit(ctx, []Item{{Host: "", Key: "k"}}); err == nil {
		t.Fatal("want error for item without host")
	}
}

func TestReleaseReturnsURIAtOnce(t *testing.T) {
	rdb := startRedis(t)
	f := New(rdb, "r")
	ctx := context.Background()
	if _, err := f.Admit(ctx, []Item{item("h", "/1", "", true), item("h", "/2", "L", false)}); err != nil {
		t.Fatal(err)
	}
	c, _ := f.Claim(ctx, time.Minute)
	if err := f.Release(ctx, c); err != nil {
		t.Fatal(err)
	}
	again, _ := f.Claim(ctx, time.Minute)
	if again == nil || again.Launch.URL != c.Launch.URL {
		t.Fatalf("released URI should come first again: %+v", again)
	}
	if st, _ := f.Stats(ctx); st.Queued != 1 || st.InFlight != 1 {
		t.Fatalf("stats %+v", st)
	}
}
