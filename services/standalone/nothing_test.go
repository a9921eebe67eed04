package standalone

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/services/launcher"
	"github.com/trawler-crawl/trawler/services/worker"
)

// When a run archived nothing, the summary says why if the cause is input
// that was refused or rejected, and only then.
func TestNothingArchivedReason(t *testing.T) {
	loop := []worker.Refusal{{Host: "127.0.0.1:8080", Reason: "127.0.0.1 is loopback"}}
	tests := []struct {
		name string
		s    Summary
		want []string // substrings; nil: no reason
	}{
		{"every seed refused", Summary{EndedBy: endedIdle, Launched: 1,
			refusalSummary: refusalSummary{Refused: loop, RefusedHosts: 1, EverySeed: true}},
			[]string{"every seed was refused by the address guard: 127.0.0.1:8080 (127.0.0.1 is loopback)", "fetch.allowPrivateAddresses=true"}},
		{"a feed target's host refused", Summary{EndedBy: endedIdle, Launched: 1,
			refusalSummary: refusalSummary{Refused: loop, RefusedHosts: 12}},
			[]string{"the address guard refused 127.0.0.1:8080 (127.0.0.1 is loopback) and 11 more"}},
		{"something archived", Summary{EndedBy: endedIdle, Launched: 2,
			refusalSummary: refusalSummary{Archived: 3, Refused: loop, RefusedHosts: 1}}, nil},
		{"interrupted", Summary{EndedBy: endedInterrupted, Launched: 1,
			refusalSummary: refusalSummary{Refused: loop, RefusedHosts: 1, EverySeed: true}}, nil},
		{"nothing due, nothing refused", Summary{EndedBy: endedIdle, Launched: 1}, nil},
		{"every feed line bad", Summary{EndedBy: endedIdle, Feed: &launcher.Summary{BadLines: 4}},
			[]string{"every feed line was rejected (4 bad lines, 0 feeds unreadable)"}},
		{"feed unreadable", Summary{EndedBy: endedIdle, Feed: &launcher.Summary{FeedErrors: 1}},
			[]string{"every feed line was rejected (0 bad lines, 1 feeds unreadable)"}},
		{"a valid target not due", Summary{EndedBy: endedIdle, Feed: &launcher.Summary{Targets: 1, BadLines: 4}}, nil},
		{"bad lines beside seeds", Summary{EndedBy: endedIdle, Launched: 1, Feed: &launcher.Summary{BadLines: 4}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.s.NothingArchived()
			if tt.want == nil && got != "" {
				t.Fatalf("reason %q, want none", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("reason %q lacks %q", got, w)
				}
			}
			var out bytes.Buffer
			tt.s.Print(&out)
			if hint := strings.Contains(out.String(), "hint:"); hint != (tt.want != nil) {
				t.Errorf("summary with hint %v, want %v:\n%s", hint, tt.want != nil, out.String())
			}
		})
	}
}

// Real runs that archive nothing for refused or rejected input: seeds on
// loopback without fetch.allowPrivateAddresses, and a feed of bad lines.
func TestStandaloneNothingArchived(t *testing.T) {
	srv := startSite(t, testweb.Config{Seed: 5, Hosts: 2, PagesPerHost: 3})
	bad, err := os.ReadFile("testdata/crawl-feed-bad.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(bad), "\n") {
		// Keep only the bad lines (a valid one would be launched).
		if l != "" && !strings.Contains(l, `"valid"`) && !strings.Contains(l, "unknown extra") && !strings.Contains(l, "bad seed URL") {
			lines = append(lines, l)
		}
	}
	feed := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(feed, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	guarded := testProfile()
	guarded.Fetch.AllowPrivateAddresses = false
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"seeds on loopback", Config{Seeds: srv.Seeds()},
			[]string{"every seed was refused by the address guard", "is loopback", "fetch.allowPrivateAddresses=true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.DataDir = t.TempDir()
			sum := runCrawlProfile(t, tt.cfg, srv, guarded)
			why := sum.NothingArchived()
			for _, w := range tt.want {
				if !strings.Contains(why, w) {
					t.Errorf("reason %q lacks %q", why, w)
				}
			}
			if sum.Archived != 0 {
				t.Errorf("archived %d captures, want none", sum.Archived)
			}
		})
	}
	// A local feed of bad lines is refused before anything starts
	// (input.go), with the error the command exits 3 on.
	t.Run("every feed line bad", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "data")
		_, err := Run(context.Background(), Config{Feeds: []string{feed}, DataDir: dir, Crawl: "fc", Stream: "npld", TimeZone: "UTC",
			KafkaListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Threads: 1, UntilIdle: true},
			Deps{Profile: guarded, Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry()})
		if !errors.Is(err, ErrFeedRejected) {
			t.Fatalf("err = %v, want ErrFeedRejected", err)
		}
		if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
			t.Errorf("data directory created for a run refused at start: %v", serr)
		}
	})
}
