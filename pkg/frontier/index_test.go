package frontier

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// The URI index grows by splitting buckets (lib.lua). Every URI's state
// survives the splits: URIState finds queued, in-flight and finished
// URIs, re-admissions are answered from the index, each entry sits in
// the bucket its hash says, and on redis-server every bucket stays a
// listpack.
func TestIndexSplits(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		f := newTestFrontier(t, rdb, newClock(), Options{})
		const n = 3000
		cs := make([]Candidate, n)
		for i := range cs {
			cs[i] = cand("h"+strconv.Itoa(i%3), fmt.Sprintf("/p%d", i), "L", false)
		}
		for i := 0; i < n; i += 500 {
			admit(t, f, cs[i:i+500]...)
		}
		finished := map[string]bool{}
		for range 100 {
			got := claim(t, f, 3)
			finish(t, f, got...)
			for _, c := range got {
				finished[c.Launch.URL] = true
			}
		}
		inFlight := claim(t, f, 3)
		mustEqual(t, "finished", len(finished), 300)
		mustEqual(t, "in flight", len(inFlight), 3)

		meta := rdb.HMGet(ctx, "{t}:meta", "ixb", "ixn").Val()
		mustEqual(t, "entries", toString(meta[1]), strconv.Itoa(n))
		// The fewest buckets of at most 40 entries on average.
		mustEqual(t, "buckets", toString(meta[0]), strconv.Itoa((n+39)/40))
		checkInvariants(t, rdb, "{t}:")
		if isRedisServer(rdb) {
			for b := range (n + 39) / 40 {
				if enc := rdb.ObjectEncoding(ctx, "{t}:x:"+strconv.Itoa(b)).Val(); enc != "listpack" {
					t.Errorf("bucket %d is a %s", b, enc)
				}
			}
		}

		for _, c := range inFlight {
			if st, err := f.URIState(ctx, c.Launch.URL); err != nil || st.State != URIInFlight || st.Lease != c.Lease() {
				t.Errorf("%s: %+v, %v; want in flight under %s", c.Launch.URL, st, err, c.Lease())
			}
			finished[c.Launch.URL] = true // re-admitted below as already queued
		}
		queued := 0
		for i, c := range cs {
			st, err := f.URIState(ctx, c.Launch.URL)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case st.State == URIInFlight:
			case finished[c.Launch.URL]:
				if st.State != URIFinished {
					t.Errorf("URI %d: %+v, want finished", i, st)
				}
			case st.State != URIQueued || st.Position < 0:
				t.Errorf("URI %d: %+v, want queued", i, st)
			default:
				queued++
			}
		}
		mustEqual(t, "queued", queued, n-303)
		verdicts := map[Verdict]int{}
		for i := 0; i < n; i += 500 {
			for _, v := range admit(t, f, cs[i:i+500]...) {
				verdicts[v]++
			}
		}
		mustEqual(t, "re-admitted", fmt.Sprint(verdicts), fmt.Sprint(map[Verdict]int{Queued: n - 300, Seen: 300}))
	})
}
