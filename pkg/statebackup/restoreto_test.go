package statebackup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
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
