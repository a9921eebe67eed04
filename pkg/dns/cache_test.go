package dns

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/testwait"
)

func TestCacheValidity(t *testing.T) {
	tests := []struct {
		name        string
		ttl         uint32
		minValidity time.Duration
		valid       time.Duration // max(TTL, MinValidity)
	}{
		{"ttl wins", 300, time.Minute, 300 * time.Second},
		{"min validity wins", 300, 10 * time.Minute, 10 * time.Minute},
		{"zero ttl, min validity", 0, 30 * time.Second, 30 * time.Second},
		{"top bit ttl means zero", 1 << 31, 45 * time.Second, 45 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, "127.0.0.1")
			srv.set("host.test", zone{a: []string{"192.0.2.1"}, ttl: tc.ttl})
			clock := newClock()
			r := newTestResolver(t, Options{Now: clock.now, MinValidity: tc.minValidity}, srv)
			ctx := context.Background()
			first, fresh, err := r.Resolve(ctx, "host.test")
			if err != nil || !fresh {
				t.Fatalf("first Resolve: fresh=%v err=%v", fresh, err)
			}
			if want := clock.now().Add(tc.valid); !first.Expires.Equal(want) || !first.Fetched.Equal(clock.now()) {
				t.Fatalf("Fetched %v Expires %v; want %v and %v", first.Fetched, first.Expires, clock.now(), want)
			}
			clock.advance(tc.valid - time.Second)
			ans, fresh, err := r.Resolve(ctx, "host.test")
			if err != nil || fresh || ans != first {
				t.Fatalf("just before expiry: fresh=%v err=%v same=%v; want the cached answer", fresh, err, ans == first)
			}
			clock.advance(time.Second)
			ans, fresh, err = r.Resolve(ctx, "host.test")
			if err != nil || !fresh || ans == first {
				t.Fatalf("at expiry: fresh=%v err=%v; want a new lookup", fresh, err)
			}
			if n := srv.count("udp", "A", "host.test"); n != 2 {
				t.Errorf("A queries = %d, want 2", n)
			}
		})
	}
}

func TestSingleflight(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	srv.set("slow.test", zone{a: []string{"192.0.2.1"}, ttl: 60, mode: modeHold})
	r := newTestResolver(t, Options{Timeout: 10 * time.Second}, srv)
	const callers = 20
	var wg sync.WaitGroup
	results := make(chan bool, callers)
	for range callers {
		wg.Go(func() {
			ans, fresh, err := r.Resolve(context.Background(), "slow.test")
			if err != nil || len(ans.Addrs) != 1 {
				t.Errorf("Resolve: %v %v", ans, err)
			}
			results <- fresh
		})
	}
	testwait.Until(t, 5*time.Second, "all callers to join the lookup", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		f := r.flights["slow.test"]
		return f != nil && f.waiters == callers-1
	})
	close(srv.release)
	wg.Wait()
	close(results)
	freshCount := 0
	for f := range results {
		if f {
			freshCount++
		}
	}
	if freshCount != 1 {
		t.Errorf("%d callers got fresh=true, want exactly 1", freshCount)
	}
	if a, aaaa := srv.count("", "A", "slow.test"), srv.count("", "AAAA", "slow.test"); a != 1 || aaaa != 1 {
		t.Errorf("server saw %d A and %d AAAA queries, want 1 each", a, aaaa)
	}
}

