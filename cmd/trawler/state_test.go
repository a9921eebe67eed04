package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/services/standalone"
)

// state backup, restore and rebuild-recent, wired as an operator runs
// them: against a real redis-server, broker and index API.
func TestStateCommands(t *testing.T) {
	ctx := context.Background()
	r, rdb := embeddedtest.RedisServer(t, t.TempDir())
	rdb.Set(ctx, "trawler:ledger:x", "1", 0)
	kcfg, _ := embeddedtest.Kafka(t, 1)
	ix, err := cdxindex.Open(filepath.Join(t.TempDir(), "index"), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	var lines []cdx.Line
	for i := range 20 {
		lines = append(lines, cdx.Line{Original: fmt.Sprintf("http://example.org/%d", i), Timestamp: "20261125101010",
			Mimetype: "text/html", Status: "200", Digest: "AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH", Length: 10, Offset: int64(i) * 10, Filename: "x.warc.gz"})
	}
	if err := ix.Put(ctx, "fc", lines); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ix.Handler(cdxindex.HandlerOptions{Tokens: admin.Tokens{Operator: admin.StaticToken("tok")}}))
	t.Cleanup(srv.Close)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "backup")
	code, stdout, stderr := runCLI(t, "state", "backup", "--out", out, "--redis", r.Addr(), "--kafka", strings.Join(kcfg.Brokers, ","),
		"--cdx", srv.URL, "--admin-token-file", tokenFile, "--log-level", "warn")
	if code != 0 || !strings.Contains(stdout, "drained: true") {
		t.Fatalf("backup: %d\n%s\n%s", code, stdout, stderr)
	}
	t.Log(stdout)
	first := stdout
	// Both frontiers of the frequent crawl were paused and resumed.
	for _, name := range []string{"fc-npld", "fc-bypm"} {
		f, _ := frontier.New(rdb, name, frontier.Options{})
		if st, err := f.Stats(ctx); err != nil || st.Paused {
			t.Fatalf("%s after the backup: %+v %v", name, st, err)
		}
	}

	// The same backup with the addresses from a running standalone's
	// standalone.json (this process stands in for it), and none without one.
	sdir := t.TempDir()
	ep, _ := json.Marshal(standalone.Endpoints{PID: os.Getpid(), Redis: r.Addr(), Kafka: kcfg.Brokers,
		Admin: "127.0.0.1:1", CDX: strings.TrimPrefix(srv.URL, "http://")})
	if err := os.WriteFile(filepath.Join(sdir, standalone.EndpointsFile), ep, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, "state", "backup", "--out", filepath.Join(t.TempDir(), "b2"), "--standalone", sdir,
		"--admin-token-file", tokenFile, "--log-level", "warn")
	if code != 0 || !strings.Contains(stdout, "drained: true") || fileCount(stdout) != fileCount(first) {
		t.Fatalf("backup --standalone: %d, %d files where the first had %d (the index missing?)\n%s\n%s",
			code, fileCount(stdout), fileCount(first), stdout, stderr)
	}
	if code, _, stderr = runCLI(t, "state", "backup", "--out", filepath.Join(t.TempDir(), "b3"), "--standalone", t.TempDir()); code != 1 || !strings.Contains(stderr, "no standalone running") {
		t.Fatalf("backup --standalone of a directory without one: %d %s", code, stderr)
	}

	data := filepath.Join(t.TempDir(), "data")
	code, stdout, stderr = runCLI(t, "state", "restore", "--from", out, "--data", data, "--log-level", "warn")
	if code != 0 || !strings.Contains(stdout, "cdx entries (fc):    20") {
		t.Fatalf("restore: %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr = runCLI(t, "state", "restore", "--from", out, "--data", data); code != 1 || !strings.Contains(stderr, "not empty") {
		t.Fatalf("restore over a data directory: %d %s", code, stderr)
	}

	// Into a running Redis, the index into the cdxwriter's directory.
	r3, rdb3 := embeddedtest.RedisServer(t, t.TempDir())
	index := filepath.Join(t.TempDir(), "cdx", "index")
	code, stdout, stderr = runCLI(t, "state", "restore", "--from", out, "--redis", r3.Addr(), "--index", index, "--log-level", "warn")
	if code != 0 || !strings.Contains(stdout, "into "+r3.Addr()) || !strings.Contains(stdout, "cdx entries (fc):    20") {
		t.Fatalf("restore --redis: %d\n%s\n%s", code, stdout, stderr)
	}
	if n, _ := rdb3.DBSize(ctx).Result(); n == 0 {
		t.Fatal("restore --redis wrote no keys")
	}
	if code, _, stderr = runCLI(t, "state", "restore", "--from", out, "--redis", r3.Addr()); code != 1 || !strings.Contains(stderr, "not empty") {
		t.Fatalf("restore into a Redis holding keys: %d %s", code, stderr)
	}
	for _, args := range [][]string{
		{"--from", out},
		{"--from", out, "--data", t.TempDir(), "--redis", r3.Addr()},
		{"--from", out, "--data", t.TempDir(), "--index", index},
		{"--data", t.TempDir()},
	} {
		if code, _, stderr := runCLI(t, append([]string{"state", "restore"}, args...)...); code != 2 || !strings.Contains(stderr, "state restore") {
			t.Errorf("state restore %q: %d %s, want a usage error", args, code, stderr)
		}
	}

	// The recently-crawled DB, lost, comes back from the restored index.
	r2, rdb2 := embeddedtest.RedisServer(t, t.TempDir())
	code, stdout, stderr = runCLI(t, "state", "rebuild-recent", "--index", filepath.Join(data, "cdx", "index"), "--redis", r2.Addr(), "--log-level", "warn")
	if code != 0 || !strings.Contains(stdout, "20 updates written") {
		t.Fatalf("rebuild-recent: %d\n%s\n%s", code, stdout, stderr)
	}
	db, _ := recentdb.New(rdb2, recentdb.Options{Crawl: "fc", Stream: "npld"})
	es, err := db.Lookup(ctx, []string{"http://example.org/7"})
	if err != nil || es[0].Capture == nil || es[0].Capture.Filename != "x.warc.gz" || es[0].Capture.Offset != 70 {
		t.Fatalf("rebuilt entry %+v %v", es, err)
	}
	if code, _, stderr = runCLI(t, "state", "rebuild-recent", "--redis", r2.Addr()); code != 2 || !strings.Contains(stderr, "exactly one of --index and --warcs") {
		t.Fatalf("rebuild-recent without a source: %d %s", code, stderr)
	}
}

// fileCount reads "N files" from state backup's report (-1: not there).
func fileCount(report string) int {
	f := strings.Fields(report)
	for i := 1; i < len(f); i++ {
		if strings.HasPrefix(f[i], "files") {
			if n, err := strconv.Atoi(f[i-1]); err == nil {
				return n
			}
		}
	}
	return -1
}
