package recentdb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func newDB(t *testing.T, ttl time.Duration) (*DB, *redis.Client) {
	t.Helper()
	rdb := embeddedtest.Redis(t)
	db, err := New(rdb, Options{Crawl: "fc", TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return db, rdb
}

func lookupOne(t *testing.T, db *DB, url string) Entry {
	t.Helper()
	es, err := db.Lookup(context.Background(), []string{url})
	if err != nil {
		t.Fatal(err)
	}
	return es[0]
}

func capAt(t time.Time, digest string) *Capture {
	return &Capture{Time: t, Status: 200, Digest: digest, Filename: "a.warc.gz", Offset: t.Unix() % 1000, Length: 100}
}

func TestPutLookupRoundTrip(t *testing.T) {
	db, _ := newDB(t, 0)
	ctx := context.Background()
	at := time.Date(2024, 1, 17, 9, 0, 2, 801e6, time.UTC)
	ups := []Update{
		{URL: "https://news.example.org/", Capture: &Capture{Time: at, Status: 200, Digest: "sha1:AAA",
			ETag: `"x|y" z`, LastModified: "Wed, 17 Jan 2024 08:00:00 GMT", Filename: "f.warc.gz", Offset: 0, Length: 13107},
			Original: &Original{Time: at, Digest: "sha1:AAA", Filename: "f.warc.gz", Offset: 0, Length: 13107, RecordID: "<urn:uuid:1>",
				Status: 200, Mime: "text/html"}},
		{URL: "http://gone.example/", Failure: &Failure{Time: at, Status: -6}},
		{URL: "http://nolocation.example/", Capture: &Capture{Time: at, Status: 404, Length: -1}},
	}
	if err := db.Put(ctx, ups); err != nil {
		t.Fatal(err)
	}
	// Lookups use the normalised URL: case, default port and fragment do
	// not matter.
	got, err := db.Lookup(ctx, []string{"HTTPS://NEWS.example.org:443/#top", "http://gone.example/",
		"http://nolocation.example/", "http://unknown.example/", "mailto:x@example.org", ""})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Capture == nil || *got[0].Capture != *ups[0].Capture || *got[0].Original != *ups[0].Original || got[0].Failure != nil {
		t.Errorf("entry 0: %+v %+v", got[0].Capture, got[0].Original)
	}
	if !got[0].LastCrawled().Equal(at) {
		t.Errorf("LastCrawled %v", got[0].LastCrawled())
	}
	if got[1].Failure == nil || *got[1].Failure != *ups[1].Failure || got[1].Capture != nil || !got[1].LastCrawled().IsZero() {
		t.Errorf("entry 1: %+v", got[1])
	}
	if got[2].Capture == nil || *got[2].Capture != *ups[2].Capture || got[2].Original != nil {
		t.Errorf("entry 2: %+v", got[2].Capture)
	}
	for i := 3; i < len(got); i++ {
		if got[i].Found() {
			t.Errorf("entry %d found: %+v", i, got[i])
		}
	}
}

// Same update twice = same state; older updates delivered after newer ones
// (in any order) never win; capture, original and failure move separately.
func TestOrderSafeAndIdempotent(t *testing.T) {
	db, rdb := newDB(t, 0)
	ctx := context.Background()
	const url = "http://x.example/page"
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var ups []Update
	for i := range 20 {
		at := t0.Add(time.Duration(i) * time.Hour)
		u := Update{URL: url, Capture: capAt(at, fmt.Sprintf("sha1:D%02d", i))}
		if i%3 == 0 {
			u.Capture.Revisit = true // revisits move the capture, not the original
		} else {
			u.Original = &Original{Time: at, Digest: u.Capture.Digest, Filename: "a.warc.gz", Offset: int64(i), Length: 1}
		}
		if i%4 == 0 {
			u = Update{URL: url, Failure: &Failure{Time: at, Status: -4}}
		}
		ups = append(ups, u)
	}
	// Newest capture is i=19, newest original is 19, newest failure 16.
	want := func(t *testing.T) {
		t.Helper()
		e := lookupOne(t, db, url)
		if e.Capture == nil || e.Capture.Digest != "sha1:D19" || e.Original == nil || e.Original.Offset != 19 ||
			e.Failure == nil || !e.Failure.Time.Equal(t0.Add(16*time.Hour)) {
			t.Fatalf("entry %+v %+v %+v", e.Capture, e.Original, e.Failure)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 5 {
		shuffled := append([]Update(nil), ups...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		// One by one, so the order reaches Redis as shuffled.
		for _, u := range shuffled {
			if err := db.Put(ctx, []Update{u}); err != nil {
				t.Fatal(err)
			}
		}
		want(t)
		if round == 0 {
			before, _ := rdb.HGetAll(ctx, mustKey(t, db, url)).Result()
			if err := db.Put(ctx, ups); err != nil { // redelivery of all
				t.Fatal(err)
			}
			after, _ := rdb.HGetAll(ctx, mustKey(t, db, url)).Result()
			if fmt.Sprint(before) != fmt.Sprint(after) {
				t.Fatalf("redelivery changed the entry:\n%v\n%v", before, after)
			}
		}
	}
	// A newer revisit after the newest original keeps that original.
	late := t0.Add(100 * time.Hour)
	if err := db.Put(ctx, []Update{{URL: url, Capture: &Capture{Time: late, Status: 200, Digest: "sha1:D19", Revisit: true, Length: -1}}}); err != nil {
		t.Fatal(err)
	}
	e := lookupOne(t, db, url)
	if !e.Capture.Revisit || !e.Capture.Time.Equal(late) || e.Original.Offset != 19 {
		t.Fatalf("after revisit: %+v %+v", e.Capture, e.Original)
	}
}

func mustKey(t *testing.T, db *DB, url string) string {
	t.Helper()
	k, ok := db.Key(url)
	if !ok {
		t.Fatalf("no key for %s", url)
	}
	return k
}

func TestKeys(t *testing.T) {
	db, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), Options{Crawl: "dc"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.rdb.Close() })
	k1 := mustKey(t, db, "http://www.example.com/a?b=1")
	shard := hostkey.Murmur3([]byte("www.example.com"), 0) % Shards
	if !regexp.MustCompile(fmt.Sprintf(`^rc:\{dc:%d\}:[A-Za-z0-9_-]{22}$`, shard)).MatchString(k1) {
		t.Errorf("key %q: want rc:{dc:%d}:<22 base64url chars>", k1, shard)
	}
	same := []string{"HTTP://WWW.EXAMPLE.COM:80/a?b=1", "http://www.example.com/a?b=1#frag"}
	for _, u := range same {
		if k := mustKey(t, db, u); k != k1 {
			t.Errorf("%s: key %s, want %s", u, k, k1)
		}
	}
	different := []string{"https://www.example.com/a?b=1", "http://example.com/a?b=1", "http://www.example.com/a?b=2",
		"http://www.example.com/A?b=1"}
	for _, u := range different {
		if k := mustKey(t, db, u); k == k1 {
			t.Errorf("%s shares the key of http://www.example.com/a?b=1", u)
		}
	}
	for _, u := range []string{"", "dns:example.com", "ftp://example.com/", "http://", "not a url"} {
		if k, ok := db.Key(u); ok {
			t.Errorf("%q keyed as %s", u, k)
		}
	}
}

func TestExpiry(t *testing.T) {
	db, rdb := newDB(t, time.Hour)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	fresh, stale := "http://fresh.example/", "http://stale.example/"
	err := db.Put(ctx, []Update{
		{URL: fresh, Capture: capAt(now, "sha1:A")},
		{URL: stale, Capture: capAt(now.Add(-2*time.Hour), "sha1:B")}, // expired on arrival
	})
	if err != nil {
		t.Fatal(err)
	}
	ttl := rdb.PTTL(ctx, mustKey(t, db, fresh)).Val()
	if ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("fresh entry TTL %s, want about an hour", ttl)
	}
	if lookupOne(t, db, stale).Found() {
		t.Error("an event older than the TTL was stored")
	}
	// An older replay never shortens the expiry.
	if err := db.Put(ctx, []Update{{URL: fresh, Failure: &Failure{Time: now.Add(-30 * time.Minute), Status: -6}}}); err != nil {
		t.Fatal(err)
	}
	if got := rdb.PTTL(ctx, mustKey(t, db, fresh)).Val(); got < ttl-time.Minute {
		t.Errorf("older update shortened TTL %s -> %s", ttl, got)
	}
	if e := lookupOne(t, db, fresh); e.Failure == nil || e.Capture == nil {
		t.Errorf("entry %+v", e)
	}
}

// pipelineCounter counts round trips (pipelines and single commands) in
// n, and commands in cmds.
type pipelineCounter struct{ n, cmds atomic.Int64 }

func (c *pipelineCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n.Add(1); return next(ctx, cmd) }
}
func (c *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		c.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// TestLookupRepeatedURLs checks that a batch repeating a URL, in any of its
// spellings, reads its key once and gives every copy the entry.
func TestLookupRepeatedURLs(t *testing.T) {
	db, rdb := newDB(t, 0)
	ctx := context.Background()
	at := time.Unix(1700000000, 0)
	if err := db.Put(ctx, []Update{{URL: "http://a.example/x", Capture: capAt(at, "sha1:A")}}); err != nil {
		t.Fatal(err)
	}
	var counter pipelineCounter
	rdb.AddHook(&counter)
	urls := []string{"http://a.example/x", "http://b.example/", "HTTP://A.example:80/x#f", "mailto:a@b",
		"http://a.example/x", "http://b.example/"}
	got, err := db.Lookup(ctx, urls)
	if err != nil {
		t.Fatal(err)
	}
	if n := counter.cmds.Load(); n != 2 {
		t.Errorf("%d HMGETs for 2 distinct keys", n)
	}
	for i, want := range []bool{true, false, true, false, true, false} {
		if got[i].Found() != want || (want && got[i].Capture.Digest != "sha1:A") {
			t.Errorf("entry %d (%s): %+v, want found %v", i, urls[i], got[i], want)
		}
	}
	if got[0].Capture == got[2].Capture {
		t.Error("copies share one Capture")
	}
}

// A batch is one round trip each way; after a script flush (Redis
// restarted) Put reloads the script and still succeeds.
func TestRoundTripsAndScriptReload(t *testing.T) {
	db, rdb := newDB(t, 0)
	ctx := context.Background()
	var counter pipelineCounter
	rdb.AddHook(&counter)
	var ups []Update
	var urls []string
	for i := range 1000 {
		u := fmt.Sprintf("http://h%d.example/p/%d", i%37, i)
		urls = append(urls, u)
		ups = append(ups, Update{URL: u, Capture: capAt(time.Unix(1700000000+int64(i), 0), "sha1:X")})
	}
	if err := db.Put(ctx, ups); err != nil { // script not loaded yet: reload path
		t.Fatal(err)
	}
	counter.n.Store(0)
	if err := db.Put(ctx, ups); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Lookup(ctx, urls); err != nil {
		t.Fatal(err)
	}
	if n := counter.n.Load(); n != 2 {
		t.Errorf("Put and Lookup of 1000 took %d round trips, want 2", n)
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	late := Update{URL: urls[0], Capture: capAt(time.Unix(1800000000, 0), "sha1:Y")}
	if err := db.Put(ctx, []Update{late}); err != nil {
		t.Fatalf("Put after SCRIPT FLUSH: %v", err)
	}
	if e := lookupOne(t, db, urls[0]); e.Capture.Digest != "sha1:Y" {
		t.Errorf("after reload: %+v", e.Capture)
	}
}

// A damaged entry (values that are not ours, or not a hash) reads as
// absent instead of failing the batch, and the next update repairs it.
func TestDamagedEntries(t *testing.T) {
	db, rdb := newDB(t, 0)
	ctx := context.Background()
	cases := map[string]string{
		"c": "garbage",
		"o": "20240101000000000 {not json",
		"f": "2024 {}",
	}
	var urls []string
	for field, v := range cases {
		url := "http://bad.example/" + field
		urls = append(urls, url)
		if err := rdb.HSet(ctx, mustKey(t, db, url), field, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	str := "http://bad.example/str"
	urls = append(urls, str, "http://good.example/")
	if err := rdb.Set(ctx, mustKey(t, db, str), "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	good := Update{URL: "http://good.example/", Capture: capAt(time.Unix(1700000000, 0), "sha1:G")}
	if err := db.Put(ctx, []Update{good}); err != nil {
		t.Fatal(err)
	}
	es, err := db.Lookup(ctx, urls)
	if err != nil {
		t.Fatalf("one damaged entry failed the lookup: %v", err)
	}
	for i, e := range es[:len(es)-1] {
		if e.Found() {
			t.Errorf("%s: damaged entry read as %+v", urls[i], e)
		}
	}
	if !es[len(es)-1].Found() {
		t.Error("the good entry was lost")
	}
	fix := Update{URL: str, Failure: &Failure{Time: time.Unix(1700000000, 0), Status: -6}}
	if err := db.Put(ctx, []Update{fix, good}); err != nil {
		t.Fatalf("put onto a string key: %v", err)
	}
	if e := lookupOne(t, db, str); e.Failure == nil || e.Failure.Status != -6 {
		t.Errorf("string key not replaced: %+v", e)
	}
}

func TestNewAndRedisDown(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	for _, o := range []Options{{}, {Crawl: "fc", TTL: -time.Second}} {
		if _, err := New(rdb, o); err == nil {
			t.Errorf("New accepted %+v", o)
		}
	}
	if _, err := New(nil, Options{Crawl: "fc"}); err == nil {
		t.Error("New accepted a nil client")
	}
	db, err := New(rdb, Options{Crawl: "fc"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = db.Put(ctx, []Update{{URL: "http://x.example/", Failure: &Failure{Time: time.Now(), Status: -6}}})
	if err == nil || !strings.Contains(err.Error(), "recentdb: put 1 entries") {
		t.Errorf("put with Redis down: %v", err)
	}
	if _, err := db.Lookup(ctx, []string{"http://x.example/"}); err == nil {
		t.Error("lookup with Redis down succeeded")
	}
	// Nothing to do needs no Redis.
	if err := db.Put(ctx, nil); err != nil {
		t.Error(err)
	}
}
