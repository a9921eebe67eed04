package redisconn

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/testlog"
)

// A redis-server loading its data answers LOADING for as long as that
// takes, past the time Open waits for a server that does not answer at
// all; Open waits for it, logs its progress, and the data is all there.
func TestOpenWaitsForLoadingServer(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	const keys = 10000
	dir := t.TempDir()
	ctx := context.Background()
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	start := func(extra ...string) *exec.Cmd {
		t.Helper()
		args := append([]string{"--bind", "127.0.0.1", "--port", port, "--dir", dir, "--appendonly", "no",
			"--save", "", "--logfile", ""}, extra...)
		cmd := exec.Command("redis-server", args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	// A dump of keys, made by a first server.
	first := start()
	fill, err := Open(ctx, Config{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	pipe := fill.Pipeline()
	for i := range keys {
		pipe.Set(ctx, fmt.Sprintf("k%05d", i), "v", 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := fill.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	_ = fill.Close()
	_ = first.Process.Kill()
	_ = first.Wait()

	// The second server takes about 100 µs a key to load it: a second or
	// more of LOADING, several times the stall bound below. It answers
	// (LOADING) every KiB it loads; by default only every 2 MB, and until
	// then a client's PING just waits.
	start("--key-load-delay", "100", "--loading-process-events-interval-bytes", "1024")
	const stall = 300 * time.Millisecond
	log, buf := testlog.New(slog.LevelInfo)
	began := time.Now()
	c, err := Open(ctx, Config{Addr: addr}, withStall(stall), WithLogger(log))
	if err != nil {
		t.Fatalf("Open while the server loads: %v; log:\n%s", err, buf)
	}
	defer func() { _ = c.Close() }()
	took := time.Since(began)
	if n, err := c.DBSize(ctx).Result(); err != nil || n != keys {
		t.Errorf("DBSIZE = %d, %v; want %d", n, err, keys)
	}
	if !strings.Contains(buf.String(), "waiting for redis to load its data") || !strings.Contains(buf.String(), "loading_loaded_perc=") {
		t.Errorf("took %s; the wait was not logged with its progress:\n%s", took, buf)
	}
	if took < 2*stall {
		t.Errorf("Open took %s: the loading did not outlast the stall bound, so the test shows nothing", took)
	}
}

// Without a sign of life the stall bound ends the wait, with no deadline
// on the context.
func TestOpenStallsOnSilence(t *testing.T) {
	began := time.Now()
	c, err := Open(context.Background(), Config{Addr: freeAddr(t)}, withStall(200*time.Millisecond))
	if err == nil {
		_ = c.Close()
		t.Fatal("Open succeeded with nobody listening")
	}
	if !strings.Contains(err.Error(), "not answering after") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("error = %v", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("gave up after %s, want about the 200ms stall", took)
	}
}
