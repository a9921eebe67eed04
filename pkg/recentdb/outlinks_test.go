package recentdb

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestOutlinksRoundTripAndOrder(t *testing.T) {
	db, rdb := newDB(t, 0)
	ctx := context.Background()
	url := "http://www.example.com/"
	t1 := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	first := &Outlinks{Time: t1, Links: []Link{
		{Hop: 'L', URL: "http://www.example.com/a", Context: "a/@href"},
		{Hop: 'E', URL: "http://www.example.com/s.css", Context: "link/@href"},
		{Hop: 'X', URL: "http://www.example.com/x.js", Context: "=JS_MISC"},
		{Hop: 'L', URL: "http://www.example.com/bad\nline", Context: "a/@href"},     // not storable
		{Hop: 'L', URL: "http://www.example.com/tab\tin", Context: "a/@href"},       // not storable
		{Hop: 0, URL: "http://www.example.com/nohop", Context: ""},                  // not storable
		{Hop: 'L', URL: "http://www.example.com/c", Context: "context\twith\ntabs"}, // context cleaned
	}}
	if err := db.PutOutlinks(ctx, []string{url}, []*Outlinks{first}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Outlinks(ctx, url)
	if err != nil || got == nil {
		t.Fatalf("Outlinks: %v %v", got, err)
	}
	want := []Link{first.Links[0], first.Links[1], first.Links[2], {Hop: 'L', URL: "http://www.example.com/c", Context: "context with tabs"}}
	if !got.Time.Equal(t1) || !slices.Equal(got.Links, want) {
		t.Fatalf("got %+v, want %v at %v", got, want, t1)
	}
	// An older list written late changes nothing; a newer one replaces it.
	older := &Outlinks{Time: t1.Add(-time.Hour), Links: []Link{{Hop: 'L', URL: "http://www.example.com/old"}}}
	newer := &Outlinks{Time: t1.Add(time.Hour)} // the page now links nowhere
	for _, o := range []*Outlinks{older, newer} {
		if err := db.PutOutlinks(ctx, []string{url}, []*Outlinks{o}); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ = db.Outlinks(ctx, url); got == nil || !got.Time.Equal(newer.Time) || len(got.Links) != 0 {
		t.Fatalf("after older and newer lists: %+v", got)
	}
	// Outlinks written before the cdxwriter's first update do not stop
	// that update from setting the entry's expiry.
	if got := lookupOne(t, db, url); got.Found() {
		t.Errorf("outlinks alone made an entry: %+v", got)
	}
	dbTTL, err := New(rdb, Options{Crawl: "fc", TTL: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	if err := dbTTL.Put(ctx, []Update{{URL: url, Capture: capAt(now, "sha1:A")}}); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, mustKey(t, db, url)).Val(); ttl <= 23*time.Hour {
		t.Errorf("expiry after outlinks then a capture: %v, want about 24h", ttl)
	}
	if none, err := db.Outlinks(ctx, "http://elsewhere.example/"); err != nil || none != nil {
		t.Errorf("absent outlinks: %v %v", none, err)
	}
	if err := db.PutOutlinks(ctx, []string{url}, nil); err == nil {
		t.Error("PutOutlinks accepted lists of another length")
	}
}

func TestOutlinksLimitsAndDamage(t *testing.T) {
	db, rdb := newDB(t, 0)
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	many := &Outlinks{Time: at}
	for i := range MaxOutlinks + 50 {
		many.Links = append(many.Links, Link{Hop: 'L', URL: "http://www.example.com/" + strings.Repeat("p", i%7) + "/" + string(rune('a'+i%26))})
	}
	if err := db.PutOutlinks(ctx, []string{"http://www.example.com/many"}, []*Outlinks{many}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Outlinks(ctx, "http://www.example.com/many")
	if err != nil || got == nil || len(got.Links) != MaxOutlinks {
		t.Fatalf("stored %d links (err %v), want the first %d", len(got.Links), err, MaxOutlinks)
	}
	key := mustKey(t, db, "http://www.example.com/many")
	for _, bad := range []string{"garbage", "20260102030405000 not-s2", "2026 x"} {
		rdb.HSet(ctx, key, fieldOutlinks, bad)
		if got, err := db.Outlinks(ctx, "http://www.example.com/many"); err != nil || got != nil {
			t.Errorf("damaged value %q: %+v %v, want absent", bad, got, err)
		}
	}
}

// Each stream keeps its own history: a BYPM capture is never found by an
// NPLD lookup, and the crawl without streams has its own namespace.
func TestStreamsDoNotShareHistory(t *testing.T) {
	npld, rdb := newDB(t, 0)
	npld, err := npld.Stream("fc", "npld")
	if err != nil {
		t.Fatal(err)
	}
	bypm, err := New(rdb, Options{Crawl: "fc", Stream: "bypm"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	url := "http://www.example.com/"
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := bypm.Put(ctx, []Update{{URL: url, Capture: capAt(at, "sha1:B"), Original: &Original{Time: at, Digest: "sha1:B", Filename: "b.warc.gz"}}}); err != nil {
		t.Fatal(err)
	}
	if e := lookupOne(t, npld, url); e.Found() {
		t.Errorf("npld sees bypm's capture: %+v", e)
	}
	if e := lookupOne(t, bypm, url); e.Original == nil || e.Original.Digest != "sha1:B" {
		t.Errorf("bypm lost its own capture: %+v", e)
	}
	if npld.History() != "fc-npld" || bypm.History() != "fc-bypm" {
		t.Errorf("histories %q %q", npld.History(), bypm.History())
	}
	if !strings.HasPrefix(mustKey(t, bypm, url), "rc:{fc-bypm:") {
		t.Errorf("bypm key %s", mustKey(t, bypm, url))
	}
	for _, bad := range []Options{{Crawl: "fc", Stream: "a:b"}, {Crawl: "f{c"}, {Crawl: "fc", Stream: "x y"}} {
		if _, err := New(rdb, bad); err == nil {
			t.Errorf("New accepted %+v", bad)
		}
	}
}
