package frontier

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// backend is a Redis to run a test against.
type backend struct {
	name string
	open func(t testing.TB) *redis.Client
}

func backends() []backend {
	return []backend{
		{"redis-server", func(t testing.TB) *redis.Client { return embeddedtest.Redis(t) }},
		{"miniredis", func(t testing.TB) *redis.Client {
			m := miniredis.RunT(t)
			rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
			t.Cleanup(func() { _ = rdb.Close() })
			return rdb
		}},
	}
}

// forBackends runs fn as a subtest on each backend.
func forBackends(t *testing.T, fn func(t *testing.T, rdb *redis.Client)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { fn(t, b.open(t)) })
	}
}

// clock is a settable test clock.
type clock struct{ t atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.t.Store(time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC).UnixMilli())
	return c
}

func (c *clock) now() time.Time      { return time.UnixMilli(c.t.Load()) }
func (c *clock) add(d time.Duration) { c.t.Add(d.Milliseconds()) }

func newTestFrontier(t *testing.T, rdb *redis.Client, ck *clock, o Options) *Frontier {
	t.Helper()
	if ck != nil {
		o.Now = ck.now
	}
	f, err := New(rdb, "t", o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// testPolicy has no politeness delay, few retries and no quotas.
func testPolicy() Policy {
	p := PolicyOf(profile.Default())
	p.Politeness = profile.Politeness{DelayFactor: 0, MinDelayMs: 0, MaxDelayMs: 0, RespectCrawlDelayUpToSeconds: 300}
	p.Frontier.MaxRetries = 2
	p.Frontier.RetryDelaySeconds = 10
	return p
}

// cand builds a candidate for http://host+path with the given hop path.
func cand(host, path, hops string, seed bool) Candidate {
	u := "http://" + host + path
	l := messages.Launch{URL: u, IsSeed: seed, ParentURL: "http://" + host + "/",
		ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:http://" + host + "/"}}}
	if hops != "" {
		l.Hop = hops[len(hops)-1:]
		l.ParentURLMetadata.PathFromSeed = hops[:len(hops)-1]
	}
	return Candidate{Launch: l, Policy: testPolicy()}
}

func admit(t *testing.T, f *Frontier, cs ...Candidate) []Verdict {
	t.Helper()
	res, err := f.Admit(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]Verdict, len(res))
	for i, r := range res {
		out[i] = r.Verdict
		if r.Err != nil {
			t.Fatalf("candidate %d: %v", i, r.Err)
		}
	}
	return out
}

func claim(t *testing.T, f *Frontier, n int) []*Claim {
	t.Helper()
	cs, _, err := f.Claim(context.Background(), n, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func urls(cs []*Claim) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Launch.URL
	}
	return out
}

// finish completes claims with status 200 and no delay.
func finish(t *testing.T, f *Frontier, cs ...*Claim) {
	t.Helper()
	outs := make([]Outcome, len(cs))
	for i, c := range cs {
		outs[i] = Outcome{Claim: c, Status: 200, Bytes: 1000, Policy: testPolicy()}
	}
	ok, err := f.Complete(context.Background(), outs)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range ok {
		if !v {
			t.Fatalf("outcome %d: lease lost", i)
		}
	}
}

func stats(t *testing.T, f *Frontier) Stats {
	t.Helper()
	st, err := f.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func totals(t *testing.T, f *Frontier) Totals {
	t.Helper()
	tot, err := f.Totals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tot
}

func mustEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func sprint(v any) string { return fmt.Sprint(v) }
