package worker

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// guardClock is a settable clock for the write guard.
type guardClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *guardClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *guardClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The guard's state through sequences of failures, successes, probes and
// time: when claims stop and resume, what /readyz, the gauge and the log
// say, and how probes are spaced.
func TestWriteGuard(t *testing.T) {
	const every = 10 * time.Second
	boom := errors.New("read-only file system")
	type state struct {
		failing   bool
		limit     int           // claimLimit's n
		wait      time.Duration // claimLimit's wait when n is 0
		failLines int           // "writes failing" lines so far
		okLines   int           // "writes succeed again" lines so far
	}
	tests := []struct {
		name string
		// steps: "fail", "ok", "+<duration>" (clock), "probe-fails" /
		// "probe-works" (the test write from now on), "start" (a thread
		// may start a claim), "!start" (it may not)
		steps []string
		want  state
	}{
		{"two failures are a hiccup", []string{"fail", "fail"},
			state{limit: -1}},
		{"three in a row stop claims", []string{"fail", "fail", "fail", "!start"},
			state{failing: true, limit: 0, wait: every, failLines: 1}},
		{"a success in between resets the count", []string{"fail", "fail", "ok", "fail", "fail", "start"},
			state{limit: -1}},
		{"a good test write lets one claim through", []string{"fail", "fail", "fail", "+10s", "limit", "start", "!start"},
			state{failing: true, limit: 0, wait: every, failLines: 1}},
		{"the probe's success resumes claims", []string{"fail", "fail", "fail", "+10s", "limit", "start", "ok", "start"},
			state{limit: -1, failLines: 1, okLines: 1}},
		{"a failing test write claims nothing", []string{"fail", "fail", "fail", "probe-fails", "+10s", "limit", "!start"},
			state{failing: true, limit: 0, wait: every, failLines: 1}},
		// Probes 10 s after the stop, then 10 s, 20 s, 40 s ... apart.
		{"failed probes double the wait between probes", []string{"fail", "fail", "fail", "+10s", "limit", "start", "fail", "+10s", "limit"},
			state{failing: true, limit: 0, wait: 20 * time.Second, failLines: 1}},
		{"failing again after a recovery says so again", []string{"fail", "fail", "fail", "+10s", "limit", "ok", "fail", "fail", "fail"},
			state{failing: true, limit: 0, wait: every, failLines: 2, okLines: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, buf := testlog.New(slog.LevelInfo)
			m := newWriteMetrics()
			g := newWriteGuard([]diskDir{{"warcs", t.TempDir()}}, m, log)
			ck := &guardClock{t: time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)}
			g.now = ck.now
			probeErr := error(nil)
			g.write = func(dir string) error {
				if probeErr != nil {
					return probeErr
				}
				return writeProbeFile(dir)
			}
			for _, s := range tt.steps {
				switch {
				case s == "fail":
					g.fail(writeWARC, "http://example.org/", boom)
				case s == "ok":
					g.ok()
				case s == "probe-fails":
					probeErr = boom
				case s == "limit":
					g.claimLimit()
				case s == "start" || s == "!start":
					if got := g.start(); got != (s == "start") {
						t.Fatalf("step %s: start() = %v", s, got)
					}
				case strings.HasPrefix(s, "+"):
					d, err := time.ParseDuration(s[1:])
					if err != nil {
						t.Fatal(err)
					}
					ck.add(d)
				default:
					t.Fatalf("unknown step %q", s)
				}
			}
			got := state{failing: g.reason() != ""}
			got.limit, got.wait = g.claimLimit()
			logs := buf.String()
			got.failLines = strings.Count(logs, "writes failing: claiming no new URIs")
			got.okLines = strings.Count(logs, "writes succeed again")
			if got != tt.want {
				t.Errorf("state %+v, want %+v\n%s", got, tt.want, logs)
			}
			gauge := 0.0
			if tt.want.failing {
				gauge = 1
				if !strings.Contains(g.reason(), "read-only file system") {
					t.Errorf("reason %q does not name the error", g.reason())
				}
			}
			if v := testutil.ToFloat64(m.failing); v != gauge {
				t.Errorf("trawler_worker_writes_failing = %v, want %v", v, gauge)
			}
			fails := float64(strings.Count(strings.Join(tt.steps, " "), "fail") - strings.Count(strings.Join(tt.steps, " "), "probe-fails"))
			if v := testutil.ToFloat64(m.failures.WithLabelValues(writeWARC)); v != fails {
				t.Errorf("trawler_worker_write_failures_total{what=warc} = %v, want %v", v, fails)
			}
		})
	}
}

// While writes fail the guard logs one line a minute at most, however
// many URIs fail or test writes run.
func TestWriteGuardLogsOnceAMinute(t *testing.T) {
	log, buf := testlog.New(slog.LevelInfo)
	g := newWriteGuard([]diskDir{{"warcs", t.TempDir()}}, newWriteMetrics(), log)
	ck := &guardClock{t: time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)}
	g.now = ck.now
	g.write = func(string) error { return errors.New("not a directory") }
	boom := errors.New("read-only file system")
	for i := range 3 {
		g.fail(writePublish, "http://example.org/", boom)
		if i == 0 {
			ck.add(time.Second)
		}
	}
	// Two minutes of failing test writes and URIs every second.
	for range 120 {
		ck.add(time.Second)
		g.claimLimit()
		g.fail(writeWARC, "http://example.org/", boom)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// The first failure, the stop, and one line in each of the two
	// minutes after it.
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), buf)
	}
	for _, l := range lines {
		if !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "err=") {
			t.Errorf("line without level ERROR or the error: %s", l)
		}
	}
}

// The back-off of a URI that could not be recorded doubles with the
// failures in a row, from the profile's back-off base to its cap.
func TestWriteBackoff(t *testing.T) {
	def := profile.Default().Politeness
	short := profile.Politeness{BackOffBaseMs: 300, BackOffMaxMs: 1200}
	tests := []struct {
		pol  profile.Politeness
		n    int
		want time.Duration
	}{
		{short, 0, 300 * time.Millisecond},
		{short, 1, 300 * time.Millisecond},
		{short, 2, 600 * time.Millisecond},
		{short, 3, 1200 * time.Millisecond},
		{short, 4, 1200 * time.Millisecond},
		{short, 1000, 1200 * time.Millisecond},
		{profile.Politeness{}, 5, 0},
		{def, 1, 10 * time.Second},
		{def, 40, 15 * time.Minute},
	}
	for _, tt := range tests {
		if got := writeBackoff(tt.pol, tt.n); got != tt.want {
			t.Errorf("writeBackoff(base %d ms, max %d ms, n=%d) = %v, want %v",
				tt.pol.BackOffBaseMs, tt.pol.BackOffMaxMs, tt.n, got, tt.want)
		}
	}
}
