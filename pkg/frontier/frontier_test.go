package frontier

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// A host queue serves seeds and forced URIs first, then URIs within
// preferenceDepthHops, then the rest, each level in arrival order; a
// forceFetch of a queued URI moves it to the front without a duplicate.
func TestQueueOrdering(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{})
		deep1, near, deep2 := cand("a", "/deep1", "LLL", false), cand("a", "/near", "L", false), cand("a", "/deep2", "LLL", false)
		for _, c := range []*Candidate{&deep1, &near, &deep2} {
			c.Policy.Frontier.PreferenceDepthHops = 1
		}
		redirect := cand("a", "/moved", "LLR", false)
		redirect.Policy.Frontier.PreferenceDepthHops = 1
		got := admit(t, f, deep1, near, cand("a", "/", "", true), deep2, redirect, deep1)
		mustEqual(t, "verdicts", sprint(got), sprint([]Verdict{Admitted, Admitted, Admitted, Admitted, Admitted, Queued}))

		forced := cand("a", "/deep2", "LLL", false)
		forced.Launch.ForceFetch = true
		mustEqual(t, "force verdict", admit(t, f, forced)[0], Reprioritised)
		mustEqual(t, "force again", admit(t, f, forced)[0], Queued) // already at the front

		var order []string
		for {
			cs := claim(t, f, 4)
			if len(cs) == 0 {
				break
			}
			if len(cs) != 1 {
				t.Fatalf("one host must yield one claim at a time, got %v", urls(cs))
			}
			order = append(order, cs[0].Launch.URL)
			finish(t, f, cs...)
		}
		want := []string{"http://a/", "http://a/deep2", "http://a/near", "http://a/moved", "http://a/deep1"}
		mustEqual(t, "claim order", sprint(order), sprint(want))
		st := stats(t, f)
		if st.Queued != 0 || st.InFlight != 0 || st.Hosts != 1 || st.ExhaustedHosts != 1 {
			t.Fatalf("stats after draining: %+v", st)
		}
		mustEqual(t, "finished", totals(t, f).URIs, 5)
	})
}

// The claimed launch carries everything the candidate had.
func TestClaimRoundTripsLaunch(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{})
		depth := 2
		interval := int64(3600)
		l := messages.Launch{
			URL: "https://www.example.com:8443/a?b=c", Method: "GET", Hop: "E", ParentURL: "https://www.example.com:8443/",
			ParentURLMetadata: messages.ParentMetadata{PathFromSeed: "LL", HeritableData: messages.HeritableData{
				Source: "tid:9:https://www.example.com/", Heritable: []string{"source", "heritable", "annotations"},
				RefreshDepth: &depth, LaunchTimestamp: "20240117090000", Annotations: []string{"resetQuotas", "WebRenderThis"},
			}},
			Headers: map[string]string{"Referer": "https://x/"}, Sheets: []string{"noForms"}, RecrawlInterval: &interval,
		}
		c := Candidate{Launch: l, Policy: testPolicy()}
		admit(t, f, c)
		cs := claim(t, f, 1)
		if len(cs) != 1 {
			t.Fatal("no claim")
		}
		got := cs[0]
		mustEqual(t, "host", got.Host, "www.example.com:8443")
		a, _ := json.Marshal(l)
		b, _ := json.Marshal(got.Launch)
		mustEqual(t, "launch", string(b), string(a))
	})
}