func TestAbandonedLeaderHandsOver(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	srv.set("slow.test", zone{a: []string{"192.0.2.1"}, ttl: 60, mode: modeHold})
	r := newTestResolver(t, Options{Timeout: 10 * time.Second}, srv)
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	leaderErr := make(chan error, 1)
	go func() {
		_, fresh, err := r.Resolve(leaderCtx, "slow.test")
		if fresh {
			err = fmt.Errorf("cancelled leader got fresh=true (err %v)", err)
		}
		leaderErr <- err
	}()
	testwait.Until(t, 5*time.Second, "the leader's query", func() bool { return srv.count("udp", "A", "slow.test") == 1 })
	type result struct {
		fresh bool
		err   error
	}
	waiter := make(chan result, 1)
	go func() {
		_, fresh, err := r.Resolve(context.Background(), "slow.test")
		waiter <- result{fresh, err}
	}()
	testwait.Until(t, 5*time.Second, "the waiter to join", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		f := r.flights["slow.test"]
		return f != nil && f.waiters == 1
	})
	cancelLeader()
	if err := <-leaderErr; err == nil || leaderCtx.Err() == nil {
		t.Fatalf("leader: err = %v, want the context error", err)
	}
	testwait.Until(t, 5*time.Second, "the waiter's own query", func() bool { return srv.count("udp", "A", "slow.test") == 2 })
	close(srv.release)
	got := <-waiter
	if got.err != nil || !got.fresh {
		t.Fatalf("waiter: fresh=%v err=%v; want it to take over the lookup (fresh=true)", got.fresh, got.err)
	}
}

func TestWaiterContextEnds(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	srv.set("slow.test", zone{a: []string{"192.0.2.1"}, ttl: 60, mode: modeHold})
	r := newTestResolver(t, Options{Timeout: 10 * time.Second}, srv)
	leader := make(chan bool, 1)
	go func() {
		_, fresh, err := r.Resolve(context.Background(), "slow.test")
		leader <- fresh && err == nil
	}()
	testwait.Until(t, 5*time.Second, "the leader's query", func() bool { return srv.count("udp", "A", "slow.test") == 1 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, fresh, err := r.Resolve(ctx, "slow.test"); err == nil || fresh {
		t.Fatalf("cancelled waiter: fresh=%v err=%v; want the context error", fresh, err)
	}
	close(srv.release)
	if !<-leader {
		t.Fatal("leader did not get its fresh answer")
	}
}

func TestBoundedCache(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	for _, h := range []string{"a.test", "b.test", "c.test"} {
		srv.set(h, zone{a: []string{"192.0.2.1"}, ttl: 3600})
	}
	r := newTestResolver(t, Options{MaxEntries: 2, Now: newClock().now}, srv)
	ctx := context.Background()
	resolve := func(host string) bool {
		t.Helper()
		_, fresh, err := r.Resolve(ctx, host)
		if err != nil {
			t.Fatalf("Resolve %s: %v", host, err)
		}
		return fresh
	}
	resolve("a.test")
	resolve("b.test")
	if resolve("a.test") {
		t.Fatal("a.test should be cached")
	}
	resolve("c.test") // evicts b.test, the least recently used
	if r.cache.Len() != 2 {
		t.Fatalf("cache holds %d entries, want 2", r.cache.Len())
	}
	if resolve("a.test") {
		t.Error("a.test was evicted; want b.test (least recently used) evicted")
	}
	if !resolve("b.test") {
		t.Error("b.test still cached past MaxEntries")
	}
}

func TestFailuresNotCached(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	srv.set("fail.test", zone{rcode: 2})
	r := newTestResolver(t, Options{MinValidity: time.Hour, Now: newClock().now}, srv)
	for i := range 2 {
		if _, fresh, err := r.Resolve(context.Background(), "nx.test"); err == nil || !fresh {
			t.Fatalf("nx.test lookup %d: fresh=%v err=%v", i, fresh, err)
		}
		if _, fresh, err := r.Resolve(context.Background(), "fail.test"); err == nil || !fresh {
			t.Fatalf("fail.test lookup %d: fresh=%v err=%v", i, fresh, err)
		}
	}
	if n := srv.count("udp", "A", "nx.test"); n != 2 {
		t.Errorf("nx.test A queries = %d, want 2", n)
	}
	if n := srv.count("udp", "A", "fail.test"); n != 2 {
		t.Errorf("fail.test A queries = %d, want 2", n)
	}
}
