package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/internal/testchild"
	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// childEnv carries a childSpec to a copy of the test binary that runs one
// worker until it is killed (the identity and janitor tests kill it with
// SIGKILL, which leaves its WARCs open as a crash does).
const childEnv = "TRAWLER_WORKER_TEST_CHILD"

// childSpec is what a child worker needs: the parent's Redis and broker,
// the shared data directory, the identity flags and the site's addresses.
type childSpec struct {
	Redis   string            `json:"redis"`
	Brokers []string          `json:"brokers"`
	Dir     string            `json:"dir"`
	ID      string            `json:"id"`
	Lease   time.Duration     `json:"lease"`
	Hosts   map[string]string `json:"hosts"`
	// Threads is the worker's crawl threads; 0: 2.
	Threads int `json:"threads,omitempty"`
	// AdminFile, when set, has the child serve its admin listener with the
	// admin API behind Token on a loopback port, and write the address
	// and its identity there (serveChildAdmin, control_process_test.go).
	AdminFile string `json:"adminFile,omitempty"`
	Token     string `json:"token,omitempty"`
	// Politeness, when set, replaces identityProfile's.
	Politeness *profile.Politeness `json:"politeness,omitempty"`
}

func TestMain(m *testing.M) {
	testchild.Main(childEnv, runChild)
	os.Exit(m.Run())
}

// staticHosts resolves the site's host names to the addresses the parent
// found for them.
type staticHosts map[string]string

func (h staticHosts) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ip, ok := h[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}

// identityProfile crawls slowly enough that a worker can be killed half
// way through a WARC file.
func identityProfile() profile.Profile {
	p := profile.Default()
	p.Politeness = profile.Politeness{MinDelayMs: 20, MaxDelayMs: 20}
	p.Fetch.AllowPrivateAddresses = true
	return p
}

// runChild runs one worker as spec says until killed; it prints New's
// error (an identity already leased) and exits 1.
func runChild(c childSpec) int {
	rdb := redis.NewClient(&redis.Options{Addr: c.Redis})
	defer rdb.Close()
	kc := kafka.Config{Brokers: c.Brokers, ClientID: "child", SessionTimeout: testSessionTimeout, RebalanceTimeout: testSessionTimeout}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reg := prometheus.NewRegistry()
	prof := identityProfile()
	if c.Politeness != nil {
		prof.Politeness = *c.Politeness
	}
	w, err := New(Config{Crawl: "fc", Stream: "npld", ID: c.ID, Threads: cmp.Or(c.Threads, 2), DataDir: c.Dir, Lease: 2 * time.Second,
		IdentityLease: c.Lease, JanitorPeriod: time.Hour},
		Deps{Profile: prof, Kafka: kc, Redis: rdb,
			Resolver: staticHosts(c.Hosts), Logger: log, Registerer: reg, Version: "t"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child worker:", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if c.AdminFile != "" {
		closeAdmin, err := serveChildAdmin(ctx, c, w, prof, kc, rdb, reg, log)
		if err != nil {
			fmt.Fprintln(os.Stderr, "child admin:", err)
			return 1
		}
		defer closeAdmin()
	}
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "child run:", err)
		return 1
	}
	return 0
}

// startChild starts a child worker; its stderr goes to the returned buffer.
func startChild(t *testing.T, spec childSpec) (*testchild.Child, *testlog.Buffer) {
	t.Helper()
	out := &testlog.Buffer{}
	return testchild.Start(t, childEnv, spec, out), out
}

// identityConfig is a worker sharing dir with leased identities.
func identityConfig(dir, id string) Config {
	return Config{Crawl: "fc", Stream: "npld", ID: id, Threads: 3, DataDir: dir, Lease: 2 * time.Second,
		IdentityLease: time.Second, JanitorPeriod: 200 * time.Millisecond}
}