// After a fetch the host waits delayFactor x duration clamped to
// [min, max], raised to its stored Crawl-delay up to the respected
// maximum; other hosts are not held up.
func TestPolitenessDelays(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		var cs []Candidate
		for i := range 5 {
			cs = append(cs, cand("a", "/"+string(rune('0'+i)), "L", false))
		}
		admit(t, f, cs...)
		pol := testPolicy()
		pol.Politeness.DelayFactor, pol.Politeness.MinDelayMs, pol.Politeness.MaxDelayMs = 5, 1000, 30000
		pol.Politeness.RespectCrawlDelayUpToSeconds = 20
		steps := []struct {
			fetch      time.Duration
			crawlDelay time.Duration
			known      bool
			bytes      int64
			kbps       int64
			want       time.Duration
		}{
			// clamped up to min
			{fetch: 100 * time.Millisecond, want: time.Second},
			// factor 5
			{fetch: 2 * time.Second, want: 10 * time.Second},
			// robots Crawl-delay
			{fetch: 100 * time.Millisecond, crawlDelay: 15 * time.Second, known: true, want: 15 * time.Second},
			// the stored Crawl-delay still applies
			{fetch: 100 * time.Millisecond, want: 15 * time.Second},
			// Crawl-delay capped to 20s; bandwidth cap: 1 MiB at 16 KB/s
			{fetch: 100 * time.Millisecond, crawlDelay: time.Minute, known: true, bytes: 1 << 20, kbps: 16, want: 64 * time.Second},
		}
		for i, s := range steps {
			got := claim(t, f, 1)
			if len(got) != 1 {
				t.Fatalf("step %d: host not ready", i)
			}
			p := pol
			p.Frontier.MaxPerHostBandwidthUsageKbSec = s.kbps
			if _, err := f.Complete(context.Background(), []Outcome{{Claim: got[0], Status: 200, Bytes: s.bytes,
				Duration: s.fetch, CrawlDelay: s.crawlDelay, CrawlDelayKnown: s.known, Policy: p}}); err != nil {
				t.Fatal(err)
			}
			admit(t, f, cand("b", "/"+string(rune('0'+i)), "L", false))
			if other := claim(t, f, 2); len(other) != 1 || other[0].Host != "b" {
				t.Fatalf("step %d: another host must stay claimable, got %v", i, urls(other))
			} else {
				finish(t, f, other...)
			}
			ck.add(s.want - time.Millisecond)
			if early := claim(t, f, 1); len(early) != 0 {
				t.Fatalf("step %d: host claimed %v before its %v delay", i, urls(early), s.want)
			}
			info, err := f.Host(context.Background(), "a")
			if err != nil {
				t.Fatal(err)
			}
			mustEqual(t, "next fetch", info.NextFetch, ck.now().Add(time.Millisecond))
			ck.add(time.Millisecond)
		}
	})
}

// parallelQueues lets that many URIs of one host be in flight at once.
func TestParallelQueues(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{})
		var cs []Candidate
		for i := range 6 {
			c := cand("a", "/"+string(rune('0'+i)), "L", false)
			c.Policy.Frontier.ParallelQueues = 3
			cs = append(cs, c)
		}
		admit(t, f, cs...)
		// One claim call gives all three: a single big site is not held
		// to one URI per round trip.
		held := claim(t, f, 10)
		mustEqual(t, "claimed in one call", len(held), 3)
		for range 4 {
			held = append(held, claim(t, f, 10)...)
		}
		mustEqual(t, "in flight", len(held), 3)
		mustEqual(t, "busy hosts", stats(t, f).BusyHosts, 1)
		if _, err := f.Complete(context.Background(), []Outcome{{Claim: held[0], Status: 200, Policy: cs[0].Policy}}); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "slot freed", len(claim(t, f, 10)), 1)
	})
}

