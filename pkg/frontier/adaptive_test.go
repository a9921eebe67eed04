package frontier

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Under recrawlAdaptive a URI's own interval decides when it is due: a
// launch timestamp it inherits no longer makes it due, while a launch's
// seeds and forced URIs still are; HeldByAdaptive says which candidates
// that held back, and the totals count them by launch.
func TestAdaptiveRecrawl(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		last := ck.now().Add(-2 * time.Hour)
		launch := messages.Timestamp14(ck.now().Add(-time.Minute))
		mk := func(path string, seed, adaptive bool, interval time.Duration) Candidate {
			c := cand("a", path, "L", seed)
			if seed {
				c = cand("a", path, "", true)
			}
			c.Policy.Frontier.RecrawlIntervalSeconds = 3600
			c.Policy.Frontier.RecrawlAdaptive = adaptive
			c.Launch.ParentURLMetadata.HeritableData.LaunchTimestamp = launch
			c.LastCrawled, c.AdaptiveInterval = last, interval
			return c
		}
		forced := mk("/6", false, true, 6*time.Hour)
		forced.Launch.ForceFetch = true
		noLaunch := mk("/7", false, true, 6*time.Hour)
		noLaunch.Launch.ParentURLMetadata.HeritableData.LaunchTimestamp = ""
		noLaunch.LastCrawled = ck.now().Add(-30 * time.Minute)
		tests := []struct {
			name string
			c    Candidate
			want Verdict
			held bool
		}{
			{"not adaptive: the launch makes it due", mk("/1", false, false, 6*time.Hour), Admitted, false},
			{"adaptive, interval not run out", mk("/2", false, true, 6*time.Hour), Seen, true},
			{"adaptive, interval run out", mk("/3", false, true, time.Hour), Admitted, false},
			{"adaptive without a stored interval", mk("/4", false, true, 0), Admitted, false},
			{"a launch's seed is due", mk("/5", true, true, 6*time.Hour), Admitted, false},
			{"a forced URI is due", forced, Admitted, false},
			{"within both intervals: nothing saved", noLaunch, Seen, false},
		}
		for _, tc := range tests {
			mustEqual(t, tc.name, admit(t, f, tc.c)[0], tc.want)
			mustEqual(t, tc.name+" (held)", tc.c.HeldByAdaptive(ck.now()), tc.held)
		}
		ctx := context.Background()
		for _, urls := range [][]string{{"http://a/2", "http://a/8"}, {"http://a/2", "http://a/9", "http://a/10"}, nil} {
			if err := f.CountAdaptiveSaved(ctx, "20260101000000", urls); err != nil {
				t.Fatal(err)
			}
		}
		if err := f.CountAdaptiveSaved(ctx, "", []string{"http://a/2"}); err != nil {
			t.Fatal(err)
		}
		saved := totals(t, f).AdaptiveSaved
		mustEqual(t, "saved in the launch (each URL once)", saved["20260101000000"], int64(4))
		mustEqual(t, "saved outside launches", saved[""], int64(1))
		mustEqual(t, "launches", len(saved), 2)
	})
}
