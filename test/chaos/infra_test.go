//go:build chaos

package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"golang.org/x/sys/unix"

	kafkatopics "github.com/trawler-crawl/trawler/kafka-topics"
	"github.com/trawler-crawl/trawler/pkg/embedded"
	"github.com/trawler-crawl/trawler/pkg/kafka"
)

// redisServer is the crawl's Redis: a real redis-server child process
// (pkg/embedded: append-only file, no RDB) on a fixed address and data
// directory, so a restart comes back where the workers expect it, with
// what its append-only file holds.
type redisServer struct {
	addr, dir string
	r         *embedded.Redis
}

func (s *redisServer) start(t *testing.T) {
	t.Helper()
	r, err := embedded.StartRedis(context.Background(), embedded.RedisOptions{DataDir: s.dir, Addr: s.addr, Binary: "redis-server",
		StartTimeout: time.Minute})
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	s.r, s.addr = r, r.Addr()
}

// kill SIGKILLs redis-server, as a crash does: it gets no chance to
// rewrite or fsync its append-only file beyond what it already did.
func (s *redisServer) kill(t *testing.T) {
	t.Helper()
	if pid := s.r.PID(); pid > 0 {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("kill redis-server %d: %v", pid, err)
		}
	}
	<-s.r.Done()
	_ = s.r.Close() // releases the data directory's lock; the process is gone
}

// broker is the embedded Kafka broker (kfake) with a data directory that
// survives a clean restart (pkg/embedded: state is written on Close).
type broker struct {
	addr, dir string
	k         *embedded.Kafka
}

func (b *broker) start(t *testing.T) {
	t.Helper()
	k, err := embedded.StartKafka(context.Background(), embedded.KafkaOptions{DataDir: b.dir, Addr: b.addr})
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	b.k, b.addr = k, k.Brokers()[0]
}

func (b *broker) config(id string) kafka.Config {
	return kafka.Config{Brokers: []string{b.addr}, ClientID: id}
}

// applyTopics creates the project's topics (kafka-topics/) as a cluster's
// `trawler topics apply` would, with the given partition count.
func (b *broker) applyTopics(t *testing.T, partitions int32) {
	t.Helper()
	cl, err := kafka.NewClient(b.config("chaos-topics"))
	if err != nil {
		t.Fatalf("kafka client: %v", err)
	}
	defer cl.Close()
	specs, err := kafka.ParseTopics(kafkatopics.Default())
	if err != nil {
		t.Fatalf("topics: %v", err)
	}
	if _, err := kafka.ApplyTopics(context.Background(), kadm.NewClient(cl), specs, partitions); err != nil {
		t.Fatalf("apply topics: %v", err)
	}
}

// stallProxy sits between the workers and clamd. While stalled it accepts
// connections and reads nothing and answers nothing, as a clamd whose
// threads are all stuck does; the workers' scan timeout has to notice.
type stallProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	stalled bool
	resume  chan struct{} // closed when a stall ends
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

func startStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("clamd proxy: %v", err)
	}
	p := &stallProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *stallProxy) addr() string { return p.ln.Addr().String() }

// setStalled starts or ends a stall.
func (p *stallProxy) setStalled(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case on && !p.stalled:
		p.stalled, p.resume = true, make(chan struct{})
	case !on && p.stalled:
		p.stalled = false
		close(p.resume)
	}
}

// gate blocks while the proxy is stalled.
func (p *stallProxy) gate() {
	p.mu.Lock()
	stalled, resume := p.stalled, p.resume
	p.mu.Unlock()
	if stalled {
		<-resume
	}
}

func (p *stallProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.track(c, true)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

func (p *stallProxy) track(c net.Conn, add bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		p.conns[c] = struct{}{}
	} else {
		delete(p.conns, c)
	}
}

func (p *stallProxy) serve(c net.Conn) {
	defer p.track(c, false)
	defer func() { _ = c.Close() }()
	p.gate() // a stalled clamd does not even read the command
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.track(up, true)
	defer p.track(up, false)
	defer func() { _ = up.Close() }()
	done := make(chan struct{}, 2)
	go func() { p.pipe(up, c); done <- struct{}{} }()
	go func() { p.pipe(c, up); done <- struct{}{} }()
	<-done
}

// pipe copies src to dst, holding each chunk while the proxy is stalled.
func (p *stallProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.gate()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
			}
			return
		}
	}
}

func (p *stallProxy) close() {
	p.setStalled(false)
	_ = p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// tmpfs mounts a small tmpfs at dir (tests run as root), unmounted in
// t.Cleanup even when the test fails.
func mountTmpfs(t *testing.T, dir string, sizeMB int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("tmpfs dir: %v", err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%dm", sizeMB)); err != nil {
		t.Skipf("cannot mount a tmpfs for the disk-full fault (needs root): %v", err)
	}
	t.Cleanup(func() {
		// Lazy: a child killed at the same moment may still hold a file.
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

// fillDisk fills dir's filesystem until leave bytes are free and returns
// a function that frees the space again.
func fillDisk(dir string, leave int64) (func() error, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", dir, err)
	}
	free := int64(st.Bavail) * st.Bsize
	name := dir + "/chaos-filler"
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("filler: %w", err)
	}
	defer func() { _ = f.Close() }()
	if size := free - leave; size > 0 {
		if err := unix.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
			_ = os.Remove(name)
			return nil, fmt.Errorf("fill %s with %d bytes: %w", dir, size, err)
		}
	}
	return func() error { return os.Remove(name) }, nil
}

// freeAddr is a loopback address nobody listens on right now, for the
// cdxwriter's API, which keeps it across restarts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}