// A crashed worker's lease expires and its URI comes back uncharged; the
// late worker's completion and renewal are refused.
func TestLeaseExpiry(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		ctx := context.Background()
		admit(t, f, cand("h", "/1", "", true), cand("h", "/2", "L", false))
		cs, _, err := f.Claim(ctx, 1, 10*time.Second)
		if err != nil || len(cs) != 1 {
			t.Fatalf("claim: %v %v", cs, err)
		}
		if n, _ := f.Reap(ctx); n != 0 {
			t.Fatalf("reaped a live lease: %d", n)
		}
		ck.add(5 * time.Second)
		if lost, err := f.Renew(ctx, cs, 10*time.Second); err != nil || len(lost) != 0 {
			t.Fatalf("renew: lost %v, err %v", lost, err)
		}
		ck.add(9 * time.Second) // still inside the renewed lease
		if n, _ := f.Reap(ctx); n != 0 {
			t.Fatal("renewed lease reaped")
		}
		ck.add(2 * time.Second) // the worker died
		if n, err := f.Reap(ctx); n != 1 || err != nil {
			t.Fatalf("reap = %d, %v", n, err)
		}
		if lost, _ := f.Renew(ctx, cs, time.Minute); len(lost) != 1 {
			t.Fatal("renewing a reaped lease must report it lost")
		}
		if ok, _ := f.Complete(ctx, []Outcome{{Claim: cs[0], Status: 200, Policy: testPolicy()}}); ok[0] {
			t.Fatal("completing a reaped lease must be refused")
		}
		if cs[0].Interrupted {
			t.Fatal("a first claim is not interrupted")
		}
		again := claim(t, f, 1)
		if len(again) != 1 || again[0].Launch.URL != cs[0].Launch.URL || again[0].Retries != 0 || !again[0].Interrupted {
			t.Fatalf("URI not returned uncharged at the front, marked interrupted: %+v", again)
		}
		mustEqual(t, "finished", totals(t, f).URIs, 0)
	})
}

// Transient failures are retried after retryDelaySeconds up to maxRetries,
// then finish with -8; 5xx only when retryServerErrors is set.
func TestRetries(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		ctx := context.Background()
		admit(t, f, cand("h", "/x", "", true))
		pol := testPolicy() // maxRetries 2, retryDelay 10s
		var last Decision
		for attempt := 0; attempt < 3; attempt++ {
			cs := claim(t, f, 1)
			if len(cs) != 1 {
				t.Fatalf("attempt %d: not claimable", attempt)
			}
			mustEqual(t, "retries", cs[0].Retries, attempt)
			last = pol.Decide(-2, cs[0].Retries)
			if _, err := f.Complete(ctx, []Outcome{{Claim: cs[0], Status: -2, Duration: time.Millisecond, Policy: pol}}); err != nil {
				t.Fatal(err)
			}
			if attempt < 2 {
				mustEqual(t, "queued for retry", stats(t, f).Queued, 1)
				ck.add(10*time.Second - time.Millisecond)
				if len(claim(t, f, 1)) != 0 {
					t.Fatal("retried before retryDelaySeconds")
				}
				ck.add(time.Millisecond)
			}
		}
		mustEqual(t, "final", last, Decision{Status: StatusRetriesExhausted, Attempts: 3})
		mustEqual(t, "annotation", last.Annotation(), "3t")
		tot := totals(t, f)
		if tot.URIs != 1 || tot.ByStatus[-8] != 1 || tot.Retries != 2 {
			t.Fatalf("totals %+v", tot)
		}
		mustEqual(t, "queued", stats(t, f).Queued, 0)

		admit(t, f, cand("h", "/500", "", true))
		cs := claim(t, f, 1)
		ck.add(time.Hour)
		if _, err := f.Complete(ctx, []Outcome{{Claim: cs[0], Status: 500, Policy: pol}}); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "500 without retryServerErrors finishes", totals(t, f).ByStatus[500], 1)
		// A 503 asks the crawl to slow down: the host backs off and the
		// URI is deferred, not finished (backoff_test.go).
		admit(t, f, cand("h", "/503", "", true))
		ck.add(time.Hour)
		cs = claim(t, f, 1)
		if _, err := f.Complete(ctx, []Outcome{{Claim: cs[0], Status: 503, Policy: pol}}); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "503 finishes", totals(t, f).ByStatus[503], 0)
		mustEqual(t, "503 queued again", stats(t, f).Queued, 1)
	})
}

