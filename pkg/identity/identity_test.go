package identity

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/embedded"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

func testOptions() Options {
	return Options{Scope: "s", Kind: "tester", Flag: "--tester-id", TTL: time.Second, Logger: slog.New(slog.DiscardHandler)}
}

// Slots are taken lowest first; a named identity a live holder has is
// refused, one a janitor has is waited for; a released one is free again.
func TestNamedAndSlot(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	o := testOptions()
	var held []*Lease
	t.Cleanup(func() {
		for _, l := range held {
			_ = l.Release()
		}
	})
	for _, want := range []string{"x0", "x1"} {
		id, l, err := Slot(ctx, rdb, o, "x")
		if err != nil || id != want {
			t.Fatalf("slot: %s, %v; want %s", id, err, want)
		}
		held = append(held, l)
	}
	if _, err := Named(ctx, rdb, o, "x1"); err == nil || !strings.Contains(err.Error(), "give this tester another --tester-id") {
		t.Fatalf("live identity: %v, want a refusal", err)
	}
	if _, err := Named(ctx, rdb, o, "a/b"); err == nil {
		t.Fatal("an invalid identity was leased")
	}
	jan, err := Try(ctx, rdb, Key("s", "x7"), KindJanitor, o.TTL, nil)
	if err != nil || jan == nil {
		t.Fatalf("janitor lease: %v %v", jan, err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		time.Sleep(200 * time.Millisecond) // the janitor's work
		_ = jan.Release()
	})
	l, err := Named(ctx, rdb, o, "x7")
	wg.Wait()
	if err != nil {
		t.Fatalf("identity held by a janitor: %v, want to wait for it", err)
	}
	held = append(held, l)
	if err := held[0].Release(); err != nil {
		t.Fatal(err)
	}
	if id, l, err := Slot(ctx, rdb, o, "x"); err != nil || id != "x0" {
		t.Fatalf("after release: %s %v", id, err)
	} else {
		held[0] = l
	}
	var none *Lease
	if none.Lost() != nil || none.Release() != nil {
		t.Fatal("a nil lease is not an unleased identity")
	}
}

// A lease taken over is reported lost, and its release leaves the new
// holder's value.
func TestLost(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	l, err := Try(ctx, rdb, "k", "tester", 300*time.Millisecond, nil)
	if err != nil || l == nil {
		t.Fatal(l, err)
	}
	if err := rdb.Set(ctx, "k", "someone else", 0).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("lease takeover not noticed")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if v, _ := rdb.Get(ctx, "k").Result(); v != "someone else" {
		t.Fatalf("release deleted another holder's lease: %q", v)
	}
}

// Sweep recovers each dead identity once across directories, under its
// janitor lease, and skips its own, live and invalid ones.
func TestSweep(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	o := testOptions()
	dirs := []string{t.TempDir(), t.TempDir()}
	for i, host := range []string{"me", "live", "dead", "dead", "_bad"} {
		name := "P-20240101000000000-0000" + string(rune('1'+i)) + "-" + host + ".warc.gz.open"
		if err := os.WriteFile(filepath.Join(dirs[i%2], name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	live, err := Named(ctx, rdb, o, "live")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Release() })
	var got []string
	n, err := Sweep(ctx, rdb, o, dirs, "me", func(ctx context.Context, id string) (int, error) {
		v, err := rdb.Get(ctx, Key("s", id)).Result()
		if err != nil || !strings.HasPrefix(v, KindJanitor+" ") {
			t.Errorf("recovering %s without its janitor lease: %q, %v", id, v, err)
		}
		got = append(got, id)
		return 2, nil
	})
	if err != nil || n != 2 || !slices.Equal(got, []string{"dead"}) {
		t.Fatalf("sweep: %d, %v, recovered %v; want 2 files of [dead]", n, err, got)
	}
	if k, _ := rdb.Exists(ctx, Key("s", "dead")).Result(); k != 0 {
		t.Error("the janitor kept the dead identity's lease")
	}
}

// A process starting just as Redis restarts leases its identity once
// Redis serves again, rather than exiting: a SET that met a refused
// connection never ran.
func TestLeaseWaitsForRedisBack(t *testing.T) {
	if _, err := os.Stat("/usr/bin/redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	type result struct {
		id  string
		l   *Lease
		err error
	}
	done := make(chan result, 1)
	go func() {
		id, l, err := Slot(context.Background(), rdb, testOptions(), "x")
		done <- result{id, l, err}
	}()
	// Nothing listens yet: the lease waits.
	select {
	case r := <-done:
		t.Fatalf("Slot returned with Redis down: %v", r.err)
	case <-time.After(2 * time.Second): // longer than go-redis's own retries (about a second)
	}
	srv, err := embedded.StartRedis(context.Background(), embedded.RedisOptions{DataDir: t.TempDir(), Addr: addr, Binary: "/usr/bin/redis-server"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	r := <-done
	if r.err != nil || r.id != "x0" {
		t.Fatalf("Slot after Redis came back: %s, %v", r.id, r.err)
	}
	_ = r.l.Release()
}
