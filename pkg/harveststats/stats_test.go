package harveststats

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

const src = "tid:1:http://a.example/"

// ev builds a crawled event of src.
func ev(url string, status int, size int64, annotations string) messages.Crawled {
	e := messages.Crawled{Timestamp: "2024-01-17T09:00:01.000Z", URL: url, StatusCode: status, Seed: src,
		Annotations: annotations, HopPath: "L"}
	if size > 0 {
		e.Size = messages.Int64(size)
	}
	return e
}

func TestStopReasons(t *testing.T) {
	launchAnn := "launchTimestamp:20240117090000"
	events := []messages.Crawled{
		// the seed, opening the launch
		{Timestamp: "2024-01-17T09:00:00.000Z", URL: "http://done.example/", StatusCode: 200, Size: messages.Int64(100), Seed: src, Annotations: "resetQuotas," + launchAnn},
		ev("http://done.example/a", 200, 50, ""),
		ev("http://done.example/b", 200, 70, "duplicate:digest"),
		ev("http://quota.example/", 200, 10, ""),
		ev("http://quota.example/x", -5003, 0, "Q:hostMaxFetchSuccesses"),
		ev("http://bytes.example/", 200, 9000, ""),
		ev("http://bytes.example/y", -5003, 0, "Q:hostMaxSuccessKb"),
		ev("http://robots.example/robots.txt", 200, 30, ""),
		ev("http://robots.example/", -9998, 0, "robotExcluded"),
		ev("dns:nxdomain.example", -6, 0, ""),
		ev("http://nxdomain.example/", -6, 0, ""),
		ev("http://slow.example/", -5004, 0, ""),
	}
	rdb := embeddedtest.Redis(t)
	s := New(rdb, "fc", nil)
	ctx := context.Background()
	// Twice: a redelivered batch counts nothing again.
	for range 2 {
		if err := s.Record(ctx, events); err != nil {
			t.Fatal(err)
		}
	}
	l := Launch{Source: src, Timestamp: "20240117090000"}
	for _, tc := range []struct {
		state string
		want  map[string]StopReason
	}{
		{StateRunning, map[string]StopReason{"done.example": {Code: ReasonRunning}}},
		{StateCompleted, map[string]StopReason{
			"done.example":     {Code: ReasonCompleted},
			"quota.example":    {Code: ReasonQuota, Detail: "hostMaxFetchSuccesses"},
			"bytes.example":    {Code: ReasonByteLimit, Detail: "hostMaxSuccessKb"},
			"robots.example":   {Code: ReasonRobots},
			"nxdomain.example": {Code: ReasonDNS},
			"slow.example":     {Code: ReasonTimeLimit, Detail: "maxTimeSeconds"},
		}},
		{"maxBytesDownload", map[string]StopReason{"done.example": {Code: ReasonByteLimit, Detail: "maxBytesDownload"}}},
		{ReasonTerminated, map[string]StopReason{"done.example": {Code: ReasonTerminated}, "quota.example": {Code: ReasonQuota, Detail: "hostMaxFetchSuccesses"}}},
	} {
		t.Run(tc.state, func(t *testing.T) {
			if tc.state != StateRunning {
				if err := s.Seal(ctx, l, tc.state); err != nil {
					t.Fatal(err)
				}
			}
			st, err := s.Stats(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]DomainStats{}
			for _, d := range st.Domains {
				got[d.Domain] = d
			}
			for dom, want := range tc.want {
				if got[dom].StopReason != want {
					t.Errorf("%s: stop reason %v, want %v", dom, got[dom].StopReason, want)
				}
			}
			done := got["done.example"]
			if done.URIs != 3 || done.NovelObjects != 2 || done.NovelBytes != 150 || done.DuplicateObject != 1 || done.DuplicateBytes != 70 {
				t.Errorf("done.example counts = %+v", done)
			}
			if st.Totals.URIs != int64(len(events)) {
				t.Errorf("total URIs %d, want %d (each once)", st.Totals.URIs, len(events))
			}
			if !done.FirstFetch.Equal(time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)) || !done.LastFetch.Equal(time.Date(2024, 1, 17, 9, 0, 1, 0, time.UTC)) {
				t.Errorf("first/last fetch %v %v", done.FirstFetch, done.LastFetch)
			}
		})
	}
}

