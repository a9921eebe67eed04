package frontier

import (
	"context"
	"testing"

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
