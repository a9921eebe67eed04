package frontier

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TakeQueued leases exactly the selected queued URIs (not those in
// flight); finishing them with -6000 leaves the counters exact.
func TestTakeQueued(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, nil, Options{})
		admit(t, f, cand("a.example", "/", "", true), cand("a.example", "/x/1", "L", false),
			cand("a.example", "/x/2", "L", false), cand("a.example", "/y", "L", false), cand("b.example", "/x/1", "L", false))
		inFlight := claim(t, f, 1) // one host's first URI is in flight
		ctx := context.Background()
		sel := Selector{
			Host: func(h string) bool { return h == "a.example" },
			URL:  func(u string) bool { return strings.Contains(u, "/x/") || strings.HasSuffix(u, "a.example/") },
		}
		got, err := f.TakeQueued(ctx, sel, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var taken []string
		for _, c := range got {
			if c.Launch.URL == inFlight[0].Launch.URL {
				t.Errorf("took %s, which was in flight", c.Launch.URL)
			}
			taken = append(taken, c.Launch.URL)
		}
		if len(taken) != 2 && len(taken) != 3 {
			t.Fatalf("taken %v (in flight %v)", taken, urls(inFlight))
		}
		outs := make([]Outcome, len(got))
		for i, c := range got {
			d := Decision{Status: StatusDeleted, Attempts: 1}
			outs[i] = Outcome{Claim: c, Status: StatusDeleted, NotFetched: true, Policy: testPolicy(), Decision: &d}
		}
		if _, err := f.Complete(ctx, outs); err != nil {
			t.Fatal(err)
		}
		finish(t, f, inFlight...)
		st := stats(t, f)
		mustEqual(t, "queued", st.Queued, int64(5-1-len(got)))
		mustEqual(t, "in flight", st.InFlight, 0)
		mustEqual(t, "deleted", totals(t, f).ByStatus[StatusDeleted], int64(len(got)))
		again, err := f.TakeQueued(ctx, sel, time.Minute)
		if err != nil || len(again) != 0 {
			t.Errorf("second take: %v, %v", urls(again), err)
		}
	})
}
