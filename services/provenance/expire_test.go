package provenance

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// provenance.keepSealedDays: a written launch's statistics leave Redis
// once that many days have passed since its metadata WARC was written
// (the WARC keeps them, and stays); with 0 they stay.
func TestSealedStatisticsExpire(t *testing.T) {
	for _, tc := range []struct {
		keepDays    int
		wantExpired bool
	}{{1, true}, {0, false}} {
		t.Run(map[bool]string{true: "kept a day", false: "kept for ever"}[tc.wantExpired], func(t *testing.T) {
			h := newHarness(t)
			var offset atomic.Int64 // the clock runs, and jumps ahead on demand
			now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
			p := profile.Default()
			p.Provenance.KeepSealedDays = tc.keepDays
			s := h.startWith(p, now)
			ctx := context.Background()
			t0 := now().UTC().Truncate(time.Second)
			ts := t0.Format("20060102150405")
			h.produce(marshal(t, event("http://done.example/", 200, t0, "", "launchTimestamp:"+ts)))
			l := harveststats.Launch{Source: src, Timestamp: ts}
			var file string
			eventually(t, "the launch sealed and written", func() bool {
				file, _ = s.Store().Done(ctx, l)
				return file != ""
			})
			offset.Store(int64(2 * 24 * time.Hour))
			if err := s.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			_, err := s.Store().Stats(ctx, l)
			if gone := errors.Is(err, harveststats.ErrUnknownLaunch); gone != tc.wantExpired {
				t.Errorf("statistics two days after writing, keepSealedDays %d: %v", tc.keepDays, err)
			}
			want := map[bool]float64{true: 1, false: 0}[tc.wantExpired]
			if got := testutil.ToFloat64(counter(t, h.reg, "trawler_provenance_launches_expired_total")); got != want {
				t.Errorf("trawler_provenance_launches_expired_total = %v, want %v", got, want)
			}
			warc, err := os.ReadFile(filepath.Join(h.cfg.warcDir(), file))
			if err != nil {
				t.Fatalf("the metadata WARC: %v", err)
			}
			if !tc.wantExpired {
				return
			}
			// Two periods on the launch is forgotten altogether; a late
			// event of it then starts it again, and it is sealed again, but
			// its metadata WARC and report files stay as they were.
			statsFile := filepath.Join(h.cfg.LaunchDir(l), StatsJSON)
			stats, err := os.ReadFile(statsFile)
			if err != nil {
				t.Fatal(err)
			}
			offset.Store(int64(4 * 24 * time.Hour))
			if err := s.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			if ls, _ := s.Store().Launches(ctx); len(ls) != 0 {
				t.Fatalf("launches two periods on: %v, want none", ls)
			}
			late := event("http://done.example/late", 200, now(), "L", "")
			late.ExtraInfo = map[string]any{messages.ExtraLaunchID: ts}
			h.produce(marshal(t, late))
			eventually(t, "the late launch sealed and done again", func() bool {
				f, _ := s.Store().Done(ctx, l)
				return f == file
			})
			if again, _ := os.ReadFile(filepath.Join(h.cfg.warcDir(), file)); !bytes.Equal(again, warc) {
				t.Error("the metadata WARC changed")
			}
			if again, _ := os.ReadFile(statsFile); !bytes.Equal(again, stats) {
				t.Errorf("the launch's statistics file changed:\n%s\nwas:\n%s", again, stats)
			}
		})
	}
}
