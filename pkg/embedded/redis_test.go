package embedded

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/testwait"

	"github.com/redis/go-redis/v9"
)

const redisBinary = "/usr/bin/redis-server"

func requireRedisServer(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(redisBinary); err != nil {
		t.Skipf("redis-server not installed at %s: %v", redisBinary, err)
	}
}

func startRedis(t *testing.T, o RedisOptions) *Redis {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := StartRedis(ctx, o)
	if err != nil {
		t.Fatalf("StartRedis: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func redisClient(t *testing.T, r *Redis) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRedisKinds(t *testing.T) {
	requireRedisServer(t)
	tests := []struct {
		name       string
		o          RedisOptions
		kind       string
		persistent bool
	}{
		{"redis-server from PATH", RedisOptions{}, KindRedisServer, true},
		{"redis-server by path", RedisOptions{Binary: redisBinary}, KindRedisServer, true},
		{"forced miniredis", RedisOptions{Binary: redisBinary, ForceMiniredis: true}, KindMiniredis, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.DataDir = t.TempDir()
			r := startRedis(t, tc.o)
			if r.Kind() != tc.kind || r.Persistent() != tc.persistent {
				t.Fatalf("Kind()=%q Persistent()=%v, want %q %v", r.Kind(), r.Persistent(), tc.kind, tc.persistent)
			}
			host, _, err := net.SplitHostPort(r.Addr())
			if err != nil || host != "127.0.0.1" {
				t.Errorf("Addr() = %q, want 127.0.0.1:<port>", r.Addr())
			}
			if (r.PID() != 0) != (tc.kind == KindRedisServer) {
				t.Errorf("PID() = %d for kind %s", r.PID(), tc.kind)
			}
			ctx := context.Background()
			c := redisClient(t, r)
			// A Lua script, because the frontier runs everything through them.
			n, err := c.Eval(ctx, "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCR', KEYS[2])",
				[]string{"k", "n"}, "v").Int()
			if err != nil || n != 1 {
				t.Fatalf("eval = %d, %v", n, err)
			}
			if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
				t.Fatalf("GET k = %q, %v", got, err)
			}
			if err := r.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			select {
			case <-r.Done():
			default:
				t.Error("Done() not closed after Close")
			}
			if err := r.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

func TestRedisServerAOFPersistsAcrossRestart(t *testing.T) {
	requireRedisServer(t)
	dir := t.TempDir()
	ctx := context.Background()

	r := startRedis(t, RedisOptions{DataDir: dir})
	c := redisClient(t, r)
	if err := c.Set(ctx, "frontier:q", "http://example.com/", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.ZAdd(ctx, "frontier:ready", redis.Z{Score: 42, Member: "example.com"}).Err(); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "appendonlydir")); err != nil {
		t.Errorf("no append-only dir after shutdown: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err == nil {
		t.Error("dump.rdb written; RDB snapshots should be off")
	}

	r2 := startRedis(t, RedisOptions{DataDir: dir})
	c2 := redisClient(t, r2)
	if got, err := c2.Get(ctx, "frontier:q").Result(); err != nil || got != "http://example.com/" {
		t.Errorf("GET after restart = %q, %v", got, err)
	}
	if s, err := c2.ZScore(ctx, "frontier:ready", "example.com").Result(); err != nil || s != 42 {
		t.Errorf("ZSCORE after restart = %v, %v", s, err)
	}
}

// TestRedisServerSmallHashListpacks checks that a hash past 128 fields is a
// hash table: the frontier's per-host URI index is read and written by
// field, and a bigger listpack is scanned linearly (docs/frontier.md).
func TestRedisServerSmallHashListpacks(t *testing.T) {
	requireRedisServer(t)
	c := redisClient(t, startRedis(t, RedisOptions{DataDir: t.TempDir()}))
	ctx := context.Background()
	for i := range 129 {
		if err := c.HSet(ctx, "u:host", fmt.Sprintf("uk%03d", i), "q1").Err(); err != nil {
			t.Fatal(err)
		}
		enc, err := c.ObjectEncoding(ctx, "u:host").Result()
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "listpack", false: "hashtable"}[i < 128]; enc != want {
			t.Fatalf("encoding with %d fields = %s, want %s", i+1, enc, want)
		}
	}
}

func TestRedisServerNoOrphanAfterClose(t *testing.T) {
	requireRedisServer(t)
	r := startRedis(t, RedisOptions{DataDir: t.TempDir()})
	pid := r.PID()
	if !processAlive(pid) {
		t.Fatalf("redis-server pid %d not running after start", pid)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pid %d still exists after Close (kill 0: %v)", pid, err)
	}
}

func TestRedisServerDiesWithParent(t *testing.T) {
	requireRedisServer(t)
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	helper.Stderr = &stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = helper.Process.Kill()
		_ = helper.Wait()
		t.Fatalf("helper gave no pid: %v; stderr: %s", err, stderr.String())
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || !processAlive(pid) {
		t.Fatalf("helper printed %q; redis-server not running", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })

	// SIGKILL: the parent gets no chance to clean up, as in a crash.
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	testwait.Until(t, 10*time.Second, "redis-server to die with its parent", func() bool { return !processAlive(pid) })

	// The directory is usable again: lock released, pid file cleaned up.
	startRedis(t, RedisOptions{DataDir: dir})
}

func TestRedisServerCrashClosesDone(t *testing.T) {
	requireRedisServer(t)
	log, logs := testLogger()
	r := startRedis(t, RedisOptions{DataDir: t.TempDir(), Logger: log})
	if err := syscall.Kill(r.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done() not closed after redis-server was killed")
	}
	if !strings.Contains(logs.String(), "exited unexpectedly") {
		t.Errorf("crash not logged; logs: %s", logs)
	}
	if err := r.Close(); err == nil || !strings.Contains(err.Error(), "exited before Close") {
		t.Errorf("Close after crash = %v, want an exit error", err)
	}
}

func TestRedisStaleServerDetected(t *testing.T) {
	requireRedisServer(t)
	dir := t.TempDir()
	// An orphan from a crashed run: a redis-server on this data dir that no
	// Trawler process owns.
	addr, err := reservePort("127.0.0.1", "0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(addr)
	orphan := exec.Command(redisBinary, "--bind", "127.0.0.1", "--port", port, "--dir", ".", "--save", "",
		"--pidfile", redisPIDFile)
	orphan.Dir = dir
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = orphan.Process.Kill()
		_ = orphan.Wait()
	})
	testwait.Until(t, 10*time.Second, "orphan pid file", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, redisPIDFile))
		return err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(orphan.Process.Pid)
	})

	_, err = StartRedis(context.Background(), RedisOptions{DataDir: dir})
	if !errors.Is(err, ErrStaleRedis) || !strings.Contains(err.Error(), strconv.Itoa(orphan.Process.Pid)) {
		t.Fatalf("err = %v, want ErrStaleRedis naming pid %d", err, orphan.Process.Pid)
	}

	// Once the orphan is gone its leftover pid file must not block a start.
	if err := orphan.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = orphan.Wait()
	if err := os.WriteFile(filepath.Join(dir, redisPIDFile), []byte(strconv.Itoa(orphan.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	startRedis(t, RedisOptions{DataDir: dir})
}

func TestRedisStartErrors(t *testing.T) {
	requireRedisServer(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	locked := t.TempDir()
	startRedis(t, RedisOptions{DataDir: locked})

	tests := []struct {
		name    string
		o       RedisOptions
		want    string
		wantErr error
	}{
		{"missing binary", RedisOptions{Binary: "/nonexistent/redis-server"}, `"/nonexistent/redis-server"`, os.ErrNotExist},
		{"binary that is not redis", RedisOptions{Binary: "/bin/false", StartTimeout: 10 * time.Second}, "exited before answering PING", nil},
		{"no data dir", RedisOptions{DataDir: "-"}, "needs a data directory", nil},
		{"routable address", RedisOptions{Addr: "0.0.0.0:6379"}, "loopback", nil},
		{"port in use", RedisOptions{Addr: busy.Addr().String()}, "address already in use", nil},
		{"data dir in use", RedisOptions{DataDir: locked}, locked, ErrDataDirInUse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.o.DataDir {
			case "":
				tc.o.DataDir = t.TempDir()
			case "-":
				tc.o.DataDir = ""
			}
			r, err := StartRedis(context.Background(), tc.o)
			if err == nil {
				_ = r.Close()
				t.Fatalf("StartRedis(%+v) succeeded, want error containing %q", tc.o, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %q is not %v", err, tc.wantErr)
			}
		})
	}
}

func TestRedisFallsBackToMiniredis(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no redis-server anywhere
	log, logs := testLogger()
	r := startRedis(t, RedisOptions{DataDir: t.TempDir(), Logger: log})
	if r.Kind() != KindMiniredis || r.Persistent() {
		t.Fatalf("Kind()=%q Persistent()=%v, want miniredis, not persistent", r.Kind(), r.Persistent())
	}
	if out := logs.String(); !strings.Contains(out, "level=WARN") || !strings.Contains(out, "slower") {
		t.Errorf("no warning about miniredis; logs: %s", out)
	}
}

func TestMiniredisTTLsExpireInRealTime(t *testing.T) {
	r := startRedis(t, RedisOptions{ForceMiniredis: true})
	c := redisClient(t, r)
	ctx := context.Background()
	if err := c.Set(ctx, "lease", "worker-1", 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 5*time.Second, "lease to expire", func() bool {
		n, err := c.Exists(ctx, "lease").Result()
		return err == nil && n == 0
	})
}
