package frontier

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

// The operations pkg/urlfrontier uses: a host held and freed, URIs taken
// from one host, a leased URI found by its URL, dumps, and a drop that
// leaves nothing behind.
func TestURLFrontierOps(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	ck := newClock()
	f := newTestFrontier(t, rdb, ck, Options{})
	admit(t, f, cand("a.example", "/1", "L", false), cand("a.example", "/2", "L", false), cand("a.example", "/3", "L", false),
		cand("b.example", "/1", "L", false))

	// A held host is not claimed, nor taken by TakeNext, until its time.
	if ok, err := f.HoldHost(ctx, "a.example", ck.now().Add(time.Minute)); err != nil || !ok {
		t.Fatalf("hold: %v %v", ok, err)
	}
	if ok, _ := f.HoldHost(ctx, "nowhere.example", ck.now()); ok {
		t.Fatal("held an unknown host")
	}
	// An admission reschedules the host from its stored next time: still held.
	admit(t, f, cand("a.example", "/4", "L", false))
	bcl := claim(t, f, 5)
	mustEqual(t, "claimed while a.example is held", strings.Join(urls(bcl), " "), "http://b.example/1")
	if got, err := f.TakeNext(ctx, "a.example", 2, time.Minute); err != nil || len(got) != 0 {
		t.Fatalf("TakeNext of a held host: %v %v", urls(got), err)
	}
	ck.add(time.Minute)
	got, err := f.TakeNext(ctx, "a.example", 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "TakeNext", strings.Join(urls(got), " "), "http://a.example/1 http://a.example/2")
	// The host is busy now: nothing more unless asked with TakeMore.
	if more, _ := f.TakeNext(ctx, "a.example", 2, time.Minute); len(more) != 0 {
		t.Fatalf("TakeNext of a busy host: %v", urls(more))
	}

	// LeaseOf finds the claim of a URI in flight, and completes with it.
	cl, err := f.LeaseOf(ctx, "http://a.example/2")
	if err != nil || cl == nil || cl.Lease() != got[1].Lease() {
		t.Fatalf("LeaseOf: %v %v, want lease %s", cl, err, got[1].Lease())
	}
	if cl, _ := f.LeaseOf(ctx, "http://a.example/3"); cl != nil {
		t.Fatalf("LeaseOf a queued URI: %v", cl.Lease())
	}
	inflight, err := f.InFlight(ctx, "a.example")
	if err != nil || len(inflight) != 2 {
		t.Fatalf("in flight at a.example: %v %v", urls(inflight), err)
	}
	finish(t, f, cl)
	mustEqual(t, "in flight after completion", stats(t, f).InFlight, int64(2)) // a.example/1 and b.example/1

	q, err := f.Queued(ctx, "a.example")
	if err != nil || len(q) != 2 || q[0].URL != "http://a.example/3" || q[0].ParentURLMetadata.HeritableData.Source == "" {
		t.Fatalf("Queued: %+v %v", q, err)
	}
	hq, err := f.HostQueues(ctx)
	if err != nil || len(hq) != 2 || hq[0].Host != "a.example" || hq[0].Queued != 2 || hq[0].InFlight != 1 {
		t.Fatalf("HostQueues: %+v %v", hq, err)
	}
	// TakeURL leases a queued URI by URL, whatever its place.
	tk, err := f.TakeURL(ctx, "http://a.example/3", time.Minute)
	if err != nil || tk == nil || tk.Launch.URL != "http://a.example/3" {
		t.Fatalf("TakeURL: %v %v", tk, err)
	}
	if tk, _ := f.TakeURL(ctx, "http://a.example/3", time.Minute); tk != nil {
		t.Fatal("TakeURL took a URI twice")
	}

	// A hold set while the host is busy outlasts a release (which
	// schedules the host from its stored next time).
	admit(t, f, cand("b.example", "/2", "L", false))
	if ok, err := f.HoldHost(ctx, "b.example", ck.now().Add(time.Minute)); err != nil || !ok {
		t.Fatalf("hold b: %v %v", ok, err)
	}
	if err := f.Release(ctx, bcl); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, f, 5); len(got) != 0 {
		t.Fatalf("claimed %v from a held host after a release", urls(got))
	}

	if err := f.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "{t}*").Result()
	if err != nil || len(keys) != 0 {
		t.Fatalf("keys after Drop: %v %v", keys, err)
	}
	// Usable again, as new.
	mustEqual(t, "admitted after Drop", admit(t, f, cand("a.example", "/1", "L", false))[0], Admitted)
	if n, err := rdb.Exists(ctx, LayoutKey("t")).Result(); err != nil || n != 1 {
		t.Fatalf("layout key after Drop and a write: %d %v", n, err)
	}
}
