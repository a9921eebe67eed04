package standalone

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/frontier"
)

// fakeCrawl is a progress source whose numbers the test sets.
type fakeCrawl struct {
	t  frontier.Totals
	st frontier.Stats
}

func (f *fakeCrawl) source(dir string) progressSource {
	return progressSource{
		totals:  func(context.Context) (frontier.Totals, error) { return f.t, nil },
		stats:   func(context.Context) (frontier.Stats, error) { return f.st, nil },
		warcDir: dir,
	}
}

// TestProgressLines: the terminal line and the log line carry the totals,
// the rate of this run only, the queues, the retries and the WARC count.
func TestProgressLines(t *testing.T) {
	start := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		base, now frontier.Totals
		st        frontier.Stats
		at        time.Duration
		wantLine  string
		wantLog   []string
		notInLine []string
	}{
		{
			name: "fresh crawl", now: frontier.Totals{URIs: 300, Bytes: 12_345_678},
			st: frontier.Stats{Queued: 40, InFlight: 8}, at: 10 * time.Second,
			wantLine:  "[10s] 300 URIs, 30.0/s, 12.3 MB; queued 40, in flight 8; 2 WARC files (1 open)",
			wantLog:   []string{"uris=300", "uris_this_run=300", "uris_per_second=30.00", "queued=40", "in_flight=8", "warc_files=2", "warc_files_open=1"},
			notInLine: []string{"retry"},
		},
		{
			// The totals are crawl-wide; the rate counts this run's URIs.
			name: "continued crawl waiting for retries", base: frontier.Totals{URIs: 1000}, now: frontier.Totals{URIs: 1100, Bytes: 999},
			st: frontier.Stats{Queued: 5, RetryURIs: 5, RetryHosts: 1, NextRetry: start.Add(50 * time.Second)}, at: 20 * time.Second,
			wantLine: "[20s] 1100 URIs, 5.0/s, 999 B; queued 5, in flight 0; 5 waiting for retry, next in 30s; 2 WARC files (1 open)",
			wantLog:  []string{"uris=1100", "uris_this_run=100", "uris_per_second=5.00", "waiting_for_retry=5", "next_retry_in=30s"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := writeFile(dir, "A-1.warc.gz"); err != nil {
				t.Fatal(err)
			}
			if err := writeFile(dir, "A-2.warc.gz.open"); err != nil { // still being written
				t.Fatal(err)
			}
			fc := &fakeCrawl{t: tc.base}
			var term, logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			onTerm := newProgressTo(context.Background(), fc.source(dir), &term, log, start)
			inLog := newProgressTo(context.Background(), fc.source(dir), nil, log, start)
			fc.t, fc.st = tc.now, tc.st
			onTerm.report(context.Background(), start.Add(tc.at))
			inLog.report(context.Background(), start.Add(tc.at))
			line := strings.TrimSpace(term.String())
			if line != tc.wantLine {
				t.Errorf("terminal line\n got %q\nwant %q", line, tc.wantLine)
			}
			for _, w := range tc.notInLine {
				if strings.Contains(line, w) {
					t.Errorf("terminal line %q mentions %q", line, w)
				}
			}
			for _, w := range tc.wantLog {
				if !strings.Contains(logs.String(), w) {
					t.Errorf("log line %q lacks %q", logs.String(), w)
				}
			}
			if onTerm.every() != terminalProgressEvery || inLog.every() != logProgressEvery {
				t.Errorf("intervals %v, %v", onTerm.every(), inLog.every())
			}
		})
	}
}

func TestProgressHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 12_345_678: "12.3 MB", 5_000_000_000: "5.0 GB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func writeFile(dir, name string) error {
	return os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644)
}
