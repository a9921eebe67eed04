package statebackup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/rdbsync"
)

// A one-server backup restores into a running server too (a Kubernetes
// Redis, say), with the same guarantees; and bad input is refused with
// its reason before any key is written.
func TestRestoreToOneServer(t *testing.T) {
	ctx := context.Background()
	e := newCrawlEnv(t, 40, 3)
	out := filepath.Join(t.TempDir(), "b")
	if _, err := Backup(ctx, e.options(out)); err != nil {
		t.Fatal(err)
	}
	target := embeddedtest.Redis(t)
	indexDir := filepath.Join(t.TempDir(), "index")

	// Bad input first: nothing may be written into the target.
	if err := os.MkdirAll(indexDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(indexDir, "OTHER"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated")
	if err := os.CopyFS(truncated, os.DirFS(out)); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(truncated, "redis", "redis-0.rdb"), 100); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    RestoreToOptions
		want string
	}{
		{"no target", RestoreToOptions{From: out}, "no target Redis"},
		{"no backup", RestoreToOptions{From: filepath.Join(t.TempDir(), "none"), Redis: target}, "manifest"},
		{"truncated snapshot", RestoreToOptions{From: truncated, Redis: target}, "redis/redis-0.rdb"},
		{"index directory in use", RestoreToOptions{From: out, Redis: target, IndexDir: indexDir}, "OTHER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RestoreTo(ctx, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("RestoreTo = %v, want an error mentioning %q", err, tc.want)
			}
			if n, _ := target.DBSize(ctx).Result(); n != 0 {
				t.Fatalf("%d keys written by a refused restore", n)
			}
		})
	}

	if err := os.Remove(filepath.Join(indexDir, "OTHER")); err != nil {
		t.Fatal(err)
	}
	rep, err := RestoreTo(ctx, RestoreToOptions{From: out, Redis: target, IndexDir: indexDir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Released != 3 || rep.CDXCounts["fc"] != 500 {
		t.Fatalf("report %+v", rep)
	}
	f, _ := frontier.New(target, "fc-npld", frontier.Options{})
	if st, err := f.Stats(ctx); err != nil || st.Paused || st.InFlight != 0 || st.Queued != 40 {
		t.Fatalf("restored frontier %+v, %v: want 40 queued, none in flight, not paused", st, err)
	}
	if _, err := RestoreTo(ctx, RestoreToOptions{From: out, Redis: target}); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("second restore: %v", err)
	}
}

// A crawl kept in another database than 0 (--redis-db) restores into the
// target client's database; a snapshot with keys in several databases is
// refused, before any key is written.
func TestRestoreToDatabases(t *testing.T) {
	ctx := context.Background()
	backup := func(t *testing.T, dbs ...int) string {
		t.Helper()
		r, _ := embeddedtest.RedisServer(t, t.TempDir())
		for _, db := range dbs {
			c := redis.NewClient(&redis.Options{Addr: r.Addr(), DB: db})
			t.Cleanup(func() { _ = c.Close() })
			for i := range 10 {
				if err := c.Set(ctx, fmt.Sprintf("k%d-%d", db, i), "v", 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
		}
		c := redis.NewClient(&redis.Options{Addr: r.Addr()})
		t.Cleanup(func() { _ = c.Close() })
		out := filepath.Join(t.TempDir(), "b")
		if _, err := Backup(ctx, BackupOptions{Out: out, Redis: c, Masters: []rdbsync.Options{{Addr: r.Addr()}}}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	r, _ := embeddedtest.RedisServer(t, t.TempDir())
	target := redis.NewClient(&redis.Options{Addr: r.Addr(), DB: 5})
	t.Cleanup(func() { _ = target.Close() })

	if _, err := RestoreTo(ctx, RestoreToOptions{From: backup(t, 0, 3), Redis: target}); err == nil || !strings.Contains(err.Error(), "databases [0 3]") {
		t.Fatalf("restore of keys in two databases: %v", err)
	}
	if n, _ := target.DBSize(ctx).Result(); n != 0 {
		t.Fatalf("%d keys written by a refused restore", n)
	}
	db3 := backup(t, 3)
	data := filepath.Join(t.TempDir(), "data")
	if _, err := Restore(ctx, RestoreOptions{From: db3, DataDir: data}); err == nil || !strings.Contains(err.Error(), "database 3") {
		t.Fatalf("restore of database 3 into a standalone data directory: %v", err)
	}
	rep, err := RestoreTo(ctx, RestoreToOptions{From: db3, Redis: target})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := target.Get(ctx, "k3-9").Result(); rep.Keys != 10 || err != nil || v != "v" {
		t.Fatalf("restored %d keys; k3-9 in the target's database: %q, %v", rep.Keys, v, err)
	}
}

func TestVersionOrder(t *testing.T) {
	for _, tc := range []struct {
		a, b  version
		older bool
	}{
		{version{7, 0}, version{7, 2}, true},
		{version{6, 2}, version{7, 0}, true},
		{version{7, 2}, version{7, 2}, false},
		{version{7, 4}, version{7, 2}, false},
		{version{8, 0}, version{7, 4}, false},
	} {
		if got := tc.a.older(tc.b); got != tc.older {
			t.Errorf("%s older than %s = %v", tc.a, tc.b, got)
		}
	}
}
