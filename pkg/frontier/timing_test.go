package frontier

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// On the real clock, successive fetches of one host are never closer than
// the politeness delay, and typically (the median gap) come within a small
// tolerance of it; a loaded machine may stall a single fetch longer.
func TestPolitenessTiming(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, nil, Options{})
		ctx := context.Background()
		const n, delay, tolerance = 7, 150 * time.Millisecond, 60 * time.Millisecond
		var cs []Candidate
		for i := range n {
			cs = append(cs, cand("slow", "/"+string(rune('a'+i)), "L", false), cand("other", "/"+string(rune('a'+i)), "L", false))
		}
		admit(t, f, cs...)
		pol := testPolicy()
		pol.Politeness.MinDelayMs, pol.Politeness.MaxDelayMs = delay.Milliseconds(), delay.Milliseconds()
		var mu sync.Mutex
		claimed := map[string][]time.Time{}
		deadline := time.Now().Add(30 * time.Second)
		for done := 0; done < 2*n; {
			if time.Now().After(deadline) {
				t.Fatalf("crawled %d of %d before the deadline", done, 2*n)
			}
			got, wait, err := f.Claim(ctx, 4, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			var outs []Outcome
			for _, c := range got {
				mu.Lock()
				claimed[c.Host] = append(claimed[c.Host], now)
				mu.Unlock()
				outs = append(outs, Outcome{Claim: c, Status: 200, Duration: time.Millisecond, Policy: pol})
			}
			if _, err := f.Complete(ctx, outs); err != nil {
				t.Fatal(err)
			}
			done += len(got)
			if len(got) == 0 {
				time.Sleep(min(max(wait, time.Millisecond), 5*time.Millisecond)) // a crawl loop's poll
			}
		}
		for host, ts := range claimed {
			var gaps []time.Duration
			for i := 1; i < len(ts); i++ {
				gap := ts[i].Sub(ts[i-1])
				// Ready times are whole milliseconds.
				if gap < delay-time.Millisecond {
					t.Errorf("%s: fetch %d came %v after the previous one, before the %v delay", host, i, gap, delay)
				}
				gaps = append(gaps, gap)
			}
			slices.Sort(gaps)
			if med := gaps[len(gaps)/2]; med > delay+tolerance {
				t.Errorf("%s: median gap %v, want %v (+%v); gaps %v", host, med, delay, tolerance, gaps)
			}
		}
	})
}
