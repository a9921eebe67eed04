package harveststats

import (
	"context"
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
	if err := s.Events(ctx, Launch{Source: src, Timestamp: "20240101000000"}, func(messages.Crawled) error { n++; return nil }); err != nil {
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
