package statebackup

import (
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
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/redisconf"
)

// loadRedis turns dir/dump.rdb into the append-only file the embedded
// redis-server (pkg/embedded: appendonly yes, no RDB snapshots) starts
// from. A redis-server with AOF on ignores dump.rdb, so a private server
// loads the snapshot with AOF off, undoes the backup's own pause, returns
// the leased URIs to their queues, and then switches AOF on, which writes
// the whole dataset as the AOF's base; the server stops once that is done
// and dump.rdb is removed. Loading is also the deepest check of the
// snapshot: a server that cannot read it says why.
func loadRedis(ctx context.Context, binary, dir string, m *Manifest) (keys, released int64, err error) {
	srv, err := startPrivate(ctx, binary, dir)
	if err != nil {
		return 0, 0, err
	}
	defer srv.stop()
	rdb := srv.rdb
	// The standalone's embedded server keeps the crawl in database 0.
	if src, err := snapshotDB(ctx, rdb); err != nil {
		return 0, 0, err
	} else if src != rdb {
		_ = src.Close()
		return 0, 0, fmt.Errorf("the snapshot's keys are in database %d, a standalone's in 0: restore it into a running server with --redis and --redis-db", src.Options().DB)
	}
	if keys, err = rdb.DBSize(ctx).Result(); err != nil {
		return 0, 0, err
	}
	if released, err = settleFrontiers(ctx, rdb, m); err != nil {
		return 0, 0, err
	}
	if err := rdb.ConfigSet(ctx, "appendonly", "yes").Err(); err != nil {
		return 0, 0, fmt.Errorf("switch AOF on: %w", err)
	}
	if err := waitAOF(ctx, rdb); err != nil {
		return 0, 0, err
	}
	// SHUTDOWN with AOF on fsyncs it; the server then exits.
	_ = rdb.Shutdown(ctx).Err()
	select {
	case <-srv.exited:
		srv.exited <- nil // for the deferred stop
	case <-time.After(30 * time.Second):
		return 0, 0, errors.New("redis-server did not stop after SHUTDOWN")
	}
	if _, err := os.Stat(filepath.Join(dir, "appendonlydir")); err != nil {
		return 0, 0, fmt.Errorf("no append-only file written: %w", err)
	}
	for _, f := range []string{"dump.rdb", "restore.log"} {
		_ = os.Remove(filepath.Join(dir, f))
	}
	return keys, released, nil
}

// privateServer is a redis-server of the restore's own, on a loopback
// port, serving dir/dump.rdb with AOF off.
type privateServer struct {
	rdb    *redis.Client
	exited chan error
	stop   func()
}

// startPrivate starts a private server on dir/dump.rdb and waits until it
// has loaded it: the deepest check of a snapshot, as a server that cannot
// read it says why.
func startPrivate(ctx context.Context, binary, dir string) (*privateServer, error) {
	if binary == "" {
		binary = "redis-server"
	}
	path, err := exec.LookPath(binary)
	if err != nil {
		return nil, fmt.Errorf("redis-server binary %q: %w", binary, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(path, "--bind", "127.0.0.1", "--port", port, "--dir", ".", "--dbfilename", "dump.rdb",
		"--appendonly", "no", "--save", "", "--daemonize", "no", "--logfile", "restore.log")
	cmd.Args = append(cmd.Args, redisconf.Args()...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("run %s: %w", path, err)
	}
	s := &privateServer{exited: make(chan error, 1), rdb: redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})}
	go func() { s.exited <- cmd.Wait() }()
	s.stop = func() {
		_ = s.rdb.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-s.exited
		}
	}
	if err := waitLoaded(ctx, s.rdb, s.exited, dir); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// settleFrontiers undoes the backup's own pause of the frontiers it
// paused and returns the URIs leased at the snapshot to their queues
// (uncharged: they are crawled again); it returns how many.
func settleFrontiers(ctx context.Context, rdb redis.UniversalClient, m *Manifest) (released int64, err error) {
	open := func(name string) (*frontier.Frontier, error) {
		shards, err := frontier.RecordedShards(ctx, rdb, name)
		if err != nil {
			return nil, err
		}
		return frontier.New(rdb, name, frontier.Options{Shards: shards})
	}
	for _, name := range m.Paused {
		f, err := open(name)
		if err != nil {
			return 0, err
		}
		if err := f.Resume(ctx); err != nil {
			return 0, err
		}
	}
	for _, name := range m.Frontiers {
		f, err := open(name)
		if err != nil {
			return 0, err
		}
		n, err := f.ReleaseAll(ctx)
		if err != nil {
			return 0, err
		}
		released += int64(n)
	}
	return released, nil
}

// waitLoaded waits until the server answers after loading the snapshot:
// however long it answers LOADING (a snapshot of tens of GB takes
// minutes), but not two minutes without any answer.
func waitLoaded(ctx context.Context, rdb *redis.Client, exited chan error, dir string) error {
	alive := time.Now()
	var last error
	for {
		if last = rdb.Ping(ctx).Err(); last == nil {
			return nil
		}
		if redis.HasErrorPrefix(last, "LOADING") {
			alive = time.Now()
		} else if time.Since(alive) > 2*time.Minute {
			return fmt.Errorf("redis-server did not load the snapshot: no answer for 2 minutes (last: %v): %s", last, logTail(dir))
		}
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("redis-server exited while loading the snapshot (%v): %s", err, logTail(dir))
		case <-ctx.Done():
			return fmt.Errorf("redis-server did not load the snapshot: %w (last: %v)", ctx.Err(), last)
		case <-time.After(20 * time.Millisecond): // polling the loading server
		}
	}
}

// waitAOF waits for the rewrite that CONFIG SET appendonly yes starts.
func waitAOF(ctx context.Context, rdb *redis.Client) error {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		info, err := rdb.Info(ctx, "persistence").Result()
		if err != nil {
			return err
		}
		v := infoFields(info)
		if v["aof_enabled"] == "1" && v["aof_rewrite_in_progress"] == "0" && v["aof_rewrite_scheduled"] == "0" {
			if v["aof_last_bgrewrite_status"] != "ok" {
				return fmt.Errorf("AOF rewrite failed: aof_last_bgrewrite_status:%s", v["aof_last_bgrewrite_status"])
			}
			if n, _ := strconv.Atoi(v["aof_rewrites"]); n > 0 || v["aof_rewrites"] == "" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("AOF rewrite did not finish in 10 minutes")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond): // polling the rewrite
		}
	}
}

// infoFields parses INFO output.
func infoFields(s string) map[string]string {
	out := map[string]string{}
	for line := range strings.SplitSeq(s, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out
}

// logTail is the end of the private server's log.
func logTail(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "restore.log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-4):], " | ")
}