// Quota counters come back with each claim, per server, host name and
// source; resetQuotas on a new launch clears them.
func TestQuotaCounters(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{})
		ctx := context.Background()
		pol := testPolicy()
		pol.Quotas.ServerMaxFetchSuccesses = 2
		mk := func(host, path string) Candidate {
			c := cand(host, path, "L", false)
			c.Launch.ParentURLMetadata.HeritableData.Source = "tid:7:http://a/"
			c.Policy = pol
			return c
		}
		admit(t, f, mk("a", "/1"), mk("a", "/2"), mk("a", "/3"), mk("a:8080", "/4"), mk("b", "/5"))
		results := map[string]int{"http://a/1": 200, "http://a/2": 404, "http://a/3": 200, "http://a:8080/4": 200, "http://b/5": -2}
		var blocked []string
		for range 10 {
			cs := claim(t, f, 10)
			if len(cs) == 0 {
				break
			}
			var outs []Outcome
			for _, c := range cs {
				if q, over := pol.OverQuota(c.Usage); over {
					blocked = append(blocked, c.Launch.URL+" Q:"+q)
					outs = append(outs, Outcome{Claim: c, Status: StatusBlockedByQuota, NotFetched: true, Policy: pol})
					continue
				}
				outs = append(outs, Outcome{Claim: c, Status: results[c.Launch.URL], Bytes: 2048, Policy: pol})
			}
			if _, err := f.Complete(ctx, outs); err != nil {
				t.Fatal(err)
			}
		}
		// a/1 and a/2 count two responses but one success; a/3 makes two.
		if len(blocked) != 0 {
			t.Fatalf("blocked too early: %v", blocked)
		}
		admit(t, f, mk("a", "/6"), mk("a:8080", "/7"))
		cs := claim(t, f, 10)
		got := map[string]Usages{}
		for _, c := range cs {
			got[c.Host] = c.Usage
		}
		mustEqual(t, "server a", got["a"].Server, Usage{FetchSuccesses: 2, SuccessBytes: 4096, FetchResponses: 3, AllBytes: 6144})
		mustEqual(t, "host name a over ports", got["a:8080"].Host, Usage{FetchSuccesses: 3, SuccessBytes: 6144, FetchResponses: 4, AllBytes: 8192})
		mustEqual(t, "source", got["a"].Source, Usage{FetchSuccesses: 3, SuccessBytes: 6144, FetchResponses: 4, AllBytes: 8192})
		q, over := pol.OverQuota(got["a"])
		if !over || q != "serverMaxFetchSuccesses" {
			t.Fatalf("over quota = %q %v", q, over)
		}
		finish(t, f, cs...)

		seed := mk("a", "/")
		seed.Launch.IsSeed, seed.ResetQuotas = true, true
		admit(t, f, seed)
		cs = claim(t, f, 10)
		if len(cs) != 1 || cs[0].Usage != (Usages{}) {
			t.Fatalf("after resetQuotas: %+v", cs)
		}
	})
}

