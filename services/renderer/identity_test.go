package renderer

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/internal/testchild"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/identity"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// leasedConfig is a renderer of fc-npld in dir with a leased identity.
func leasedConfig(dir, id string) Config {
	return Config{Crawl: "fc", Stream: "npld", ID: id, DataDir: dir, Tabs: 1, PageTimeout: 20 * time.Second, Attempts: 2,
		NoSandbox: true, IdentityLease: time.Second, JanitorPeriod: 200 * time.Millisecond}
}

// Renderers take the lowest free slots r0, r1, ... of their own scope; an
// explicit identity a live renderer holds is refused (by New too), a free
// one is leased; a released slot is taken again; an unleased renderer
// uses its ID as given.
func TestRendererIdentityLeases(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	cfg := leasedConfig(t.TempDir(), "")
	var leases []*identity.Lease
	t.Cleanup(func() {
		for _, l := range leases {
			_ = l.Release()
		}
	})
	for _, want := range []string{"r0", "r1"} {
		id, l, err := acquireIdentity(ctx, rdb, cfg, log)
		if err != nil || id != want {
			t.Fatalf("slot: %s, %v; want %s", id, err, want)
		}
		leases = append(leases, l)
	}
	if n, err := rdb.Exists(ctx, identity.Key("fc-npld-render", "r1")).Result(); err != nil || n != 1 {
		t.Fatalf("r1 lease key: %d, %v", n, err)
	}

	dup := cfg
	dup.ID = "r1"
	_, err := New(dup, Deps{Profile: testProfile(), Redis: rdb, Logger: log})
	if err == nil || !strings.Contains(err.Error(), "refusing to start") || !strings.Contains(err.Error(), "--renderer-id") {
		t.Fatalf("New with a live renderer's identity: %v, want a refusal", err)
	}
	t.Logf("refusal: %v", err)

	named := cfg
	named.ID = "pod-a"
	if id, l, err := acquireIdentity(ctx, rdb, named, log); err != nil || id != "pod-a" || l == nil {
		t.Fatalf("free explicit identity: %s, %v, %v", id, l, err)
	} else {
		leases = append(leases, l)
	}

	if err := leases[0].Release(); err != nil {
		t.Fatal(err)
	}
	if id, l, err := acquireIdentity(ctx, rdb, cfg, log); err != nil || id != "r0" {
		t.Fatalf("after releasing r0: %s, %v", id, err)
	} else {
		leases[0] = l
	}

	own := cfg
	own.IdentityLease, own.ID = 0, "standalone"
	if id, l, err := acquireIdentity(ctx, rdb, own, log); err != nil || id != "standalone" || l != nil {
		t.Fatalf("unleased: %s, %v, %v", id, l, err)
	}
	if n, _ := rdb.Exists(ctx, identity.Key("fc-npld-render", "standalone")).Result(); n != 0 {
		t.Fatal("an unleased identity was leased")
	}
}

func TestRendererIdentityConfig(t *testing.T) {
	for _, tc := range []struct {
		id    string
		lease time.Duration
		err   string
	}{
		{"", time.Second, ""},
		{"r3", time.Second, ""},
		{"standalone", 0, ""},
		{"", 0, "renderer-id is required"},
		{"a/b", time.Second, "renderer-id"},
		{"-r", time.Second, "renderer-id"},
		{"r0", 10 * time.Millisecond, "identity-lease"},
	} {
		c := leasedConfig("d", tc.id)
		c.IdentityLease = tc.lease
		err := c.Validate()
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("id %q lease %v: %v, want %q", tc.id, tc.lease, err, tc.err)
		}
	}
}

