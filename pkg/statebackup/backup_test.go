package statebackup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/internal/refusedport"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/rdbsync"
)

// A backup of a frontier with URIs in flight restores into a data
// directory whose redis-server starts from the append-only file, with the
// backup's pause undone, the in-flight URIs queued again and the index
// whole; what was written after the backup is not in it.
func TestBackupRestoreRoundTrip(t *testing.T) {
	ctx := context.Background()
	e := newCrawlEnv(t, 40, 3)
	out := filepath.Join(t.TempDir(), "b1")
	m, err := Backup(ctx, e.options(out))
	if err != nil {
		t.Fatal(err)
	}
	if m.Quiesce.Drained || m.Quiesce.InFlight != 3 || m.Quiesce.Queued != 37 || len(m.Paused) != 1 {
		t.Fatalf("quiesce %+v paused %v: want 3 in flight (leases held), 37 queued, fc-npld paused by the backup", m.Quiesce, m.Paused)
	}
	if m.CDX == nil || m.CDX.Counts["fc"] != 500 || len(m.Redis) != 1 || m.Redis[0].RDBVersion == 0 || m.Redis[0].RedisVersion == "" {
		t.Fatalf("manifest %+v", m)
	}
	if st, _ := e.f.Stats(ctx); st.Paused {
		t.Fatal("the backup left the frontier paused")
	}
	if _, err := os.Stat(out + ".partial"); !os.IsNotExist(err) {
		t.Fatalf("partial directory left: %v", err)
	}
	if err := Verify(out, m); err != nil {
		t.Fatal(err)
	}
	e.rdb.Set(ctx, "after-backup", "1", 0)

	data := filepath.Join(t.TempDir(), "restored")
	rep, err := Restore(ctx, RestoreOptions{From: out, DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Released != 3 || rep.CDXCounts["fc"] != 500 || rep.Keys == 0 {
		t.Fatalf("report %+v", rep)
	}
	if _, err := os.Stat(filepath.Join(data, "redis", "dump.rdb")); !os.IsNotExist(err) {
		t.Fatalf("dump.rdb left beside the AOF: %v", err)
	}
	// The embedded server (AOF on) starts from what the restore wrote.
	_, rdb := startRedisServer(t, filepath.Join(data, "redis"))
	f, _ := frontier.New(rdb, "fc-npld", frontier.Options{})
	st, err := f.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Paused || st.InFlight != 0 || st.Queued != 40 {
		t.Fatalf("restored frontier %+v: want 40 queued, none in flight, not paused", st)
	}
	if n, _ := rdb.Exists(ctx, "after-backup").Result(); n != 0 {
		t.Fatal("a key written after the backup is in the restore")
	}
	ix, err := cdxindex.Open(filepath.Join(data, "cdx", "index"), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if n, _ := ix.Count("fc"); n != 500 {
		t.Fatalf("restored index has %d entries", n)
	}
}

// Bad input: each failure names the file or server and the reason, and
// leaves nothing that looks like a backup or a data directory.
func TestBackupRestoreBadInput(t *testing.T) {
	ctx := context.Background()
	e := newCrawlEnv(t, 10, 0)
	good := filepath.Join(t.TempDir(), "good")
	m, err := Backup(ctx, e.options(good))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Quiesce.Drained {
		t.Fatalf("nothing in flight and no lag, yet not drained: %+v", m.Quiesce)
	}
	rdbFile := filepath.Join(good, "redis", "redis-0.rdb")
	copyBackup := func(t *testing.T) string {
		t.Helper()
		dst := filepath.Join(t.TempDir(), "copy")
		if err := os.CopyFS(dst, os.DirFS(good)); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	restoreFails := func(t *testing.T, from string, want ...string) {
		t.Helper()
		data := filepath.Join(t.TempDir(), "data")
		_, err := Restore(ctx, RestoreOptions{From: from, DataDir: data})
		if err == nil {
			t.Fatal("restore succeeded")
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("error %q does not mention %q", err, w)
			}
		}
		for _, d := range []string{data, data + ".restoring"} {
			if _, serr := os.Stat(d); !os.IsNotExist(serr) {
				t.Fatalf("%s left after a failed restore (%v)", d, err)
			}
		}
		t.Logf("refused: %v", err)
	}

	t.Run("truncated rdb", func(t *testing.T) {
		b := copyBackup(t)
		st, _ := os.Stat(rdbFile)
		if err := os.Truncate(filepath.Join(b, "redis", "redis-0.rdb"), st.Size()/2); err != nil {
			t.Fatal(err)
		}
		restoreFails(t, b, "redis/redis-0.rdb", "truncated")
	})
	t.Run("checksum mismatch", func(t *testing.T) {
		b := copyBackup(t)
		p := filepath.Join(b, "redis", "redis-0.rdb")
		raw, _ := os.ReadFile(p)
		raw[len(raw)/2] ^= 0xff
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		restoreFails(t, b, "redis/redis-0.rdb", "sha256")
	})
	t.Run("corrupt rdb with a matching manifest", func(t *testing.T) {
		// A snapshot that was already damaged when the manifest was
		// written: the RDB's own checksum catches it.
		b := copyBackup(t)
		p := filepath.Join(b, "redis", "redis-0.rdb")
		raw, _ := os.ReadFile(p)
		raw[len(raw)/2] ^= 0xff
		_ = os.WriteFile(p, raw, 0o644)
		_ = os.Remove(filepath.Join(b, ManifestName))
		mm := *m
		if err := writeManifest(b, &mm); err != nil {
			t.Fatal(err)
		}
		restoreFails(t, b, "redis-0.rdb", "checksum")
	})
	t.Run("missing cdx file", func(t *testing.T) {
		b := copyBackup(t)
		ents, _ := os.ReadDir(filepath.Join(b, "cdx", "index"))
		_ = os.Remove(filepath.Join(b, "cdx", "index", ents[0].Name()))
		restoreFails(t, b, "cdx/index/"+ents[0].Name(), "missing")
	})
	t.Run("unfinished backup", func(t *testing.T) {
		b := copyBackup(t)
		_ = os.Remove(filepath.Join(b, ManifestName))
		restoreFails(t, b, ManifestName)
	})
	t.Run("redis-server fails to load", func(t *testing.T) {
		// A failure after the checks (here a server that exits at once)
		// removes the half-made directory too.
		data := filepath.Join(t.TempDir(), "data")
		_, err := Restore(ctx, RestoreOptions{From: good, DataDir: data, RedisServer: "false"})
		if err == nil || !strings.Contains(err.Error(), "redis/redis-0.rdb") || !strings.Contains(err.Error(), "exited while loading") {
			t.Fatalf("restore with a failing redis-server: %v", err)
		}
		for _, d := range []string{data, data + ".restoring"} {
			if _, serr := os.Stat(d); !os.IsNotExist(serr) {
				t.Fatalf("%s left after a failed restore", d)
			}
		}
		t.Logf("refused: %v", err)
	})
	t.Run("non-empty target", func(t *testing.T) {
		data := t.TempDir()
		if err := os.WriteFile(filepath.Join(data, "LOCK"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Restore(ctx, RestoreOptions{From: good, DataDir: data})
		if !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), data) {
			t.Fatalf("restore into a used directory: %v", err)
		}
		if ents, _ := os.ReadDir(data); len(ents) != 1 {
			t.Fatalf("the target was changed: %v", ents)
		}
	})
	backupFails := func(t *testing.T, o BackupOptions, want ...string) {
		t.Helper()
		_, err := Backup(ctx, o)
		if err == nil {
			t.Fatal("backup succeeded")
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("error %q does not mention %q", err, w)
			}
		}
		for _, d := range []string{o.Out, o.Out + ".partial"} {
			if _, serr := os.Stat(d); !os.IsNotExist(serr) {
				t.Fatalf("%s left after a failed backup", d)
			}
		}
		if st, _ := e.f.Stats(ctx); st.Paused {
			t.Fatal("a failed backup left the frontier paused")
		}
		t.Logf("refused: %v", err)
	}
	t.Run("unreachable redis", func(t *testing.T) {
		dead := "127.0.0.1:" + strconv.Itoa(refusedport.Port(t))
		o := e.options(filepath.Join(t.TempDir(), "b"))
		o.Masters = []rdbsync.Options{{Addr: dead}}
		backupFails(t, o, dead, "connect")
	})
	t.Run("redis refuses sync", func(t *testing.T) {
		if err := e.rdb.Do(ctx, "ACL", "SETUSER", "nosync", "on", ">pw", "~*", "+@all", "-psync", "-sync").Err(); err != nil {
			t.Fatal(err)
		}
		o := e.options(filepath.Join(t.TempDir(), "b"))
		o.Masters = []rdbsync.Options{{Addr: e.redisAddr, Username: "nosync", Password: "pw"}}
		backupFails(t, o, e.redisAddr, "PSYNC", "refused")
	})
	t.Run("cdx checkpoint refused", func(t *testing.T) {
		o := e.options(filepath.Join(t.TempDir(), "b"))
		o.CDXToken = "wrong"
		backupFails(t, o, "cdx checkpoint", "401")
	})
	t.Run("existing output", func(t *testing.T) {
		_, err := Backup(ctx, e.options(good))
		if err == nil || !strings.Contains(err.Error(), "exists") {
			t.Fatalf("backup over a backup: %v", err)
		}
		if err := Verify(good, m); err != nil {
			t.Fatalf("the existing backup was changed: %v", err)
		}
	})
}
