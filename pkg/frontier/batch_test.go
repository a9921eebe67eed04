package frontier

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// Concurrent callers through a Batcher each get their own results, and
// share script calls.
func TestBatcher(t *testing.T) {
	rdb := backends()[0].open(t)
	f := newTestFrontier(t, rdb, newClock(), Options{})
	b := NewBatcher(f)
	ctx := context.Background()
	const callers, each = 16, 50
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var cs []Candidate
			for i := range each {
				// Every caller offers its own URIs and one shared URI.
				path := fmt.Sprintf("/%d/%d", c, i)
				if i == 0 {
					path = "/shared"
				}
				cs = append(cs, cand(fmt.Sprintf("h%d", i%7), path, "L", false))
			}
			cs = append(cs, Candidate{}) // invalid: no URL
			res, err := b.Admit(ctx, cs)
			if err != nil {
				t.Error(err)
				return
			}
			if len(res) != len(cs) {
				t.Errorf("caller %d: %d results for %d candidates", c, len(res), len(cs))
				return
			}
			for i, r := range res[1 : len(res)-1] {
				if r.Verdict != Admitted {
					t.Errorf("caller %d candidate %d: %v", c, i+1, r.Verdict)
				}
			}
			if res[len(res)-1].Verdict != Invalid {
				t.Errorf("caller %d: the invalid candidate came back %v", c, res[len(res)-1].Verdict)
			}
		}()
	}
	wg.Wait()
	mustEqual(t, "queued", stats(t, f).Queued, callers*(each-1)+1)

	// Completions through the batcher settle every claim exactly once.
	var claims []*Claim
	for {
		got, _, err := f.Claim(ctx, 100, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			break
		}
		claims = append(claims, got...)
		for _, c := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := b.Complete(ctx, []Outcome{{Claim: c, Status: 200, Policy: testPolicy()}})
				if err != nil || len(ok) != 1 || !ok[0] {
					t.Errorf("complete %s: %v %v", c.Launch.URL, ok, err)
				}
			}()
		}
		wg.Wait()
	}
	mustEqual(t, "claimed", len(claims), callers*(each-1)+1)
	mustEqual(t, "finished", totals(t, f).URIs, int64(len(claims)))
	checkInvariants(t, rdb, "{t}:")
	if res, err := b.Admit(ctx, nil); err != nil || res != nil {
		t.Fatalf("empty admit: %v %v", res, err)
	}
}
