package sheets

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

const keyPrefix = "{fc-test}:"

// clock is a settable time source shared by the instances of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func withRedis(t *testing.T, rdb redis.UniversalClient, p profile.Profile, clk *clock) (*Sheets, *logBuffer) {
	t.Helper()
	log, buf := testLogger()
	s, err := New(context.Background(), p, Options{Logger: log, Redis: rdb, KeyPrefix: keyPrefix,
		MinRefreshInterval: time.Second, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s, buf
}

const ukwaProfile = "sheets:\n  include: [ukwa]\n"

// Launch-attached sheets written by one worker reach another through
// Redis, on Refresh once the version moved and the refresh interval passed.
func TestRedisPersistenceAcrossInstances(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	p := decode(t, ukwaProfile)
	a, logA := withRedis(t, rdb, p, clk)
	b, _ := withRedis(t, rdb, p, clk)

	l := messages.Launch{URL: "https://www.example.org/news/today", IsSeed: true,
		Sheets: []string{"ignoreRobots", "noSuchSheet", "fast-2ps"},
		TargetSheet: map[string]json.RawMessage{
			"queueAssignmentPolicy.parallelQueues": json.RawMessage(`2`),
			"politeness.minDelay":                  json.RawMessage(`1`),
			"frontier.parallelQueues":              json.RawMessage(`"many"`),
		}}
	d, err := a.AttachLaunch(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Sheets, []string{"noSuchSheet"}) || len(d.Settings) != 2 ||
		!strings.HasPrefix(d.Settings[0], "frontier.parallelQueues: ") || !strings.HasPrefix(d.Settings[1], "politeness.minDelay: ") {
		t.Fatalf("dropped = %+v", d)
	}
	if !strings.Contains(logA.String(), "noSuchSheet") {
		t.Errorf("dropped sheet not logged: %s", logA)
	}
	const under = "http://(org,example,www,)/news/story"
	want := []string{"ignoreRobots", "fast-2ps", TargetSheetName}
	check := func(s *Sheets, who string, want []string) {
		t.Helper()
		e := s.For(under)
		if !slices.Equal(e.Sheets, want) {
			t.Fatalf("%s: sheets %q, want %q", who, e.Sheets, want)
		}
		if len(want) > 0 && (e.Profile.Frontier.ParallelQueues != 2 || e.Profile.Robots.Policy != profile.RobotsIgnore ||
			e.Profile.Politeness.MinDelayMs != 500) {
			t.Fatalf("%s: settings not applied: %+v %+v", who, e.Profile.Frontier, e.Profile.Politeness)
		}
	}
	check(a, "attaching worker", want)
	if got := a.For("http://(org,example,www,)/other").Sheets; len(got) != 0 {
		t.Fatalf("outside the implied prefix: %q", got)
	}

	// B has not looked yet, and does not look again within the interval.
	check(b, "other worker before refresh", nil)
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	check(b, "other worker within the refresh interval", nil)
	clk.Advance(time.Second)
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	check(b, "other worker after refresh", want)
	if a.Version() != 1 || b.Version() != 1 {
		t.Fatalf("versions %d %d", a.Version(), b.Version())
	}

	// A worker started later loads everything at New.
	c, _ := withRedis(t, rdb, p, clk)
	check(c, "new worker", want)

	// A new launch for the same prefix replaces what was attached.
	if _, err := b.Attach(ctx, "http://(org,example,www,)/news/", []string{"extraPolite"}, nil); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if e := a.For(under); !slices.Equal(e.Sheets, []string{"extraPolite"}) || e.Profile.Politeness.MinDelayMs != 10000 {
		t.Fatalf("after replace: %q", e.Sheets)
	}

	// A relaunch with the same sheets writes nothing.
	if _, err := b.Attach(ctx, "http://(org,example,www,)/news/", []string{"extraPolite"}, nil); err != nil {
		t.Fatal(err)
	}
	if b.Version() != 2 {
		t.Fatalf("identical relaunch moved the version to %d", b.Version())
	}
	// A attaching after B's change reloads everything rather than only
	// adding its own prefix.
	if _, err := b.Attach(ctx, "http://(uk,co,bbc,", []string{"noLimit"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Attach(ctx, "http://(uk,co,itv,", []string{"noLimit"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := a.For("http://(uk,co,bbc,)/").Sheets; !slices.Equal(got, []string{"noLimit"}) || a.Version() != 4 {
		t.Fatalf("A missed B's change: %q at version %d", got, a.Version())
	}
	for _, p := range []string{"http://(uk,co,bbc,", "http://(uk,co,itv,"} {
		if err := a.Detach(ctx, p); err != nil {
			t.Fatal(err)
		}
	}

	// Detach clears it everywhere.
	if err := c.Detach(ctx, "https://www.example.org/news/"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	check(a, "after detach", nil)
	if a.Version() != 7 {
		t.Fatalf("version %d, want 7", a.Version())
	}
}

// The golden launch messages attach what they carry.
func TestGoldenLaunchMessages(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	s, _ := withRedis(t, rdb, decode(t, ukwaProfile), &clock{})
	f, err := os.Open("testdata/launch-messages.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l, err := messages.DecodeLaunch(sc.Bytes())
		if err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		d, err := s.AttachLaunch(ctx, l)
		if err != nil || !d.Empty() {
			t.Fatalf("line %d: dropped %+v, err %v", n, d, err)
		}
	}
	tests := []struct {
		surt   string
		sheets []string
		check  func(profile.Profile) bool
	}{
		{"http://(com,example,acid,)/page", []string{"recrawl-1hr", "ignoreRobots"},
			func(p profile.Profile) bool {
				return p.Frontier.RecrawlIntervalSeconds == 3600 && p.Robots.Policy == "ignore"
			}},
		{"http://(com,example,crawl-test,)/never-crawl/x", []string{"blockAll"},
			func(p profile.Profile) bool { return p.Preselector.BlockAll }},
		{"http://(com,example,crawl-test,)/other", nil,
			func(p profile.Profile) bool { return !p.Preselector.BlockAll }},
		{"http://(com,example,social,)/someone", []string{TargetSheetName},
			func(p profile.Profile) bool { return p.Frontier.ParallelQueues == 2 }},
		{"http://(org,example,news,)/", nil, func(p profile.Profile) bool { return p.Frontier.ParallelQueues == 1 }},
	}
	for _, tc := range tests {
		e := s.For(tc.surt)
		if !slices.Equal(e.Sheets, tc.sheets) || !tc.check(e.Profile) {
			t.Errorf("%s: sheets %q, profile %+v", tc.surt, e.Sheets, e.Profile.Frontier)
		}
	}
	// The two queue-assignment keys Trawler has no use for are explained.
	ex := s.Explain("http://(com,example,social,)/someone")
	if len(ex) != 1 || ex[0].Origin != OriginLaunch || len(ex[0].Ignored) != 2 ||
		!strings.HasPrefix(ex[0].Ignored[0], "queueAssignmentPolicy.deferToPrevious: ") {
		t.Fatalf("explain = %+v", ex)
	}
}

// Identical targetSheets at different prefixes share one effective profile;
// a stored entry that does not decode is skipped, and a stored sheet name the
// profile no longer has is reported, without losing the rest.
func TestStoredEntries(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	clk := &clock{}
	p := decode(t, "sheets:\n  definitions:\n    gone: {fetch.ignoreCookies: true}\n")
	a, _ := withRedis(t, rdb, p, clk)
	ts := map[string]json.RawMessage{"frontier.parallelQueues": json.RawMessage(`4`), "fetch.ignoreCookies": json.RawMessage(`true`)}
	ts2 := map[string]json.RawMessage{"fetch.ignoreCookies": json.RawMessage(`true`), "frontier.parallelQueues": json.RawMessage(` 4 `)}
	for _, x := range []struct {
		prefix string
		target map[string]json.RawMessage
	}{{"http://(uk,co,one,", ts}, {"http://(uk,co,two,", ts2}} {
		if _, err := a.Attach(ctx, x.prefix, []string{"gone"}, x.target); err != nil {
			t.Fatal(err)
		}
	}
	if a.For("http://(uk,co,one,)/") != a.For("http://(uk,co,two,)/") {
		t.Error("identical targetSheets built two effective profiles")
	}
	if err := rdb.HSet(ctx, keyPrefix+assocKey, "http://(uk,co,bad,", "{not json").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Incr(ctx, keyPrefix+versionKey).Err(); err != nil {
		t.Fatal(err)
	}
	// A worker whose profile lacks "gone" still loads the rest.
	b, logB := withRedis(t, rdb, profile.Default(), clk)
	if !strings.Contains(logB.String(), "stored sheet association skipped") {
		t.Errorf("bad entry not logged: %s", logB)
	}
	e := b.For("http://(uk,co,one,)/")
	if !slices.Equal(e.Sheets, []string{TargetSheetName}) || e.Profile.Frontier.ParallelQueues != 4 {
		t.Fatalf("sheets %q", e.Sheets)
	}
	ex := b.Explain("http://(uk,co,one,)/")
	if len(ex) != 2 || ex[0].Sheet != "gone" || ex[0].Skipped != "no sheet of that name" {
		t.Fatalf("explain %+v", ex)
	}
}

// Nothing is written when nothing survives filtering, and a Redis that
// cannot be reached is an error, not a panic.
func TestAttachEdgeCases(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	s, _ := withRedis(t, rdb, decode(t, ukwaProfile), &clock{})
	if d, err := s.AttachLaunch(ctx, messages.Launch{URL: "http://example.org/"}); err != nil || !d.Empty() {
		t.Fatalf("no sheets: %+v %v", d, err)
	}
	d, err := s.AttachLaunch(ctx, messages.Launch{URL: "http://example.org/", Sheets: []string{"nope"}})
	if err != nil || !slices.Equal(d.Sheets, []string{"nope"}) {
		t.Fatalf("unknown only: %+v %v", d, err)
	}
	if n, _ := rdb.Exists(ctx, keyPrefix+versionKey).Result(); n != 0 {
		t.Fatal("a launch with nothing to attach bumped the version")
	}
	if _, err := s.AttachLaunch(ctx, messages.Launch{URL: "mailto:x@example.org", Sheets: []string{"blockAll"}}); err == nil {
		t.Fatal("want error for a launch URL without an authority")
	}
	if _, err := s.Attach(ctx, "mailto:x", []string{"blockAll"}, nil); err == nil {
		t.Fatal("want error for a bad prefix")
	}
	if err := s.Detach(ctx, ""); err == nil {
		t.Fatal("want error for an empty prefix")
	}

	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { dead.Close() })
	if _, err := New(ctx, decode(t, ukwaProfile), Options{Redis: dead, KeyPrefix: keyPrefix}); err == nil ||
		!strings.Contains(err.Error(), "sheets version") {
		t.Fatalf("New on a dead Redis: %v", err)
	}
	s.opts.Redis = dead
	if _, err := s.Attach(ctx, "http://(uk,", []string{"blockAll"}, nil); err == nil || !strings.Contains(err.Error(), "read sheets of http://(uk,") {
		t.Fatalf("attach on a dead Redis: %v", err)
	}
}

// Lookups run while associations change (run with -race).
func TestConcurrentLookupsAndChanges(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	clk := &clock{}
	s, _ := withRedis(t, rdb, decode(t, ukwaProfile), clk)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				e := s.For("http://(uk,co,example,)/x")
				if len(e.Sheets) > 0 && e.Profile.Frontier.ParallelQueues < 2 {
					t.Error("half-built effective profile")
					return
				}
			}
		}()
	}
	for i := range 20 {
		name := []string{"parallel-queues-2", "parallel-queues-4", "parallel-queues-8"}[i%3]
		if _, err := s.Attach(ctx, "http://(uk,co,example,", []string{name}, nil); err != nil {
			t.Error(err)
			break
		}
		clk.Advance(time.Second)
		if err := s.Refresh(ctx); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	if got := s.For("http://(uk,co,example,)/x").Sheets; len(got) != 1 {
		t.Fatalf("final sheets %q", got)
	}
}

// A seed's redirect target takes the seed's sheets only where no launch
// attached any: an operator's own sheets for the target stay, and a
// target with none gets the seed's.
func TestAttachLaunchIfUnset(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	s, _ := withRedis(t, rdb, decode(t, ukwaProfile), &clock{})
	if _, err := s.AttachLaunch(ctx, messages.Launch{URL: "https://www.b.example/", Sheets: []string{"noLimit"}}); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"https://www.b.example/", "https://www.c.example/"} {
		if _, err := s.AttachLaunchIfUnset(ctx, messages.Launch{URL: u, Sheets: []string{"blockAll"}}); err != nil {
			t.Fatal(err)
		}
	}
	if p := s.ForURL("https://www.b.example/x").Profile; p.Preselector.BlockAll || p.Quotas.ServerMaxSuccessKb != -1 {
		t.Errorf("the operator's noLimit was replaced: blockAll %v, serverMaxSuccessKb %d", p.Preselector.BlockAll, p.Quotas.ServerMaxSuccessKb)
	}
	if p := s.ForURL("https://www.c.example/x").Profile; !p.Preselector.BlockAll {
		t.Error("a target without sheets did not get the seed's")
	}
}
