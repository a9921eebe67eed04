package frontier

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// memJournal is a journal held in memory.
type memJournal struct {
	crawled  []Finished
	admitted []Admission
	err      error
}

func (j *memJournal) Crawled(_ context.Context, fn func([]Finished) error) error {
	if j.err != nil {
		return j.err
	}
	for i := 0; i < len(j.crawled); i += 3 {
		if err := fn(j.crawled[i:min(i+3, len(j.crawled))]); err != nil {
			return err
		}
	}
	return nil
}

func (j *memJournal) Admitted(_ context.Context, fn func([]Admission) error) error {
	for i := 0; i < len(j.admitted); i += 3 {
		if err := fn(j.admitted[i:min(i+3, len(j.admitted))]); err != nil {
			return err
		}
	}
	return nil
}

// A rebuild queues what was admitted and not finished since, restores the
// totals and quota counters, and refuses a frontier that holds state.
func TestRebuild(t *testing.T) {
	for _, seen := range []string{profile.SeenRecently, profile.SeenBloom} {
		t.Run(seen, func(t *testing.T) {
			forBackends(t, func(t *testing.T, rdb *redis.Client) {
				testRebuild(t, rdb, seen)
			})
		})
	}
}

func testRebuild(t *testing.T, rdb *redis.Client, seen string) {
	ck := newClock()
	o := Options{}
	if seen == profile.SeenBloom {
		o = bloomOptions(1000, 0.001, 0)
	}
	f := newTestFrontier(t, rdb, ck, o)
	ctx := context.Background()
	t0 := ck.now().Add(-time.Hour)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	adm := func(path string, m int) Admission {
		c := cand("a", path, "L", false)
		return Admission{Launch: c.Launch, At: at(m)}
	}
	j := &memJournal{
		crawled: []Finished{
			{URL: "http://a/done", Status: 200, Bytes: 100, Source: "tid:1:http://a/", At: at(2)},
			{URL: "http://a/again", Status: 200, Bytes: 50, Source: "tid:1:http://a/", At: at(3)},
			{URL: "", Status: 200},
		},
		admitted: []Admission{
			adm("/done", 1), adm("/pending", 1), adm("/pending", 4), adm("/again", 1), adm("/again", 5),
			{Launch: messages.Launch{URL: "::bad"}, At: at(1)},
		},
	}
	rep, err := Rebuild(ctx, f, j, func(messages.Launch) Policy { return testPolicy() }, false)
	if err != nil {
		t.Fatal(err)
	}
	want := RebuildReport{Finished: 2, Admitted: 6, Queued: 2, Skipped: 3, Malformed: 2}
	mustEqual(t, "report", rep, want)
	// The per-target counts are rebuilt with the queues.
	tc, err := f.TargetCounts(ctx)
	if err != nil || len(tc) != 1 || tc[0] != (TargetCount{Source: "tid:1:http://a/", Queued: 2}) {
		t.Fatalf("target counts after rebuild: %+v, %v", tc, err)
	}
	checkInvariants(t, rdb, f.Prefix())
	var got []string
	for {
		cs := claim(t, f, 10)
		if len(cs) == 0 {
			break
		}
		got = append(got, urls(cs)...)
		finish(t, f, cs...)
	}
	mustEqual(t, "queued again", sprint(got), "[http://a/pending http://a/again]")
	tot := totals(t, f)
	if tot.URIs != 4 || tot.Bytes != 2150 {
		t.Fatalf("totals after rebuild and crawl: %+v", tot)
	}
	mustEqual(t, "done is seen", admit(t, f, cand("a", "/done", "L", false))[0], Seen)

	if _, err := Rebuild(ctx, f, j, func(messages.Launch) Policy { return testPolicy() }, false); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("rebuild onto a used frontier: %v", err)
	}
	rep, err = Rebuild(ctx, f, j, func(messages.Launch) Policy { return testPolicy() }, true)
	if err != nil || rep.Queued != 0 {
		t.Fatalf("forced replay queued %d again, err %v", rep.Queued, err)
	}
	empty, _ := New(rdb, "other", o)
	if _, err := Rebuild(ctx, empty, &memJournal{err: fmt.Errorf("broker down")}, nil, false); err == nil {
		t.Fatal("journal error must fail the rebuild")
	}
}
