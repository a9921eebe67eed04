package dedup

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func newIndex(t *testing.T, history string, maxEntries int64) (*Index, *redis.Client) {
	t.Helper()
	rdb := embeddedtest.Redis(t)
	ix, err := New(rdb, Options{History: history, MaxEntries: maxEntries})
	if err != nil {
		t.Fatal(err)
	}
	return ix, rdb
}

func lookup(t *testing.T, ix *Index, digests ...string) []Ref {
	t.Helper()
	refs, err := ix.Lookup(context.Background(), digests)
	if err != nil {
		t.Fatal(err)
	}
	return refs
}

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 890e6, time.UTC)

func TestPutLookup(t *testing.T) {
	ix, _ := newIndex(t, "fc-npld", 1000)
	ctx := context.Background()
	a := Ref{URL: "https://www.example.org/logo.png", Time: t0, RecordID: "<urn:uuid:a>"}
	b := Ref{URL: "http://mirror.example.org/file?v=2", Time: t0.Add(time.Hour)}
	if err := ix.Put(ctx, []Put{{Digest: "sha1:AAAA", Ref: a}, {Digest: "BBBB", Ref: b},
		{Digest: "", Ref: a}, {Digest: "sha1:CCCC"}, {Digest: "md5:DDDD", Ref: a}}); err != nil {
		t.Fatal(err)
	}
	got := lookup(t, ix, "sha1:AAAA", "sha1:BBBB", "sha1:CCCC", "md5:DDDD", "", "sha1:EEEE")
	want := []Ref{a, b, {}, {}, {}, {}}
	for i := range want {
		if got[i].URL != want[i].URL || !got[i].Time.Equal(want[i].Time) || got[i].RecordID != want[i].RecordID {
			t.Errorf("lookup %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if got[0].Found() != true || got[2].Found() {
		t.Errorf("Found: %v %v", got[0].Found(), got[2].Found())
	}
}

// Within a period the first full capture stays what revisits name; a
// capture after the horizon replaces one from before it.
func TestPutKeepsFirstWithinHorizon(t *testing.T) {
	ix, _ := newIndex(t, "fc-npld", 1000)
	ctx := context.Background()
	first := Ref{URL: "https://a.example/x", Time: t0}
	later := Ref{URL: "https://b.example/x", Time: t0.Add(24 * time.Hour)}
	tests := []struct {
		name      string
		put       Put
		wantURL   string
		wantAfter string
	}{
		{"first", Put{Digest: "sha1:X", Ref: first}, first.URL, ""},
		{"same period keeps the first", Put{Digest: "sha1:X", Ref: later, NotBefore: t0.Add(-time.Hour)}, first.URL, ""},
		{"no horizon keeps the first", Put{Digest: "sha1:X", Ref: later}, first.URL, ""},
		{"after the horizon replaces", Put{Digest: "sha1:X", Ref: later, NotBefore: t0.Add(time.Hour)}, later.URL, ""},
	}
	for _, tc := range tests {
		if err := ix.Put(ctx, []Put{tc.put}); err != nil {
			t.Fatal(err)
		}
		if got := lookup(t, ix, "sha1:X")[0]; got.URL != tc.wantURL {
			t.Errorf("%s: entry names %q, want %q", tc.name, got.URL, tc.wantURL)
		}
	}
}

// The index never holds more than its bound; the oldest go first.
func TestBoundDropsOldest(t *testing.T) {
	const maxEntries = Shards * 2 // two per shard
	ix, rdb := newIndex(t, "dc", maxEntries)
	ctx := context.Background()
	const n = 2000
	puts := make([]Put, n)
	for i := range puts {
		puts[i] = Put{Digest: fmt.Sprintf("sha1:D%05d", i), Ref: Ref{URL: fmt.Sprintf("http://h.example/%d", i),
			Time: t0.Add(time.Duration(i) * time.Second)}}
	}
	for i := 0; i < n; i += 100 {
		if err := ix.Put(ctx, puts[i:i+100]); err != nil {
			t.Fatal(err)
		}
	}
	var held int64
	for s := range Shards {
		tag := fmt.Sprintf("{dc:%d}", s)
		h, err := rdb.HLen(ctx, "dd:"+tag).Result()
		if err != nil {
			t.Fatal(err)
		}
		z, err := rdb.ZCard(ctx, "ddt:"+tag).Result()
		if err != nil {
			t.Fatal(err)
		}
		if h != z || h > 2 {
			t.Fatalf("shard %d holds %d hash fields and %d set members, want equal and <= 2", s, h, z)
		}
		held += h
	}
	if held < Shards || held > maxEntries {
		t.Errorf("index holds %d entries, want between %d and %d", held, Shards, maxEntries)
	}
	// The newest put of each shard is kept.
	refs := lookup(t, ix, puts[n-1].Digest, puts[0].Digest)
	if refs[0].URL != puts[n-1].Ref.URL {
		t.Errorf("newest entry dropped: %+v", refs[0])
	}
	if refs[1].Found() {
		t.Errorf("oldest entry kept: %+v", refs[1])
	}
}

// Streams never share entries: an NPLD payload is not found from BYPM.
func TestStreamsSeparate(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	npld, err := New(rdb, Options{History: "fc-npld", MaxEntries: 100})
	if err != nil {
		t.Fatal(err)
	}
	bypm, err := New(rdb, Options{History: "fc-bypm", MaxEntries: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := npld.Put(context.Background(), []Put{{Digest: "sha1:S", Ref: Ref{URL: "http://x/", Time: t0}}}); err != nil {
		t.Fatal(err)
	}
	if r := lookup(t, bypm, "sha1:S")[0]; r.Found() {
		t.Errorf("bypm found npld's entry %+v", r)
	}
	if r := lookup(t, npld, "sha1:S")[0]; !r.Found() {
		t.Error("npld lost its entry")
	}
}

// Damaged values read as absent; a bad Redis is an error; bad options
// are refused.
func TestBadInput(t *testing.T) {
	ix, rdb := newIndex(t, "fc", 100)
	ctx := context.Background()
	hash, _, field, _ := ix.keys("sha1:BAD")
	for _, v := range []string{"garbage", "12 -", "x - http://a/", ""} {
		if err := rdb.HSet(ctx, hash, field, v).Err(); err != nil {
			t.Fatal(err)
		}
		if r := lookup(t, ix, "sha1:BAD")[0]; r.Found() {
			t.Errorf("value %q decoded as %+v", v, r)
		}
	}
	// A put over a damaged value replaces it.
	if err := ix.Put(ctx, []Put{{Digest: "sha1:BAD", Ref: Ref{URL: "http://ok/", Time: t0}}}); err != nil {
		t.Fatal(err)
	}
	if r := lookup(t, ix, "sha1:BAD")[0]; r.URL != "http://ok/" {
		t.Errorf("after put over damage: %+v", r)
	}
	for _, o := range []Options{{History: "", MaxEntries: 1}, {History: "a:b", MaxEntries: 1}, {History: "fc", MaxEntries: 0}} {
		if _, err := New(rdb, o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	if _, err := New(nil, Options{History: "fc", MaxEntries: 1}); err == nil {
		t.Error("New without Redis accepted")
	}
	closed := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { _ = closed.Close() })
	down, err := New(closed, Options{History: "fc", MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := down.Lookup(ctx, []string{"sha1:A"}); err == nil {
		t.Error("lookup on an unreachable Redis: no error")
	}
	if err := down.Put(ctx, []Put{{Digest: "sha1:A", Ref: Ref{URL: "http://a/", Time: t0}}}); err == nil {
		t.Error("put on an unreachable Redis: no error")
	}
}