// Slots are taken lowest first and given back on release; a named
// identity that a live worker holds is refused, one a janitor holds is
// waited for; ordinals name w<N>.
func TestIdentityLeases(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	cfg := identityConfig(t.TempDir(), "")
	var leases []*lease
	for i := range 3 {
		id, l, err := acquireIdentity(ctx, rdb, cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		if want := slotID(i); id != want {
			t.Fatalf("slot %d: got %s, want %s", i, id, want)
		}
		leases = append(leases, l)
	}
	if err := leases[1].release(); err != nil {
		t.Fatal(err)
	}
	if id, l, err := acquireIdentity(ctx, rdb, cfg, log); err != nil || id != "w1" {
		t.Fatalf("after releasing w1: %s, %v", id, err)
	} else {
		leases[1] = l
	}

	named := cfg
	named.ID = "w2"
	_, _, err := acquireIdentity(ctx, rdb, named, log)
	if err == nil || !strings.Contains(err.Error(), "refusing to start") {
		t.Fatalf("named identity held by a worker: %v, want a refusal", err)
	}
	t.Logf("refusal: %v", err)

	// Renewal keeps a lease past its time.
	deadline := time.Now().Add(3 * cfg.IdentityLease)
	for time.Now().Before(deadline) {
		if n, err := rdb.Exists(ctx, identityKey("fc-npld", "w0")).Result(); err != nil || n != 1 {
			t.Fatalf("w0 lease not renewed: %d, %v", n, err)
		}
		time.Sleep(50 * time.Millisecond) // sampling the lease over three lease times
	}

	jan, err := tryLease(ctx, rdb, identityKey("fc-npld", "w7"), holderJanitor, cfg.IdentityLease, log)
	if err != nil || jan == nil {
		t.Fatalf("janitor lease: %v %v", jan, err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond) // the janitor's work
		_ = jan.release()
		close(released)
	}()
	named.ID = "w7"
	_, l, err := acquireIdentity(ctx, rdb, named, log)
	if err != nil {
		t.Fatalf("identity held by a janitor: %v, want to wait for it", err)
	}
	<-released
	leases = append(leases, l)

	ord := cfg
	ord.Ordinal = "5"
	if id, l, err := acquireIdentity(ctx, rdb, ord, log); err != nil || id != "w5" {
		t.Fatalf("ordinal 5: %s %v", id, err)
	} else {
		leases = append(leases, l)
	}
	for _, l := range leases {
		if err := l.release(); err != nil {
			t.Fatal(err)
		}
	}
	if keys, _ := rdb.Keys(ctx, "trawler:identity:*").Result(); len(keys) != 0 {
		t.Fatalf("leases left after release: %v", keys)
	}
}

// A worker whose lease is taken over stops with ErrIdentityLost.
func TestIdentityLostStopsLease(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	l, err := tryLease(ctx, rdb, "k", holderWorker, 300*time.Millisecond, slog.New(slog.DiscardHandler))
	if err != nil || l == nil {
		t.Fatal(l, err)
	}
	if err := rdb.Set(ctx, "k", "someone else", 0).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("lease takeover not noticed")
	}
	if err := l.release(); err != nil {
		t.Fatal(err)
	}
	if v, _ := rdb.Get(ctx, "k").Result(); v != "someone else" {
		t.Fatalf("release deleted another holder's lease: %q", v)
	}
}

func TestOrdinal(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want int
		err  bool
	}{{"", -1, false}, {"0", 0, false}, {"12", 12, false}, {"-1", -1, true}, {"x", -1, true}, {"99999", -1, true}} {
		got, err := ordinal(tc.spec)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("ordinal(%q) = %d, %v", tc.spec, got, err)
		}
	}
	if err := (Config{Crawl: "fc", Stream: "npld", ID: "a/b", Threads: 1, DataDir: "d", Lease: time.Minute}).Validate(); err == nil {
		t.Error("an ID with a slash validated")
	}
}

// waitExit waits for a child that should stop by itself.
func waitExit(t *testing.T, cmd *testchild.Child, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("child still running after %v", d)
		return nil
	}
}

// isExitError says whether err is a non-zero exit.
func isExitError(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee)
}
