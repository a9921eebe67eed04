package embedded

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/trawler-crawl/trawler/pkg/redisconf"
)

// ErrStaleRedis is returned when a redis-server from an earlier run still
// owns the data directory (its parent died without stopping it).
var ErrStaleRedis = errors.New("stale redis-server still running")

// Files redis-server keeps in its data directory, relative to it: the child
// runs with the data directory as its working directory, so no path needs
// quoting on the command line.
const (
	redisLogFile = "redis-server.log"
	redisPIDFile = "redis-server.pid"
)

// pollInterval paces the readiness and liveness polls.
const pollInterval = 20 * time.Millisecond

// launchSpec is what launchRedisServer needs.
type launchSpec struct {
	binary  string
	dataDir string
	addr    string
	timeout time.Duration
	logger  *slog.Logger
}

// redisProc is a running redis-server child.
type redisProc struct {
	cmd     *exec.Cmd
	addr    string
	dataDir string
	logger  *slog.Logger

	done     chan struct{} // closed once the process has been reaped
	waitErr  error         // valid after done is closed
	stopping atomic.Bool   // set by stop, so an exit is not reported as a crash
	output   *tailBuffer   // stdout/stderr, for errors before the log file opens
}

// launchRedisServer checks for a stale server, starts the child and waits for
// it to answer PING. When the port was ours to choose and the child dies
// before answering (another process took the port between our probe and its
// bind), it retries on a new port.
func launchRedisServer(ctx context.Context, s launchSpec) (*redisProc, error) {
	dir, err := filepath.Abs(s.dataDir)
	if err != nil {
		return nil, fmt.Errorf("data dir %s: %w", s.dataDir, err)
	}
	if err := checkStaleRedis(dir); err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(s.addr)
	pickPort := port == "0"
	attempts := 1
	if pickPort {
		attempts = 3
	}
	var lastErr error
	for range attempts {
		addr, err := reservePort(host, port)
		if err != nil {
			return nil, err
		}
		p, err := spawnRedis(s.binary, dir, addr, s.logger)
		if err != nil {
			return nil, err
		}
		if lastErr = p.waitReady(ctx, s.timeout); lastErr == nil {
			return p, nil
		}
		exited := p.exitedEarly()
		_ = p.stop(time.Second)
		if !exited || ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// reservePort checks that host:port can be bound, choosing a free port when
// port is "0". The check gives a clear "address in use" error instead of a
// child that dies with the reason buried in its log.
func reservePort(host, port string) (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return "", fmt.Errorf("listen address %s unavailable: %w", net.JoinHostPort(host, port), err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", fmt.Errorf("probe %s: %w", addr, err)
	}
	return addr, nil
}

// spawnRedis starts the child. The goroutine that forks it stays locked to
// its OS thread until the child exits: Linux delivers Pdeathsig when the
// forking *thread* exits, and the Go runtime may otherwise retire that thread
// while the child still runs.
func spawnRedis(binary, dir, addr string, logger *slog.Logger) (*redisProc, error) {
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(binary,
		"--bind", host,
		"--port", port,
		"--dir", ".",
		"--daemonize", "no",
		"--appendonly", "yes",
		"--appendfsync", "everysec",
		"--save", "", // no RDB snapshots: the append-only file is the store
		"--logfile", redisLogFile,
		"--pidfile", redisPIDFile,
		"--protected-mode", "yes",
	)
	// The frontier's listpack and list-compression settings.
	cmd.Args = append(cmd.Args, redisconf.Args()...)
	cmd.Dir = dir
	out := &tailBuffer{max: 4096}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childSysProcAttr()

	p := &redisProc{cmd: cmd, addr: addr, dataDir: dir, logger: logger, done: make(chan struct{}), output: out}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(p.done)
			return
		}
		started <- nil
		p.waitErr = cmd.Wait()
		if !p.stopping.Load() {
			logger.Error("redis-server exited unexpectedly", "pid", cmd.Process.Pid, "err", p.waitErr,
				"log_tail", p.logTail())
		}
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("run %s: %w", binary, err)
	}
	return p, nil
}

