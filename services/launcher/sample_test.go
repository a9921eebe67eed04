package launcher

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"
)

// sampleFeeds are the feeds the repository ships for a first run
// (compose's launcher reads the directory; docs/feeds.md uses them).
const sampleFeeds = "../../deploy/feeds"

// TestSampleFeedsLaunch: the shipped sample feeds launch a crawl today,
// as standalone launches a feed (every target whose schedule is running
// now) and as `launcher serve` does (the targets due each hour: some hour
// of the coming day), with no bad line. A sample whose schedule has
// ended launches nothing and teaches nothing.
func TestSampleFeedsLaunch(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sampleFeeds, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample feeds in %s (%v)", sampleFeeds, err)
	}
	now := time.Now()
	tests := []struct {
		name   string
		hourly bool
		hours  int // hours from now tried, one run each
	}{
		{"standalone: every running schedule, now", false, 1},
		{"launcher serve: due in some hour of the next day", true, 25},
	}
	for _, file := range files {
		for _, tc := range tests {
			t.Run(filepath.Base(file)+"/"+tc.name, func(t *testing.T) {
				var out bytes.Buffer
				svc, err := New(Config{Feeds: []string{file}, Crawl: CrawlFrequent, Stream: "npld",
					TimeZone: "Europe/London", Hourly: tc.hourly, DryRun: true}, Deps{Out: &out, Clock: fixedClock{now}})
				if err != nil {
					t.Fatal(err)
				}
				messages := 0
				for h := range tc.hours {
					sum, err := svc.RunOnce(context.Background(), now.Add(time.Duration(h)*time.Hour))
					if err != nil {
						t.Fatal(err)
					}
					if sum.BadLines > 0 {
						t.Fatalf("%d bad lines: %v", sum.BadLines, sum.Errors)
					}
					if sum.Targets == 0 {
						t.Fatal("no target read")
					}
					messages += sum.Messages
				}
				if messages == 0 {
					t.Errorf("launched nothing in %d hour(s) from %s; printed %q", tc.hours, now.Format(time.RFC3339), out.String())
				}
			})
		}
	}
}