// A renderer whose identity lease is taken over stops: Run returns an
// error wrapping identity.ErrLost, and the new holder's lease is left.
func TestRendererIdentityLost(t *testing.T) {
	e := newEnv(t)
	cfg := leasedConfig(e.dir, "")
	cfg.IdentityLease = 300 * time.Millisecond
	r, err := New(cfg, Deps{Profile: testProfile(), Kafka: e.kc, Redis: e.rdb, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { done <- r.Run(ctx) }()
	key := identity.Key("fc-npld-render", r.ID())
	if err := e.rdb.Set(context.Background(), key, "renderer elsewhere 1 x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, identity.ErrLost) {
			t.Fatalf("Run: %v, want identity.ErrLost", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the renderer kept running after losing its identity")
	}
	if v, _ := e.rdb.Get(context.Background(), key).Result(); v != "renderer elsewhere 1 x" {
		t.Fatalf("the stopped renderer touched the new holder's lease: %q", v)
	}
}

// Two leased renderers take r0 and r1, a third started as --renderer-id r0
// is refused; when r0 is killed mid-render, leaving its WARC open, r1's
// janitor closes that file once r0's lease has expired and announces it
// on fc.warcs in r0's name.
func TestJanitorRecoversKilledRenderer(t *testing.T) {
	s := startSite(t)
	e := newEnv(t)
	s.mu.Lock()
	s.hold = make(chan struct{}) // the page's script waits: the render is caught midway
	s.mu.Unlock()
	spec := childSpec{Redis: e.rdb.Options().Addr, Brokers: e.kc.Brokers, Dir: e.dir, Lease: time.Second}
	cmd, out := startChild(t, spec)
	e.handOff(t, s.base+"/")
	warcs := filepath.Join(e.dir, "warcs", "fc-npld-render")
	deadline := time.Now().Add(60 * time.Second)
	for s.hit("/app.js") == 0 || len(glob(warcs, "*-r0.warc.gz.open")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("render never reached its script with an r0 WARC open; child: %s", out.String())
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
	open := glob(warcs, "*-r0.warc.gz.open")

	dupSpec := spec
	dupSpec.ID = "r0"
	dup, dupOut := startChild(t, dupSpec)
	if err := waitExit(t, dup, 30*time.Second); err == nil || !strings.Contains(dupOut.String(), "refusing to start") {
		t.Fatalf("a second renderer-id r0: %v\n%s", err, dupOut.String())
	}

	// The survivor starts while r0 is alive, so it takes r1.
	r, stop := e.start(t, leasedConfig(e.dir, ""), testProfile())
	t.Cleanup(stop)
	if r.ID() != "r1" {
		t.Fatalf("survivor identity %q, want r1", r.ID())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	// What a killed renderer leaves in its spool directory, besides its
	// browser's profile: a spilled response.
	spoolDir := filepath.Join(e.dir, "spool", "fc-npld-render-r0")
	if err := os.WriteFile(filepath.Join(spoolDir, "trawler-spool-42"), make([]byte, 1024), 0o644); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	close(s.hold)
	s.hold = nil
	s.mu.Unlock()

	want := strings.TrimSuffix(filepath.Base(open[0]), ".open")
	e.readTopic(t, "fc.warcs", func(recs []*kgo.Record) bool {
		for _, rec := range recs {
			var n messages.WarcNotice
			if json.Unmarshal(rec.Value, &n) == nil && n.Filename == want && n.Host == "r0" {
				return true
			}
		}
		return false
	})
	t.Logf("r0's WARC recovered %v after the kill", time.Since(killed).Round(time.Millisecond))
	if left := glob(warcs, "*-r0.warc.gz.open"); len(left) > 0 {
		t.Errorf("r0's .open files left: %v", left)
	}
	if len(glob(warcs, want)) != 1 {
		t.Errorf("recovered file %s not in %s", want, warcs)
	}
	// The janitor releases r0's lease just after announcing.
	deadline = time.Now().Add(10 * time.Second)
	for {
		n, err := e.rdb.Exists(context.Background(), identity.Key("fc-npld-render", "r0")).Result()
		if err == nil && n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the janitor kept r0's lease: %d, %v", n, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the lease with a deadline
	}
	// ... having removed r0's spool directory, browser profile and all.
	if left, err := os.ReadDir(spoolDir); !errors.Is(err, os.ErrNotExist) {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Errorf("r0's spool directory left: %v (%v)", names, err)
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