// waitReady polls PING until it answers, the child exits or ctx ends, or
// timeout passes without a sign of life. A -LOADING answer is one: the
// child is replaying its append-only file, which for a large frontier
// takes longer than any fixed bound, so the wait goes on (logged every
// loadingLogInterval).
func (p *redisProc) waitReady(ctx context.Context, timeout time.Duration) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	alive, logged := time.Now(), time.Now()
	for {
		pingErr := pingRedis(ctx, p.addr)
		if pingErr == nil {
			return nil
		}
		if errors.Is(pingErr, errLoading) {
			alive = time.Now()
			if time.Since(logged) >= loadingLogInterval {
				p.logger.Info("redis-server is loading its append-only file", "addr", p.addr, "data_dir", p.dataDir)
				logged = alive
			}
		} else if time.Since(alive) > timeout {
			return fmt.Errorf("redis-server (%s, data dir %s) not ready after %s (last PING: %v); log: %s",
				p.addr, p.dataDir, timeout, pingErr, p.logTail())
		}
		select {
		case <-p.done:
			return fmt.Errorf("redis-server (%s, data dir %s) exited before answering PING: %v; log: %s",
				p.addr, p.dataDir, p.waitErr, p.logTail())
		case <-ctx.Done():
			return fmt.Errorf("redis-server (%s, data dir %s) not ready: %w (last PING: %v); log: %s",
				p.addr, p.dataDir, ctx.Err(), pingErr, p.logTail())
		case <-tick.C:
		}
	}
}

// loadingLogInterval is how often a wait on a loading redis-server is
// logged.
const loadingLogInterval = 10 * time.Second

// errLoading is redis-server's -LOADING answer to PING.
var errLoading = errors.New("redis-server is loading its data")

// exitedEarly reports whether the child has exited.
func (p *redisProc) exitedEarly() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// pid returns the child's process id.
func (p *redisProc) pid() int {
	if p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// stop sends SIGTERM and waits; SIGKILL after timeout.
func (p *redisProc) stop(timeout time.Duration) error {
	p.stopping.Store(true)
	select {
	case <-p.done:
		return p.exitError("before Close")
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal redis-server pid %d: %w", p.pid(), err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-p.done:
		return p.exitError("on SIGTERM")
	case <-timer.C:
	}
	p.logger.Warn("redis-server ignored SIGTERM; killing", "pid", p.pid(), "timeout", timeout)
	_ = p.cmd.Process.Kill()
	<-p.done
	return fmt.Errorf("redis-server pid %d did not stop within %s of SIGTERM and was killed", p.pid(), timeout)
}

// exitError describes a non-zero exit.
func (p *redisProc) exitError(when string) error {
	if p.waitErr == nil {
		return nil
	}
	return fmt.Errorf("redis-server pid %d exited %s: %w; log: %s", p.pid(), when, p.waitErr, p.logTail())
}

// logTail returns the end of the child's output and log file, for errors.
func (p *redisProc) logTail() string {
	var b strings.Builder
	if out := strings.TrimSpace(p.output.String()); out != "" {
		b.WriteString(out)
		b.WriteString(" | ")
	}
	lines := tailLines(filepath.Join(p.dataDir, redisLogFile), 5)
	b.WriteString(strings.Join(lines, " | "))
	return b.String()
}

// checkStaleRedis fails if the pid file names a live redis-server: a child
// left behind by a run whose parent died before Pdeathsig could act (or on a
// system without it). A pid file naming a dead or unrelated process is
// removed.
func checkStaleRedis(dir string) error {
	path := filepath.Join(dir, redisPIDFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err == nil && pid > 0 && isRedisProcess(pid) {
		return fmt.Errorf("%w: pid %d (pid file %s) still serves data dir %s; stop it (kill %d) and start again",
			ErrStaleRedis, pid, path, dir, pid)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale pid file %s: %w", path, err)
	}
	return nil
}

// isRedisProcess reports whether pid is a live process whose command name
// mentions redis.
func isRedisProcess(pid int) bool {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		// No /proc entry: the process is gone (or this is not Linux, where
		// we fall back to asking whether the pid exists at all).
		if _, statErr := os.Stat("/proc/self"); statErr == nil {
			return false
		}
		return syscall.Kill(pid, 0) == nil
	}
	return strings.Contains(string(comm), "redis")
}

// tailLines returns the last n lines of a file, or nothing if unreadable.
func tailLines(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return lines
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// Write implements io.Writer.
func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(b), nil
}

// String returns the kept bytes.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// pingRedis sends one inline PING and expects +PONG. A raw exchange keeps the
// readiness probe free of client pools; while redis-server replays its
// append-only file it answers -LOADING, which counts as not ready.
func pingRedis(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: 500 * time.Millisecond}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "-LOADING") {
		return fmt.Errorf("PING answered %q: %w", line, errLoading)
	}
	if line != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}