// recentlySeen: a URI is admitted again once its recrawlInterval has
// passed, or when its last crawl is older than the launch timestamp it
// inherits; the frontier's own record of what it finished counts even
// when the candidate knows of no earlier crawl.
func TestRecentlySeen(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		c := cand("a", "/p", "L", false)
		c.Policy.Frontier.RecrawlIntervalSeconds = 3600
		mustEqual(t, "first", admit(t, f, c)[0], Admitted)
		mustEqual(t, "while queued", admit(t, f, c)[0], Queued)
		finish(t, f, claim(t, f, 1)...)
		mustEqual(t, "just finished (own record)", admit(t, f, c)[0], Seen)

		ck.add(85 * time.Minute)
		withDB := c
		withDB.LastCrawled = ck.now().Add(-10 * time.Minute) // the DB knows a later crawl
		mustEqual(t, "DB crawl within interval", admit(t, f, withDB)[0], Seen)
		mustEqual(t, "own record past interval", admit(t, f, c)[0], Admitted)
		finish(t, f, claim(t, f, 1)...)

		launched := c
		launched.Launch.ParentURLMetadata.HeritableData.LaunchTimestamp = messages.Timestamp14(ck.now().Add(-time.Minute))
		mustEqual(t, "crawled after the launch", admit(t, f, launched)[0], Seen)
		ck.add(time.Second)
		launched.Launch.ParentURLMetadata.HeritableData.LaunchTimestamp = messages.Timestamp14(ck.now())
		depth := 0
		launched.Launch.ParentURLMetadata.HeritableData.RefreshDepth = &depth
		mustEqual(t, "beyond refreshDepth", admit(t, f, launched)[0], Seen)
		depth = 1
		mustEqual(t, "launched after the last crawl", admit(t, f, launched)[0], Admitted)

		per := cand("a", "/q", "L", false)
		iv := int64(60)
		per.Launch.RecrawlInterval = &iv
		admit(t, f, per)
		for len(claim(t, f, 1)) == 0 {
			ck.add(time.Second)
		}
		st := stats(t, f)
		if st.InFlight != 1 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func TestPauseAndStats(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		ctx := context.Background()
		admit(t, f, cand("a", "/1", "L", false), cand("a", "/2", "L", false), cand("b", "/1", "L", false), cand("c", "/1", "L", false))
		if err := f.PauseHost(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if err := f.PauseHost(ctx, "nosuch"); err == nil {
			t.Fatal("pausing an unknown host must fail")
		}
		cs := claim(t, f, 10)
		mustEqual(t, "claimed hosts", len(cs), 2) // a and c
		st := stats(t, f)
		want := Stats{Queued: 2, InFlight: 2, Hosts: 3, BusyHosts: 2, PausedHosts: 1}
		mustEqual(t, "stats", st, want)
		pol := testPolicy()
		pol.Politeness.MinDelayMs, pol.Politeness.MaxDelayMs = 5000, 5000
		var outs []Outcome
		for _, c := range cs {
			outs = append(outs, Outcome{Claim: c, Status: 200, Policy: pol})
		}
		if _, err := f.Complete(ctx, outs); err != nil {
			t.Fatal(err)
		}
		st = stats(t, f)
		want = Stats{Queued: 2, Hosts: 3, SnoozedHosts: 1, ExhaustedHosts: 1, PausedHosts: 1}
		mustEqual(t, "stats after complete", st, want)

		if err := f.Pause(ctx); err != nil {
			t.Fatal(err)
		}
		ck.add(10 * time.Second)
		if err := f.ResumeHost(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		if cs, wait, _ := f.Claim(ctx, 10, time.Minute); len(cs) != 0 || wait <= 0 {
			t.Fatalf("paused frontier handed out %v (wait %v)", urls(cs), wait)
		}
		if !stats(t, f).Paused {
			t.Fatal("stats do not show the pause")
		}
		if err := f.Resume(ctx); err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "after resume", len(claim(t, f, 10)), 2)
		info, err := f.Host(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if info.InFlight != 1 || info.Queued != 0 || info.ParallelQueues != 1 || info.Server.FetchSuccesses != 1 {
			t.Fatalf("host info %+v", info)
		}
		if _, err := f.Host(ctx, "nosuch"); err == nil {
			t.Fatal("unknown host must be an error")
		}
	})
}

// Release returns work at once and uncharged; ReleaseAll returns every
// lease, live or not.
func TestRelease(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{})
		ctx := context.Background()
		admit(t, f, cand("h", "/1", "", true), cand("h", "/2", "L", false), cand("g", "/1", "L", false))
		cs := claim(t, f, 2)
		if err := f.Release(ctx, cs[:1]); err != nil {
			t.Fatal(err)
		}
		again := claim(t, f, 2)
		if len(again) != 1 || again[0].Launch.URL != cs[0].Launch.URL || !again[0].Interrupted {
			t.Fatalf("released URI should be claimable first, marked interrupted: %+v", again)
		}
		if n, err := f.ReleaseAll(ctx); n != 2 || err != nil {
			t.Fatalf("release all = %d, %v", n, err)
		}
		mustEqual(t, "all back", stats(t, f), Stats{Queued: 3, Hosts: 2, ReadyHosts: 2})
	})
}

