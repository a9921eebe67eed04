package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
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
	"github.com/trawler-crawl/trawler/pkg/messages"
)

const npld = "fc.tocrawl.npld"

// writeFeed writes n DAILY targets, target i starting at hour i%24 on 1
// January 2024 with two seeds on its own host, and returns its path.
func writeFeed(t testing.TB, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"id": %d, "title": "site %d", "seeds": ["https://s%d.example.org/", "https://s%d.example.org/news/"], "depth": "CAPPED", "scope": "root", "ignoreRobotsTxt": false, "schedules": [{"startDate": "2024-01-01 %02d:00:00", "endDate": "", "frequency": "DAILY"}], "watched": false}`+"\n",
			i, i, i, i, i%24)
	}
	path := filepath.Join(t.TempDir(), "feed.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// hourlyService returns an hourly launcher on the cluster and Redis, with
// its own ledger (a run of its own).
func hourlyService(t testing.TB, c *kfake.Cluster, rdb *redis.Client, feed string, reg prometheus.Registerer, logs *bytes.Buffer) *Service {
	t.Helper()
	cfg := Config{Feeds: []string{feed}, Crawl: CrawlFrequent, Stream: "npld", TimeZone: "Europe/London", Hourly: true, BatchSize: 50}
	ledger, err := NewRedisLedger(rdb, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	if logs != nil {
		log = slog.New(slog.NewJSONHandler(logs, nil))
	}
	svc, err := New(cfg, Deps{Producer: NewKafkaProducer(newClient(t, c)), KeyFunc: hostkey.ForURL, Ledger: ledger,
		Logger: log, Registerer: reg, Clock: fixedClock{time.Date(2024, 1, 17, 9, 0, 1, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// launchesByURL decodes records and fails on a URL seen twice.
func launchesByURL(t *testing.T, recs [][]byte) map[string]messages.Launch {
	t.Helper()
	out := map[string]messages.Launch{}
	for _, v := range recs {
		l := decodeWire(t, v)
		if _, dup := out[l.URL]; dup {
			t.Errorf("%s launched twice", l.URL)
		}
		out[l.URL] = l
	}
	return out
}

func values(t *testing.T, c *kfake.Cluster, n int) [][]byte {
	t.Helper()
	var out [][]byte
	for _, r := range consume(t, c, npld, n) {
		out = append(out, r.Value)
	}
	return out
}

// Running the same hour twice sends nothing new; another hour launches
// its own targets; each launch is keyed by host key.
func TestHourlyRunIdempotent(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, npld)
	rdb := embeddedtest.Redis(t)
	feed := writeFeed(t, 48) // targets 9 and 33 start at 09:00
	reg := prometheus.NewRegistry()
	svc := hourlyService(t, c, rdb, feed, reg, nil)
	at := time.Date(2024, 1, 17, 9, 20, 0, 0, time.UTC)
	sum, err := svc.RunOnce(ctx, at)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Targets != 48 || sum.Due != 2 || sum.Launched != 2 || sum.Messages != 4 || sum.Skipped[SkipNotDue] != 46 ||
		!sum.Hour.Equal(time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("first run %+v", sum)
	}
	again, err := svc.RunOnce(ctx, at.Add(30*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if again.Messages != 0 || again.Launched != 0 || again.Repeated != 4 || again.Skipped[SkipAlreadyLaunched] != 2 {
		t.Fatalf("second run of the hour %+v", again)
	}
	// A retried CronJob is another process: a new ledger, same records.
	other := hourlyService(t, c, rdb, feed, nil, nil)
	if third, err := other.RunOnce(ctx, at); err != nil || third.Messages != 0 {
		t.Fatalf("third run %+v %v", third, err)
	}
	next, err := svc.RunOnce(ctx, at.Add(time.Hour)) // 10:00: targets 10 and 34
	if err != nil || next.Messages != 4 {
		t.Fatalf("next hour %+v %v", next, err)
	}
	recs := consume(t, c, npld, 8)
	got := launchesByURL(t, func() [][]byte {
		var v [][]byte
		for _, r := range recs {
			v = append(v, r.Value)
			if key, _ := hostkey.ForURL(decodeWire(t, r.Value).URL); string(r.Key) != key {
				t.Errorf("record key %q, want host key %q", r.Key, key)
			}
		}
		return v
	}())
	for _, id := range []int{9, 33, 10, 34} {
		for _, u := range []string{"https://s%d.example.org/", "https://s%d.example.org/news/"} {
			url := fmt.Sprintf(u, id)
			l, ok := got[url]
			if !ok {
				t.Errorf("%s not launched", url)
				continue
			}
			wantTS := "20240117090000"
			if id == 10 || id == 34 {
				wantTS = "20240117100000"
			}
			if l.LaunchTimestamp() != wantTS || l.Source() != fmt.Sprintf("tid:%d:https://s%d.example.org/", id, id) {
				t.Errorf("%s: launch timestamp %s source %s", url, l.LaunchTimestamp(), l.Source())
			}
		}
	}
	if n := metricstest.Value(t, reg, "trawler_launcher_launches_total"); n != 8 {
		t.Errorf("launches metric %v, want 8", n)
	}
	if n := metricstest.Value(t, reg, "trawler_launcher_targets_skipped_total"); n != 46+(46+2)+46 {
		t.Errorf("skipped metric %v", n)
	}
	if n := metricstest.Value(t, reg, "trawler_launcher_runs_total"); n != 3 {
		t.Errorf("runs metric %v", n)
	}
}

// Two launchers racing on the same hour send every launch exactly once.
func TestHourlyRunRacingLaunchers(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, npld)
	rdb := embeddedtest.Redis(t)
	feed := writeFeed(t, 2400) // 100 targets, 200 seeds at 09:00
	at := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	sums := make([]Summary, 2)
	errs := make([]error, 2)
	for i := range 2 {
		svc := hourlyService(t, c, rdb, feed, nil, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sums[i], errs[i] = svc.RunOnce(ctx, at)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("launcher %d: %v", i, err)
		}
	}
	if total := sums[0].Messages + sums[1].Messages; total != 200 || sums[0].Repeated+sums[1].Repeated != 200 {
		t.Fatalf("messages %d + %d, repeated %d + %d; want 200 sent once", sums[0].Messages, sums[1].Messages,
			sums[0].Repeated, sums[1].Repeated)
	}
	if got := launchesByURL(t, values(t, c, 200)); len(got) != 200 {
		t.Errorf("%d distinct launches", len(got))
	}
}

// A failed produce gives its claims back: the next run sends them.
func TestHourlyRunProduceFailureReleasesClaims(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, npld)
	rdb := embeddedtest.Redis(t)
	feed := writeFeed(t, 24)
	ledger, err := NewRedisLedger(rdb, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Feeds: []string{feed}, Crawl: CrawlFrequent, Stream: "npld", TimeZone: "Europe/London", Hourly: true}
	failing := &failingProducer{}
	svc, err := New(cfg, Deps{Producer: failing, KeyFunc: hostkey.ForURL, Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	if _, err := svc.RunOnce(ctx, at); err == nil || !strings.Contains(err.Error(), "broker unavailable") {
		t.Fatalf("failing run: %v", err)
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Errorf("%d ledger keys left after a failed produce", n)
	}
	good := hourlyService(t, c, rdb, feed, nil, nil)
	if sum, err := good.RunOnce(ctx, at); err != nil || sum.Messages != 2 {
		t.Fatalf("retry %+v %v", sum, err)
	}
}

// A run that died after claiming (no confirm, no release) blocks the hour
// only until the claim TTL ends.
func TestHourlyRunAfterCrashedRun(t *testing.T) {
	ctx := context.Background()
	c := newCluster(t, npld)
	rdb := embeddedtest.Redis(t)
	feed := writeFeed(t, 24)
	at := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	crashed, err := NewRedisLedger(rdb, "", 300*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{LaunchKey(npld, at, 9, "https://s9.example.org/"), LaunchKey(npld, at, 9, "https://s9.example.org/news/")}
	if got, err := crashed.Claim(ctx, keys); err != nil || !got[0] || !got[1] {
		t.Fatalf("claim %v %v", got, err)
	}
	svc := hourlyService(t, c, rdb, feed, nil, nil)
	if sum, err := svc.RunOnce(ctx, at); err != nil || sum.Messages != 0 || sum.Skipped[SkipAlreadyLaunched] != 1 {
		t.Fatalf("run while claimed %+v %v", sum, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		sum, err := svc.RunOnce(ctx, at)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Messages == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the crashed run's claims never expired")
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}

// A dry run prints what an hour would launch and records nothing.
func TestHourlyDryRunRecordsNothing(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	ledger, err := NewRedisLedger(rdb, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cfg := Config{Feeds: []string{writeFeed(t, 24)}, Crawl: CrawlFrequent, Stream: "npld", TimeZone: "Europe/London",
		Hourly: true, DryRun: true}
	svc, err := New(cfg, Deps{Out: &out, Ledger: ledger, Clock: fixedClock{time.Date(2024, 7, 1, 9, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		out.Reset()
		sum, err := svc.RunOnce(ctx, time.Date(2024, 7, 1, 8, 0, 0, 0, time.UTC)) // 09:00 BST
		if err != nil || sum.Messages != 2 {
			t.Fatalf("dry run %+v %v", sum, err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("printed %q", out.String())
		}
		for _, line := range lines {
			var l messages.Launch
			if err := json.Unmarshal([]byte(line), &l); err != nil || l.LaunchTimestamp() != "20240701080000" {
				t.Errorf("line %s: %v", line, err)
			}
		}
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Errorf("dry run wrote %d keys", n)
	}
}
