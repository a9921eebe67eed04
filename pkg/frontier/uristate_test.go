package frontier

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// URIState says where exactly one URI is: queued (level, place, due time
// after a retry), in flight (lease, since when), finished, or nowhere.
func TestURIState(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		ctx := context.Background()
		state := func(u string) URIState {
			t.Helper()
			st, err := f.URIState(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			return st
		}
		mustEqual(t, "unknown", state("http://a/x").State, URINone)
		admit(t, f, cand("a", "/", "", true), cand("a", "/1", "L", false), cand("a", "/2", "L", false))
		st := state("http://a/2")
		if st.State != URIQueued || st.Host != "a" || st.Position != 1 || st.Ahead != 2 || st.Level == 0 || st.Retries != 0 {
			t.Fatalf("queued: %+v", st)
		}
		cs := claim(t, f, 1)
		st = state("http://a/")
		if st.State != URIInFlight || st.Lease != cs[0].Lease() || !st.LeasedAt.Equal(ck.now()) || !st.LeaseExpires.Equal(ck.now().Add(time.Minute)) {
			t.Fatalf("in flight: %+v (lease %s)", st, cs[0].Lease())
		}
		// A retry: queued again at the head, due after the retry delay.
		if _, err := f.Complete(ctx, []Outcome{{Claim: cs[0], Status: -2, Policy: testPolicy()}}); err != nil {
			t.Fatal(err)
		}
		st = state("http://a/")
		if st.State != URIQueued || st.Retries != 1 || st.Position != 0 || !st.Due.Equal(ck.now().Add(10*time.Second)) {
			t.Fatalf("retrying: %+v", st)
		}
		ck.add(time.Minute)
		finish(t, f, claim(t, f, 1)...)
		st = state("http://a/")
		if st.State != URIFinished || st.FinishedAt.Unix() != ck.now().Unix() {
			t.Fatalf("finished: %+v", st)
		}
		if _, err := f.URIState(ctx, "mailto:x@y"); err == nil {
			t.Error("URIState of a URL without a host")
		}
	})
}
