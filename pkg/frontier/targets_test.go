package frontier

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// candOf is cand with the given source tag.
func candOf(host, path, source string) Candidate {
	c := cand(host, path, "L", false)
	c.Launch.ParentURLMetadata.HeritableData.Source = source
	return c
}

func targetCounts(t *testing.T, f *Frontier) map[string]TargetCount {
	t.Helper()
	tc, err := f.TargetCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]TargetCount{}
	for _, c := range tc {
		out[c.Source] = c
	}
	return out
}

// Pausing one target of a host does not hold up its other targets, even
// when the paused target's URIs are at the head of the queue; a resume
// puts them back first in line. Per-target counts stay exact throughout.
func TestPausedTargetDoesNotBlockHost(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		ctx := context.Background()
		check := func(step string) {
			t.Helper()
			checkInvariants(t, rdb, "{t}:")
			if t.Failed() {
				t.Fatalf("after %s", step)
			}
		}
		admit(t, f, candOf("a", "/p1", "tid:1"), candOf("a", "/p2", "tid:1"), candOf("a", "/o1", "tid:2"),
			candOf("a", "/o2", "tid:2"))
		mustEqual(t, "counts", targetCounts(t, f)["tid:1"], TargetCount{Source: "tid:1", Queued: 2})
		if err := f.PauseSource(ctx, "tid:1"); err != nil {
			t.Fatal(err)
		}
		cs := claim(t, f, 1)
		mustEqual(t, "claimed with tid:1 paused", sprint(urls(cs)), "[http://a/o1]")
		check("claim past a paused target")
		st := stats(t, f)
		mustEqual(t, "held", st.Held, int64(2))
		mustEqual(t, "queued, held included", st.Queued, int64(3))
		tc := targetCounts(t, f)
		mustEqual(t, "tid:1", tc["tid:1"], TargetCount{Source: "tid:1", Queued: 2, Paused: true})
		mustEqual(t, "tid:2", tc["tid:2"], TargetCount{Source: "tid:2", Queued: 1, InFlight: 1})
		us, err := f.URIState(ctx, "http://a/p1")
		if err != nil || us.State != URIHeld {
			t.Fatalf("state of a held URI: %+v, %v", us, err)
		}
		// A retry of the other target's URI: counted queued again.
		outs := []Outcome{{Claim: cs[0], Status: -2, Policy: testPolicy()}}
		if _, err := f.Complete(ctx, outs); err != nil {
			t.Fatal(err)
		}
		check("retry")
		mustEqual(t, "tid:2 after a retry", targetCounts(t, f)["tid:2"], TargetCount{Source: "tid:2", Queued: 2})
		ck.add(time.Minute)
		cs = claim(t, f, 1)
		mustEqual(t, "claimed after the retry delay", sprint(urls(cs)), "[http://a/o1]")
		finish(t, f, cs...)
		// An expired lease puts the URI back, counted queued again.
		cs = claim(t, f, 1)
		mustEqual(t, "claimed", sprint(urls(cs)), "[http://a/o2]")
		ck.add(2 * time.Minute)
		if n, err := f.Reap(ctx); err != nil || n != 1 {
			t.Fatalf("reaped %d: %v", n, err)
		}
		check("reap")
		mustEqual(t, "tid:2 after a reap", targetCounts(t, f)["tid:2"], TargetCount{Source: "tid:2", Queued: 1})
		finish(t, f, claim(t, f, 1)...)
		if cs := claim(t, f, 1); len(cs) != 0 {
			t.Fatalf("claimed %v while its target is paused", urls(cs))
		}
		if _, ok := targetCounts(t, f)["tid:2"]; ok {
			t.Fatal("a target with nothing queued or in flight is still listed")
		}
		// Resume: the held URIs come back, first in line.
		admit(t, f, candOf("a", "/o3", "tid:2"))
		n, err := f.ResumeSource(ctx, "tid:1")
		if err != nil || n != 2 {
			t.Fatalf("resumed %d: %v", n, err)
		}
		check("resume")
		cs = claim(t, f, 1)
		mustEqual(t, "first after the resume", sprint(urls(cs)), "[http://a/p1]")
		finish(t, f, cs...)
		// Pause again: the held URI can still be deleted (a terminate).
		if err := f.PauseSource(ctx, "tid:1"); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "claimed past the paused target again", sprint(urls(claim(t, f, 1))), "[http://a/o3]")
		taken, err := f.TakeQueued(ctx, Selector{Source: "tid:1"}, time.Minute)
		if err != nil || len(taken) != 1 || taken[0].Launch.URL != "http://a/p2" {
			t.Fatalf("took %d: %v", len(taken), err)
		}
		check("take held")
		mustEqual(t, "tid:1 taken", targetCounts(t, f)["tid:1"], TargetCount{Source: "tid:1", InFlight: 1, Paused: true})
		d := Decision{Status: StatusDeleted}
		if _, err := f.Complete(ctx, []Outcome{{Claim: taken[0], Status: StatusDeleted, NotFetched: true, Policy: testPolicy(), Decision: &d}}); err != nil {
			t.Fatal(err)
		}
		check("delete")
		if _, ok := targetCounts(t, f)["tid:1"]; ok {
			t.Fatal("a deleted target is still counted")
		}
	})
}

// A long run of a paused target's URIs is set aside over several claims,
// never more than HOLD_MAX per host and call.
func TestPausedTargetLongQueue(t *testing.T) {
	rdb := backends()[0].open(t)
	f := newTestFrontier(t, rdb, newClock(), Options{})
	ctx := context.Background()
	var cs []Candidate
	for i := range 2500 {
		cs = append(cs, candOf("a", "/p"+sprint(i), "tid:1"))
	}
	admit(t, f, append(cs, candOf("a", "/other", "tid:2"))...)
	if err := f.PauseSource(ctx, "tid:1"); err != nil {
		t.Fatal(err)
	}
	var got []*Claim
	for i := 0; i < 5 && len(got) == 0; i++ {
		got = claim(t, f, 1)
	}
	mustEqual(t, "claimed past 2500 paused URIs", sprint(urls(got)), "[http://a/other]")
	checkInvariants(t, rdb, "{t}:")
	mustEqual(t, "held", stats(t, f).Held, int64(2500))
}
