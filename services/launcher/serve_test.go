package launcher

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/metricstest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
)

// steppedClock is a fake clock that Serve's waits move forward: each wait
// jumps to the time asked for. After stopAfter waits it cancels the run.
type steppedClock struct {
	mu        sync.Mutex
	now       time.Time
	waits     []time.Time
	stopAfter int
	cancel    context.CancelFunc
	onWait    func(n int) // called before a wait returns, with its number
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *steppedClock) wait(ctx context.Context, until time.Time) error {
	c.mu.Lock()
	c.waits = append(c.waits, until)
	n := len(c.waits)
	if until.After(c.now) {
		c.now = until
	}
	c.mu.Unlock()
	if c.onWait != nil {
		c.onWait(n)
	}
	if n >= c.stopAfter {
		c.cancel()
	}
	return ctx.Err()
}

type serveEnv struct {
	c    *kfake.Cluster
	rdb  *redis.Client
	feed string
}

// serve runs Serve from start until the clock has waited stopAfter times,
// and returns the waits and the launches sent.
func (e serveEnv) serve(t *testing.T, start time.Time, stopAfter int, onWait func(int)) ([]time.Time, float64) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := &steppedClock{now: start, stopAfter: stopAfter, cancel: cancel, onWait: onWait}
	ledger, err := NewRedisLedger(e.rdb, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg := Config{Feeds: []string{e.feed}, Crawl: CrawlFrequent, Stream: "npld", TimeZone: "Europe/London", Hourly: true,
		CatchUpHours: 1}
	svc, err := New(cfg, Deps{Producer: NewKafkaProducer(newClient(t, e.c)), KeyFunc: hostkey.ForURL, Ledger: ledger,
		Clock: clock, Wait: clock.wait, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Serve(ctx); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	return clock.waits, metricstest.Value(t, reg, "trawler_launcher_launches_total")
}

// Serve runs the hour in progress and the one before at start, then each
// hour at its top; a restart catches up without launching anything twice.
func TestServeHourlyAndRestart(t *testing.T) {
	e := serveEnv{c: newCluster(t, npld), rdb: embeddedtest.Redis(t), feed: writeFeed(t, 48)}
	start := time.Date(2024, 1, 17, 8, 30, 0, 0, time.UTC)
	waits, sent := e.serve(t, start, 2, nil)
	want := []time.Time{time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC), time.Date(2024, 1, 17, 10, 0, 0, 0, time.UTC)}
	if !slices.EqualFunc(waits, want, time.Time.Equal) {
		t.Errorf("waited until %v, want %v", waits, want)
	}
	// 07:00 (caught up), 08:00 and 09:00: two targets of two seeds each.
	if sent != 12 {
		t.Errorf("sent %v launches, want 12", sent)
	}
	byHour := map[string]int{}
	for _, v := range values(t, e.c, 12) {
		byHour[decodeWire(t, v).LaunchTimestamp()]++
	}
	if byHour["20240117070000"] != 4 || byHour["20240117080000"] != 4 || byHour["20240117090000"] != 4 {
		t.Errorf("launches by hour %v", byHour)
	}
	// Restarted at 09:10, it runs 08:00 and 09:00 again and sends nothing.
	_, sent = e.serve(t, time.Date(2024, 1, 17, 9, 10, 0, 0, time.UTC), 1, nil)
	if sent != 0 {
		t.Errorf("restart sent %v launches", sent)
	}
}

// A failed run is retried after RetryDelay, not an hour later.
func TestServeRetriesFailedRun(t *testing.T) {
	feed := filepath.Join(t.TempDir(), "later.jsonl")
	e := serveEnv{c: newCluster(t, npld), rdb: embeddedtest.Redis(t), feed: feed}
	content, err := os.ReadFile(writeFeed(t, 24))
	if err != nil {
		t.Fatal(err)
	}
	onWait := func(n int) {
		if n == 1 { // the feed appears during the first wait
			if err := os.WriteFile(feed, content, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	start := time.Date(2024, 1, 17, 8, 30, 0, 0, time.UTC)
	waits, sent := e.serve(t, start, 2, onWait)
	want := []time.Time{start.Add(DefaultRetryDelay), time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)}
	if !slices.EqualFunc(waits, want, time.Time.Equal) {
		t.Errorf("waited until %v, want %v", waits, want)
	}
	if sent != 4 { // 07:00 and 08:00, one target of two seeds each
		t.Errorf("sent %v launches, want 4", sent)
	}
}

func TestServeRefusesUnsafeConfigs(t *testing.T) {
	feed := writeFeed(t, 1)
	base := Config{Feeds: []string{feed}, Crawl: CrawlFrequent, Stream: "npld", TimeZone: "UTC", Hourly: true}
	allActive := base
	allActive.Hourly = false
	tests := []struct {
		name string
		cfg  Config
		deps Deps
		want string
	}{
		{"all active", allActive, Deps{Producer: &failingProducer{}, KeyFunc: hostKey}, "hourly rule only"},
		{"no ledger", base, Deps{Producer: &failingProducer{}, KeyFunc: hostKey}, "no ledger"},
	}
	for _, tc := range tests {
		svc, err := New(tc.cfg, tc.deps)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.Serve(context.Background()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
