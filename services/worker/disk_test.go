package worker

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// fakeDisk is a DiskStat whose free space the test sets per directory.
type fakeDisk struct {
	mu    sync.Mutex
	free  map[string]uint64 // by path; missing: plenty
	err   map[string]error
	size  uint64
	calls atomic.Int64
}

func (d *fakeDisk) stat(dir string) (uint64, uint64, error) {
	d.calls.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.err[dir]; err != nil {
		return 0, 0, err
	}
	if f, ok := d.free[dir]; ok {
		return f, d.size, nil
	}
	return d.size, d.size, nil
}

func (d *fakeDisk) set(dir string, free uint64) {
	d.mu.Lock()
	d.free[dir] = free
	d.mu.Unlock()
}

// The guard's thresholds, its state changes, their log lines (one per
// change) and its metrics.
func TestDiskGuardThresholds(t *testing.T) {
	const gib = 1 << 30
	dirs := []diskDir{{"warcs", "/w"}, {"spool", "/s"}}
	tests := []struct {
		name    string
		cfg     DiskConfig
		free    map[string]uint64
		errs    map[string]error
		wantLow string // substring of the reason; "" for not low
	}{
		{"plenty", DiskConfig{MinFreeBytes: gib}, nil, nil, ""},
		{"bytes below", DiskConfig{MinFreeBytes: gib}, map[string]uint64{"/s": gib - 1}, nil, "spool (/s): 1073741823 bytes free"},
		{"bytes at threshold", DiskConfig{MinFreeBytes: gib}, map[string]uint64{"/w": gib}, nil, ""},
		{"percent below", DiskConfig{MinFreePercent: 10}, map[string]uint64{"/w": 9 * gib}, nil, "warcs (/w): 9.0% free"},
		{"percent above", DiskConfig{MinFreePercent: 10}, map[string]uint64{"/w": 11 * gib}, nil, ""},
		{"either threshold", DiskConfig{MinFreeBytes: gib, MinFreePercent: 50}, map[string]uint64{"/w": 40 * gib}, nil, "40.0% free"},
		{"off", DiskConfig{}, map[string]uint64{"/w": 0}, nil, ""},
		{"stat error is not low", DiskConfig{MinFreeBytes: gib}, nil, map[string]error{"/w": errors.New("boom")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &fakeDisk{free: tt.free, err: tt.errs, size: 100 * gib}
			if d.free == nil {
				d.free = map[string]uint64{}
			}
			var logs bytes.Buffer
			m := newDiskMetrics()
			g := newDiskGuard(tt.cfg, dirs, m, slog.New(slog.NewTextHandler(&logs, nil)))
			g.stat = d.stat
			g.check()
			g.check() // a second check changes nothing and logs nothing
			low := g.low()
			if (tt.wantLow == "") != (low == "") || !strings.Contains(low, tt.wantLow) {
				t.Fatalf("low = %q, want %q", low, tt.wantLow)
			}
			wantGauge, wantLines := 0.0, 0
			if low != "" {
				wantGauge, wantLines = 1, 1
			}
			if got := testutil.ToFloat64(m.low); got != wantGauge {
				t.Errorf("trawler_worker_disk_low = %v, want %v", got, wantGauge)
			}
			if n := strings.Count(logs.String(), "disk space low"); n != wantLines {
				t.Errorf("%d 'disk space low' lines, want %d:\n%s", n, wantLines, logs.String())
			}
			if tt.errs != nil && strings.Count(logs.String(), "cannot read free space") != 1 {
				t.Errorf("stat error not logged once:\n%s", logs.String())
			}
			if tt.errs == nil {
				if got := testutil.ToFloat64(m.free.WithLabelValues("warcs")); got != float64(mustFree(d, "/w")) {
					t.Errorf("free bytes of warcs = %v", got)
				}
			}
			// Space returns: claims resume, and the change is logged once.
			for _, dir := range dirs {
				d.set(dir.path, d.size)
			}
			g.check()
			if g.low() != "" || testutil.ToFloat64(m.low) != 0 {
				t.Errorf("still low after space returned: %q", g.low())
			}
			if n := strings.Count(logs.String(), "disk space returned"); n != wantLines {
				t.Errorf("%d 'disk space returned' lines, want %d", n, wantLines)
			}
		})
	}
}

func mustFree(d *fakeDisk, dir string) uint64 {
	f, _, _ := d.stat(dir)
	return f
}

// A worker whose WARC filesystem is full claims nothing, says so on its
// readiness check and in its metric, and crawls once space returns.
func TestWorkerStopsClaimingOnLowDisk(t *testing.T) {
	e := setup(t)
	w := newWorker(t, e, t.TempDir())
	disk := &fakeDisk{free: map[string]uint64{w.cfg.WARCDir(): 1 << 20}, size: 1 << 40}
	w.disk.stat = disk.stat
	w.disk.cfg = DiskConfig{MinFreeBytes: 1 << 30, CheckInterval: 10 * time.Millisecond}
	produceSeeds(t, e, e.srv.Seeds())

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker run: %v", err)
		}
	})

	// The seeds are admitted, and the guard looks several times while
	// they wait: nothing is claimed.
	waitFor(t, "seeds queued", func() bool {
		st, err := w.front.Stats(context.Background())
		return err == nil && st.Queued > 0
	})
	calls := disk.calls.Load()
	waitFor(t, "five more disk checks", func() bool { return disk.calls.Load() >= calls+5*int64(len(w.disk.dirs)) })
	st, err := w.front.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tot, err := w.Totals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.InFlight != 0 || tot.URIs != 0 {
		t.Fatalf("with the disk full: %d in flight, %d finished; want none", st.InFlight, tot.URIs)
	}
	if err := w.DiskReady(context.Background()); err == nil || !strings.Contains(err.Error(), "warcs") {
		t.Errorf("readiness with the disk full: %v, want an error naming warcs", err)
	}
	if got := testutil.ToFloat64(w.metrics.disk.low); got != 1 {
		t.Errorf("trawler_worker_disk_low = %v, want 1", got)
	}

	disk.set(w.cfg.WARCDir(), 1<<40)
	want := int64(len(e.srv.Reachable(testweb.ReachOptions{MaxHops: 20})))
	deadline := time.Now().Add(60 * time.Second)
	for {
		tot, err := w.Totals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if tot.URIs >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("crawled %d of %d URIs after space returned", tot.URIs, want)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
	if err := w.DiskReady(context.Background()); err != nil {
		t.Errorf("readiness after space returned: %v", err)
	}
	if got := testutil.ToFloat64(w.metrics.disk.low); got != 0 {
		t.Errorf("trawler_worker_disk_low = %v, want 0", got)
	}
}
