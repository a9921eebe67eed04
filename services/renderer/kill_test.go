package renderer

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/internal/testchild"
	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/kafka"
)

const childEnv = "TRAWLER_RENDERER_TEST_CHILD"

// childSpec is what a child renderer needs from the parent test. Without
// an identity lease it is the unleased "r0" (or ID); with one, it takes ID
// or a leased slot and runs a janitor every Janitor (default: an hour).
type childSpec struct {
	Redis   string        `json:"redis"`
	Brokers []string      `json:"brokers"`
	Dir     string        `json:"dir"`
	ID      string        `json:"id,omitempty"`
	Lease   time.Duration `json:"lease,omitempty"`
	Janitor time.Duration `json:"janitor,omitempty"`
}

func TestMain(m *testing.M) {
	testchild.Main(childEnv, runChild)
	os.Exit(m.Run())
}

// runChild runs one renderer until SIGTERM (or kill -9).
func runChild(c childSpec) int {
	rdb := redis.NewClient(&redis.Options{Addr: c.Redis})
	defer rdb.Close()
	id := c.ID
	if id == "" && c.Lease == 0 {
		id = "r0"
	}
	r, err := New(Config{Crawl: "fc", Stream: "npld", ID: id, IdentityLease: c.Lease, JanitorPeriod: cmp.Or(c.Janitor, time.Hour),
		DataDir: c.Dir, Tabs: 1, PageTimeout: 30 * time.Second, Attempts: 2, NoSandbox: true},
		Deps{Profile: testProfile(), Kafka: kafka.Config{Brokers: c.Brokers, ClientID: "child", SessionTimeout: 6 * time.Second,
			RebalanceTimeout: 6 * time.Second}, Redis: rdb,
			Logger:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Registerer: prometheus.NewRegistry(), Version: "t"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child renderer:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "child identity:", r.ID())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := r.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "child run:", err)
		return 1
	}
	return 0
}

func startChild(t *testing.T, spec childSpec) (*testchild.Child, *testlog.Buffer) {
	t.Helper()
	out := &testlog.Buffer{}
	return testchild.Start(t, childEnv, spec, out), out
}

// Kill -9 of the renderer mid-render loses nothing: the hand-off was not
// committed, so the restarted renderer renders the page again, recovers
// the WARC the dead one left open, and leaves no .open file and no
// browser of the dead one behind.
func TestKilledRendererRedoesTheRender(t *testing.T) {
	s := startSite(t)
	e := newEnv(t)
	s.mu.Lock()
	s.hold = make(chan struct{}) // the page's script waits: the render is caught midway
	s.mu.Unlock()
	spec := childSpec{Redis: e.rdb.Options().Addr, Brokers: e.kc.Brokers, Dir: e.dir}
	cmd, out := startChild(t, spec)
	e.handOff(t, s.base+"/")
	warcs := filepath.Join(e.dir, "warcs", "fc-npld-render")
	deadline := time.Now().Add(60 * time.Second)
	for s.hit("/app.js") == 0 || len(glob(warcs, "*.open")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("render never reached its script with a WARC open; child: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	s.mu.Lock()
	close(s.hold)
	s.hold = nil
	s.mu.Unlock()
	cmd2, out2 := startChild(t, spec)
	e.readTopic(t, "fc.crawled", hasURL("onreadydom:"+s.base+"/"))
	if err := cmd2.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd2.Wait(); err != nil {
		t.Fatalf("second renderer: %v\n%s", err, out2.String())
	}
	if n := s.hit("/"); n < 2 {
		t.Errorf("the page was requested %d times: the killed render was not redone", n)
	}
	if open := glob(warcs, "*.open"); len(open) > 0 {
		t.Errorf(".open files left: %v", open)
	}
	if left := glob(filepath.Join(e.dir, "spool"), "*/trawler-browser-*"); len(left) > 0 {
		t.Errorf("browser profiles left: %v", left)
	}
	if pids := chromiumUsing(e.dir); len(pids) > 0 {
		t.Errorf("browser processes of the renderers still running: %v", pids)
	}
	checkWARCs(t, warcs, "screenshot:"+s.base+"/")
}

func glob(dir, pattern string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, pattern))
	return m
}

// chromiumUsing lists live processes whose command line names dir.
func chromiumUsing(dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), "--user-data-dir="+dir) {
			out = append(out, p)
		}
	}
	return out
}