func TestLaunchAttributionAndRecrawl(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	s := New(rdb, "fc", nil)
	ctx := context.Background()
	at := func(e messages.Crawled, ts string) messages.Crawled {
		e.Timestamp = ts
		return e
	}
	seed := func(ts, logged string) messages.Crawled {
		e := at(ev("http://a.example/", 200, 10, "launchTimestamp:"+ts), logged)
		e.HopPath = ""
		return e
	}
	// Before any launch: launch "".
	pre := at(ev("http://a.example/old", 200, 5, ""), "2023-12-31T00:00:00.000Z")
	// Launch 1: the prerequisite arrives before its seed; a child, and
	// the child again (recrawled within the launch).
	l1 := []messages.Crawled{
		at(ev("dns:a.example", 1, 50, ""), "2024-01-01T00:00:01.000Z"),
		seed("20240101000000", "2024-01-01T00:00:02.000Z"),
		at(ev("http://a.example/c", 200, 5, ""), "2024-01-01T00:00:03.000Z"),
		at(ev("http://a.example/c", 200, 5, ""), "2024-01-01T00:00:04.000Z"),
	}
	// Launch 2: the same URLs count again, under the new launch.
	l2 := []messages.Crawled{seed("20240102000000", "2024-01-02T00:00:01.000Z"), at(ev("http://a.example/c", 200, 5, ""), "2024-01-02T00:00:02.000Z")}
	if err := s.Record(ctx, []messages.Crawled{pre, l1[0]}); err != nil {
		t.Fatal(err)
	}
	for _, batch := range [][]messages.Crawled{l1[1:], l2, l1} { // l1 redelivered late
		if err := s.Record(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	for ts, want := range map[string]int64{"": 1, "20240101000000": 3, "20240102000000": 2} {
		st, err := s.Stats(ctx, Launch{Source: src, Timestamp: ts})
		if err != nil {
			t.Fatal(err)
		}
		if st.Totals.URIs != want {
			t.Errorf("launch %q: %d URIs, want %d", ts, st.Totals.URIs, want)
		}
	}
	act, err := s.Active(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(act) != 3 {
		t.Fatalf("active = %+v", act)
	}
	for _, a := range act {
		if want := a.Launch.Timestamp != "20240102000000"; a.Superseded != want {
			t.Errorf("%s superseded = %v", a.Launch, a.Superseded)
		}
	}
	if err := s.Seal(ctx, Launch{Source: src}, StateCompleted); err != nil {
		t.Fatal(err)
	}
	if act, _ := s.Active(ctx); len(act) != 2 {
		t.Errorf("after sealing one: active = %+v", act)
	}
	var n int
	if err := s.Events(ctx, Launch{Source: src, Timestamp: "20240101000000"}, false, func(messages.Crawled) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("launch 1 has %d events, want 3", n)
	}
	if _, err := s.Stats(ctx, Launch{Source: "nope", Timestamp: ""}); err == nil {
		t.Error("unknown launch: no error")
	}
}

func TestKeyRoundTrip(t *testing.T) {
	for _, l := range []Launch{{Source: src, Timestamp: "20240101000000"}, {Source: "dc-seeds", Timestamp: ""}} {
		got, err := ParseKey(l.Key())
		if err != nil || got != l {
			t.Errorf("ParseKey(%q) = %v, %v", l.Key(), got, err)
		}
	}
	if _, err := ParseKey("nospace"); err == nil {
		t.Error("bad key accepted")
	}
}

func TestDomain(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://www.bbc.co.uk/news", "bbc.co.uk"},
		{"dns:www.example.com", "example.com"},
		{"http://127.0.0.1:8080/", "127.0.0.1"},
		{"https://a.b.example.org:443/x", "example.org"},
	} {
		e := messages.Crawled{URL: tc.url}
		if got := Domain(&e); got != tc.want {
			t.Errorf("Domain(%s) = %s, want %s", tc.url, got, tc.want)
		}
	}
}

// Events that name their launch count in it even when they come after the
// next launch of the source has begun (a deep URI of launch 1 crawled
// late), and once the launch's provenance is written its events leave
// Redis while its statistics stay readable.
func TestNamedLaunchOutlivesNext(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	clock := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	s := New(rdb, "fc", func() time.Time { return clock })
	ctx := context.Background()
	named := func(url, logged, id, ann string) messages.Crawled {
		e := ev(url, 200, 10, ann)
		e.Timestamp = logged
		e.ExtraInfo = map[string]any{messages.ExtraLaunchID: id}
		return e
	}
	const id1, id2 = "20240101000000", "20240102000000"
	batch := []messages.Crawled{
		named("http://a.example/", "2024-01-01T00:00:01.000Z", id1, "launchTimestamp:"+id1),
		named("http://a.example/deep/1", "2024-01-01T00:00:02.000Z", id1, ""),
		named("http://a.example/", "2024-01-02T00:00:01.000Z", id2, "launchTimestamp:"+id2),
		// launch 1's deep URIs, crawled after launch 2 began; one twice
		named("http://a.example/deep/2", "2024-01-02T00:00:05.000Z", id1, ""),
		named("http://a.example/deep/2", "2024-01-02T00:00:06.000Z", id1, ""),
		named("http://a.example/x", "2024-01-02T00:00:07.000Z", id2, ""),
	}
	if err := s.Record(ctx, batch); err != nil {
		t.Fatal(err)
	}
	l1, l2 := Launch{Source: src, Timestamp: id1}, Launch{Source: src, Timestamp: id2}
	for l, want := range map[Launch]int64{l1: 3, l2: 2} {
		st, err := s.Stats(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		if st.Totals.URIs != want {
			t.Errorf("%s: %d URIs, want %d", l, st.Totals.URIs, want)
		}
	}
	var all, once int
	count := func(n *int) func(messages.Crawled) error { return func(messages.Crawled) error { *n++; return nil } }
	if err := s.Events(ctx, l1, true, count(&all)); err != nil {
		t.Fatal(err)
	}
	if err := s.Events(ctx, l1, false, count(&once)); err != nil {
		t.Fatal(err)
	}
	if all != 4 || once != 3 {
		t.Errorf("launch 1: %d events, %d URLs; want 4 and 3", all, once)
	}
	act, err := s.Active(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range act {
		if !a.Named || !a.LastActivity.Equal(clock) || a.Superseded != (a.Launch == l1) {
			t.Errorf("active %+v", a)
		}
	}
	// Written: the events go, the statistics stay as written.
	st, _ := s.Stats(ctx, l1)
	if err := s.Seal(ctx, l1, StateCompleted); err != nil {
		t.Fatal(err)
	}
	st.State = StateCompleted
	js, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkDone(ctx, l1, "X-METADATA.warc.gz", js); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Exists(ctx, s.srcKey(src, "e:"+id1)).Result(); err != nil || n != 0 {
		t.Errorf("launch 1's events still in Redis (%d, %v)", n, err)
	}
	got, err := s.Stats(ctx, l1)
	if err != nil {
		t.Fatal(err)
	}
	if got.Totals.URIs != 3 || got.State != StateCompleted || len(got.Domains) != len(st.Domains) {
		t.Errorf("stored statistics %+v", got)
	}
	// A corrupt stored copy is an error, not a silent recount.
	if err := rdb.HSet(ctx, s.prefix+"stats", l1.Key(), "{").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stats(ctx, l1); err == nil {
		t.Error("corrupt stored statistics: no error")
	}
}

// A named launch's statistics are counted as its events arrive and equal
// what its events give when counted at once: each URL once (a retried
// URI's or recrawled URL's later event, a redelivered batch count
// nothing), first and last fetch the extremes whatever the arrival order.
func TestNamedLaunchCountedOnArrival(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	s := New(rdb, "fc", nil)
	ctx := context.Background()
	const id = "20240101000000"
	l := Launch{Source: src, Timestamp: id}
	at := func(e messages.Crawled, ts string) messages.Crawled {
		e.Timestamp = ts
		e.ExtraInfo = map[string]any{messages.ExtraLaunchID: id}
		return e
	}
	evs := []messages.Crawled{
		at(ev("http://a.example/", 200, 100, "launchTimestamp:"+id), "2024-01-01T00:00:05.000Z"),
		at(ev("http://a.example/late", 200, 7, ""), "2024-01-01T00:09:00.000Z"),
		at(ev("http://a.example/dup", 200, 30, "duplicate:digest"), "2024-01-01T00:00:07.000Z"),
		at(ev("http://a.example/q", -5003, 0, "Q:hostMaxFetchSuccesses"), "2024-01-01T00:00:08.000Z"),
		at(ev("dns:b.example", 1, 50, ""), "2024-01-01T00:00:01.000Z"), // earliest, arrives late
		at(ev("http://b.example/", -6, 0, ""), "2024-01-01T00:00:02.000Z"),
	}
	again := at(ev("http://a.example/late", 404, 0, ""), "2024-01-01T00:10:00.000Z") // recrawled: not counted
	batches := [][]messages.Crawled{evs[:2], evs[2:4], evs[:3], {again}, evs[4:], evs}
	for _, b := range batches {
		if err := s.Record(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Stats(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	want := Build("fc", l, StateRunning, evs)
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("counted on arrival:\n%s\nwant (counted from the events):\n%s", gj, wj)
	}
	if got.Totals.URIs != int64(len(evs)) {
		t.Errorf("%d URIs, want %d", got.Totals.URIs, len(evs))
	}
	// The counts are read, not recomputed: deleting the events leaves
	// them as they were.
	if err := rdb.Del(ctx, s.srcKey(src, "e:"+id)).Err(); err != nil {
		t.Fatal(err)
	}
	if again, err := s.Stats(ctx, l); err != nil || again.Totals.URIs != got.Totals.URIs {
		t.Errorf("after the events went: %+v, %v", again.Totals, err)
	}
	// A corrupt count is an error naming the field.
	if err := rdb.HSet(ctx, s.countsKey(l), "a.example|uris", "x").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stats(ctx, l); err == nil || !strings.Contains(err.Error(), "a.example|uris") {
		t.Errorf("corrupt count: %v", err)
	}
}
