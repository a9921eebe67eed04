package frontier

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Novel totals count finished URIs with a response that are not revisits,
// and their bytes, over every shard; a rebuild from the crawled journal
// counts them the same way.
func TestNovelTotals(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{Shards: 2})
		admit(t, f, cand("a.test", "/1", "", true), cand("b.test", "/2", "", true), cand("c.test", "/3", "", true),
			cand("d.test", "/4", "", true))
		cs := claim(t, f, 4)
		if len(cs) != 4 {
			t.Fatalf("claimed %d, want 4", len(cs))
		}
		outs := []Outcome{
			{Claim: cs[0], Status: 200, Bytes: 1000, Policy: testPolicy()},
			{Claim: cs[1], Status: 200, Bytes: 700, Policy: testPolicy(), Revisit: true},
			{Claim: cs[2], Status: 304, Bytes: 300, Policy: testPolicy(), Revisit: true},
			{Claim: cs[3], Status: 404, Bytes: 50, Policy: testPolicy()},
		}
		if _, err := f.Complete(context.Background(), outs); err != nil {
			t.Fatal(err)
		}
		tot := totals(t, f)
		mustEqual(t, "downloaded", tot.Downloaded, 4)
		mustEqual(t, "novel", tot.Novel, 2)
		mustEqual(t, "novel bytes", tot.NovelBytes, 1050)
		mustEqual(t, "bytes", tot.Bytes, 2050)

		_, _, err := f.MarkFinished(context.Background(), []Finished{
			{URL: "http://e.test/", Status: 200, Bytes: 10, At: time.Now()},
			{URL: "http://e.test/r", Status: 200, Bytes: 20, At: time.Now(), Revisit: true},
			{URL: "http://e.test/x", Status: -6, Bytes: 0, At: time.Now()},
		})
		if err != nil {
			t.Fatal(err)
		}
		tot = totals(t, f)
		mustEqual(t, "novel after rebuild", tot.Novel, 3)
		mustEqual(t, "novel bytes after rebuild", tot.NovelBytes, 1060)
	})
}

// A URI put back for a retry makes its host wait, and Stats says how many
// hosts and URIs wait and when the first wait ends; a finish elsewhere or
// the end of the wait changes nothing else. OnlyRetriesLeft tells a crawl
// that has nothing else to do.
func TestStatsRetryWaits(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{Shards: 2})
		admit(t, f, cand("down.test", "/1", "", true), cand("down.test", "/2", "L", false), cand("up.test", "/", "", true))
		cs := claim(t, f, 2)
		if len(cs) != 2 {
			t.Fatalf("claimed %d, want 2", len(cs))
		}
		var outs []Outcome
		for _, c := range cs {
			st := 200
			if c.Host == "down.test" {
				st = -2 // connection failed: retried after retryDelaySeconds (10 s)
			}
			outs = append(outs, Outcome{Claim: c, Status: st, Policy: testPolicy()})
		}
		if _, err := f.Complete(context.Background(), outs); err != nil {
			t.Fatal(err)
		}
		st := stats(t, f)
		mustEqual(t, "retry hosts", st.RetryHosts, 1)
		mustEqual(t, "retry URIs", st.RetryURIs, 2)
		mustEqual(t, "next retry", st.NextRetry, ck.now().Add(10*time.Second))
		mustEqual(t, "only retries left", st.OnlyRetriesLeft(), true)

		ck.add(10 * time.Second) // the wait is over: the host is ready
		st = stats(t, f)
		mustEqual(t, "retry hosts when due", st.RetryHosts, 0)
		mustEqual(t, "retry URIs when due", st.RetryURIs, 0)
		mustEqual(t, "next retry when due", st.NextRetry.IsZero(), true)
		mustEqual(t, "only retries left when due", st.OnlyRetriesLeft(), false)
	})
}

// The crawl clock is set once, by the first caller, and only
// RestartCrawlClock moves it.
func TestCrawlStart(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{Shards: 2})
		other := newTestFrontier(t, rdb, ck, Options{Shards: 2}) // a second worker
		ctx := context.Background()
		start := ck.now()
		got, err := f.CrawlStart(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "start", got, start)
		ck.add(time.Hour)
		got, err = other.CrawlStart(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "start read later", got, start)
		if err := other.RestartCrawlClock(ctx); err != nil {
			t.Fatal(err)
		}
		got, err = f.CrawlStart(ctx)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "start after a restart", got, start.Add(time.Hour))
	})
}

// QueuedByHostName adds up a host's queues over its ports, as the hosts
// report's #remaining counts per host name.
func TestQueuedByHostName(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{Shards: 2})
		admit(t, f, cand("a.test:8080", "/1", "", true), cand("a.test:8080", "/2", "L", false),
			cand("a.test", "/3", "", true), cand("b.test:81", "/", "", true))
		got, err := f.QueuedByHostName(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "a.test", got["a.test"], 3)
		mustEqual(t, "b.test", got["b.test"], 1)
		mustEqual(t, "hosts", len(got), 2)
		// The top host names sum their ports the same way.
		for n, want := range map[int]string{0: "[]", 1: "[{a.test 3}]", 5: "[{a.test 3} {b.test 1}]"} {
			top, err := f.TopQueuedHostNames(context.Background(), n)
			if err != nil {
				t.Fatal(err)
			}
			mustEqual(t, fmt.Sprintf("top %d host names", n), fmt.Sprint(top), want)
		}
	})
}
