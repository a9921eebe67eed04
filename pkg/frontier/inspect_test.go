package frontier

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// NextURIs lists a host's queue in claim order (seeds first, then by
// arrival), at most n, with via and hop path; a claimed URI is no longer
// listed, and a host with nothing queued lists nothing.
func TestNextURIs(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		f := newTestFrontier(t, rdb, newClock(), Options{})
		admit(t, f, cand("a.test", "/x", "L", false), cand("a.test", "/y", "LL", false), cand("a.test", "/", "", true),
			cand("b.test", "/other", "L", false))
		tests := []struct {
			n    int
			want []string
		}{
			{10, []string{"http://a.test/", "http://a.test/x", "http://a.test/y"}},
			{2, []string{"http://a.test/", "http://a.test/x"}},
			{0, nil},
			{-1, nil},
		}
		for _, tt := range tests {
			got, err := f.NextURIs(ctx, "a.test", tt.n)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("n=%d: %+v, want %v", tt.n, got, tt.want)
			}
			for i, u := range got {
				if u.URL != tt.want[i] {
					t.Fatalf("n=%d: %+v, want %v", tt.n, got, tt.want)
				}
			}
		}
		got, _ := f.NextURIs(ctx, "a.test", 10)
		if !got[0].Seed || got[0].Level != LevelForced || got[2].Hops != "LL" || got[2].Via != "http://a.test/" || got[1].Seed {
			t.Fatalf("fields: %+v", got)
		}
		claim(t, f, 1) // one per ready host: a.test's seed, or b.test's only URI
		after, _ := f.NextURIs(ctx, "a.test", 10)
		other, _ := f.NextURIs(ctx, "b.test", 10)
		if len(after)+len(other) != 3 {
			t.Fatalf("after a claim: %+v and %+v, want 3 left", after, other)
		}
		// A forced re-queue of a queued URI supersedes its entry: it is
		// listed once, where it will be claimed (level 0).
		forced := cand("a.test", "/y", "LL", false)
		forced.Launch.ForceFetch = true
		admit(t, f, forced)
		again, _ := f.NextURIs(ctx, "a.test", 10)
		ys := 0
		for _, u := range again {
			if u.URL == "http://a.test/y" {
				ys++
				if u.Level != LevelForced {
					t.Fatalf("forced URI listed at level %d: %+v", u.Level, again)
				}
			}
		}
		if ys != 1 {
			t.Fatalf("forced URI listed %d times: %+v", ys, again)
		}
		if none, err := f.NextURIs(ctx, "unknown.test", 10); err != nil || len(none) != 0 {
			t.Fatalf("unknown host: %+v %v", none, err)
		}
	})
}

// BackingOff lists the hosts a 429 or 503 holds back, the longest wait
// first, with the status and how many came in a row; n bounds the list,
// and a host whose back-off ended is no longer listed.
func TestBackingOff(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		ctx := context.Background()
		pol := backOffPolicy()
		admit(t, f, cand("slow.test", "/a", "", true), cand("busy.test", "/a", "", true), cand("fine.test", "/a", "", true))
		for _, c := range claim(t, f, 3) {
			var o Outcome
			switch c.Host {
			case "slow.test": // Retry-After: 3 s, longer than busy's first back-off (1 s base)
				d := pol.DecideThrottle(c, 429, 3*time.Second, ck.now())
				o = Outcome{Claim: c, Status: 429, Policy: pol, Decision: &d}
			case "busy.test":
				o = Outcome{Claim: c, Status: 503, Policy: pol}
			default:
				o = Outcome{Claim: c, Status: 200, Policy: pol}
			}
			if _, err := f.Complete(ctx, []Outcome{o}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := f.BackingOff(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Host != "slow.test" || got[0].Status != 429 || got[0].InARow != 1 ||
			!got[0].Until.Equal(ck.now().Add(3*time.Second)) || got[1].Host != "busy.test" || got[1].Status != 503 {
			t.Fatalf("backing off: %+v", got)
		}
		if one, _ := f.BackingOff(ctx, 1); len(one) != 1 || one[0].Host != "slow.test" {
			t.Fatalf("n=1: %+v", one)
		}
		if none, _ := f.BackingOff(ctx, 0); len(none) != 0 {
			t.Fatalf("n=0: %+v", none)
		}
		ck.add(2500 * time.Millisecond) // busy's back-off (1 s, jittered) is over
		if got, _ := f.BackingOff(ctx, 10); len(got) != 1 || got[0].Host != "slow.test" {
			t.Fatalf("after busy's back-off: %+v", got)
		}
	})
}