// Invalid candidates are reported one by one; corrupt queue entries are
// finished as -7 instead of blocking their host.
func TestBadInput(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{})
		ctx := context.Background()
		bad := []Candidate{
			{Launch: messages.Launch{URL: ""}},
			{Launch: messages.Launch{URL: "not a url"}},
			{Launch: messages.Launch{URL: "http://h/\x1fx"}},
			cand("h", "/fine", "L", false),
		}
		res, err := f.Admit(ctx, bad)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res[:3] {
			if r.Verdict != Invalid || r.Err == nil {
				t.Errorf("candidate %d: %v %v, want invalid with a reason", i, r.Verdict, r.Err)
			}
		}
		mustEqual(t, "good one", res[3].Verdict, Admitted)

		ctx2 := context.Background()
		rdb.LPush(ctx2, "{t}:q:h:2", "garbage")
		rdb.RPush(ctx2, "{t}:q:z:2", "uk 1 2 0 ctx bad-payload")
		nb, _ := strconv.Atoi(rdb.HGet(ctx2, "{t}:meta", "ixb").Val())
		rdb.HSet(ctx2, "{t}:x:"+strconv.Itoa(ixBucket("uk", max(nb, 1))), "uk", queuedState(2, "1"))
		rdb.HIncrBy(ctx2, "{t}:meta", "ixn", 1)
		rdb.HSet(ctx2, "{t}:h:z", "n", 1, "pq", 1)
		rdb.HIncrBy(ctx2, "{t}:meta", "queued", 1)
		rdb.HIncrBy(ctx2, "{t}:meta", "hosts", 1)
		rdb.ZAdd(ctx2, "{t}:ready", redis.Z{Member: "z"})
		cs := claim(t, f, 10)
		mustEqual(t, "claims", sprint(urls(cs)), "[http://h/fine]")
		st := stats(t, f)
		if st.Queued != 0 || st.InFlight != 1 {
			t.Fatalf("corrupt entries left state behind: %+v", st)
		}
		mustEqual(t, "corrupt entry finished as -7", totals(t, f).ByStatus[-7], 1)
		if _, _, err := f.Claim(ctx, 0, time.Minute); err == nil {
			t.Fatal("claim of 0 must fail")
		}
		if _, err := f.Complete(ctx, []Outcome{{}}); err == nil {
			t.Fatal("outcome without claim must fail")
		}
		if _, err := New(rdb, "", Options{}); err == nil {
			t.Fatal("frontier without name must fail")
		}
		if _, err := New(rdb, "x", Options{SeenFilter: "other"}); err == nil {
			t.Fatal("unknown seen filter must fail")
		}
	})
}

// With several shards, hosts spread over hash tags and every operation
// still sees the whole frontier.
func TestShards(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{Shards: 4})
		var cs []Candidate
		for i := range 40 {
			cs = append(cs, cand("host"+string(rune('a'+i%20)), "/"+string(rune('a'+i)), "L", false))
		}
		admit(t, f, cs...)
		keys, _ := rdb.Keys(context.Background(), "{t:*}:ready").Result()
		if len(keys) < 2 {
			t.Fatalf("hosts did not spread over shards: %v", keys)
		}
		mustEqual(t, "queued", stats(t, f).Queued, 40)
		seen := map[string]bool{}
		for len(seen) < 40 {
			got := claim(t, f, 7)
			if len(got) == 0 {
				t.Fatalf("ran dry after %d", len(seen))
			}
			for _, c := range got {
				if seen[c.Launch.URL] {
					t.Fatalf("%s claimed twice", c.Launch.URL)
				}
				seen[c.Launch.URL] = true
			}
			finish(t, f, got...)
		}
		mustEqual(t, "totals", totals(t, f).URIs, 40)
	})
}
