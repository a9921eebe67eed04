package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Redis server kinds, as returned by (*Redis).Kind.
const (
	KindRedisServer = "redis-server"
	KindMiniredis   = "miniredis"
)

// Defaults for RedisOptions.
const (
	DefaultRedisStartTimeout = 60 * time.Second
	DefaultRedisStopTimeout  = 30 * time.Second
)

// RedisOptions configures StartRedis.
type RedisOptions struct {
	// DataDir holds redis-server's append-only file, log and pid file.
	// Required for redis-server; ignored by miniredis.
	DataDir string
	// Addr is the loopback host:port to listen on. Empty (or port 0) picks
	// a free port on 127.0.0.1.
	Addr string
	// Binary is the redis-server executable. Empty looks redis-server up in
	// PATH and falls back to miniredis if it is not there; a path given
	// here must work (no silent fallback).
	Binary string
	// ForceMiniredis skips redis-server even when one is installed.
	ForceMiniredis bool
	// StartTimeout bounds the wait for redis-server to answer PING while
	// it gives no sign of life; while it answers -LOADING (replaying its
	// append-only file) the wait goes on. Zero means
	// DefaultRedisStartTimeout.
	StartTimeout time.Duration
	// StopTimeout is how long Close waits after SIGTERM before SIGKILL.
	// Zero means DefaultRedisStopTimeout.
	StopTimeout time.Duration
	// Logger receives lifecycle messages. Nil discards them.
	Logger *slog.Logger
}

// Redis is a running embedded Redis: a redis-server child process or an
// in-process miniredis.
type Redis struct {
	kind   string
	addr   string
	logger *slog.Logger

	mini     *miniredis.Miniredis
	miniDone chan struct{}

	proc        *redisProc
	lock        *dirLock
	stopTimeout time.Duration

	closeOnce sync.Once
	closeErr  error
}

// StartRedis starts redis-server in o.DataDir (append-only file on, RDB
// snapshots off) and waits until it answers PING, or starts miniredis when
// asked to or when no redis-server is installed.
func StartRedis(ctx context.Context, o RedisOptions) (*Redis, error) {
	logger := discardLogger(o.Logger).With("component", "embedded-redis")
	addr, err := loopbackAddr(o.Addr, "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start embedded redis: %w", err)
	}
	if o.ForceMiniredis {
		return startMiniredis(addr, logger)
	}
	binary, err := findRedisServer(o.Binary)
	if errors.Is(err, exec.ErrNotFound) && o.Binary == "" {
		logger.Warn("redis-server not found in PATH; using in-process miniredis, which is several times slower for Lua scripts and keeps nothing across restarts")
		return startMiniredis(addr, logger)
	}
	if err != nil {
		return nil, fmt.Errorf("start embedded redis: %w", err)
	}
	if o.DataDir == "" {
		return nil, errors.New("start embedded redis: redis-server needs a data directory")
	}
	return startRedisServer(ctx, binary, addr, o, logger)
}

// findRedisServer resolves the binary to run.
func findRedisServer(binary string) (string, error) {
	name := binary
	if name == "" {
		name = "redis-server"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("redis-server binary %q: %w", name, err)
	}
	return path, nil
}

// startMiniredis runs miniredis on addr.
func startMiniredis(addr string, logger *slog.Logger) (*Redis, error) {
	m := miniredis.NewMiniRedis()
	// By default miniredis TTLs only move with FastForward; the frontier's
	// leases and caches need them to expire in real time.
	m.ClockTTL(true)
	if err := m.StartAddr(addr); err != nil {
		return nil, fmt.Errorf("start miniredis on %s: %w", addr, err)
	}
	r := &Redis{kind: KindMiniredis, addr: m.Addr(), logger: logger, mini: m, miniDone: make(chan struct{})}
	logger.Info("embedded redis started", "kind", r.kind, "addr", r.addr, "persistent", false)
	return r, nil
}

// startRedisServer locks the data directory and runs the child process.
func startRedisServer(ctx context.Context, binary, addr string, o RedisOptions, logger *slog.Logger) (*Redis, error) {
	lock, err := lockDir(o.DataDir)
	if err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	startTimeout := cmpOr(o.StartTimeout, DefaultRedisStartTimeout)
	proc, err := launchRedisServer(ctx, launchSpec{
		binary:  binary,
		dataDir: o.DataDir,
		addr:    addr,
		timeout: startTimeout,
		logger:  logger,
	})
	if err != nil {
		_ = lock.unlock()
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	r := &Redis{
		kind:        KindRedisServer,
		addr:        proc.addr,
		logger:      logger,
		proc:        proc,
		lock:        lock,
		stopTimeout: cmpOr(o.StopTimeout, DefaultRedisStopTimeout),
	}
	logger.Info("embedded redis started", "kind", r.kind, "addr", r.addr, "pid", proc.pid(),
		"data_dir", o.DataDir, "persistent", true)
	return r, nil
}

// Addr returns the host:port clients connect to.
func (r *Redis) Addr() string { return r.addr }

// Kind returns KindRedisServer or KindMiniredis.
func (r *Redis) Kind() string { return r.kind }

// Persistent reports whether the data survives a restart (redis-server with
// its append-only file; miniredis keeps nothing).
func (r *Redis) Persistent() bool { return r.kind == KindRedisServer }

// PID returns the redis-server process id, or 0 for miniredis.
func (r *Redis) PID() int {
	if r.proc == nil {
		return 0
	}
	return r.proc.pid()
}

// Done is closed when the server has stopped: after Close, or when the
// redis-server process exits on its own (a crash), which callers should
// treat as fatal.
func (r *Redis) Done() <-chan struct{} {
	if r.proc != nil {
		return r.proc.done
	}
	return r.miniDone
}

// Close stops the server: SIGTERM to redis-server (it fsyncs the
// append-only file and exits), SIGKILL if it has not exited after the stop
// timeout. Safe to call more than once.
func (r *Redis) Close() error {
	r.closeOnce.Do(func() {
		if r.mini != nil {
			r.mini.Close()
			close(r.miniDone)
			r.logger.Info("embedded redis stopped", "kind", r.kind)
			return
		}
		err := r.proc.stop(r.stopTimeout)
		r.closeErr = errors.Join(err, r.lock.unlock())
		r.logger.Info("embedded redis stopped", "kind", r.kind, "pid", r.proc.pid(), "err", err)
	})
	return r.closeErr
}

// cmpOr returns d, or def when d is not positive.
func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
