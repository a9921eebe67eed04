package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// runUntilDrained runs a worker with profile p until the frontier has
// nothing queued or in flight and at least min URIs finished, then stops
// it, and returns the crawled events by URL.
func runUntilDrained(t *testing.T, e *env, p profile.Profile, seeds []string, minURIs int64) map[string][]messages.Crawled {
	t.Helper()
	return e.crawl(t, crawlRun{p: p, resolver: e.srv.Resolver(), seeds: seeds, minURIs: minURIs})
}

// crawlRun is one worker run of a test crawl.
type crawlRun struct {
	p        profile.Profile
	resolver fetch.Resolver
	seeds    []string
	minURIs  int64
	dir      string                 // data directory; "" = a new temporary one
	clamd    string                 // clamd address; "" = none
	guarded  bool                   // keep the address guard on (by default tests fetch loopback)
	idle     time.Duration          // the dispatcher's idle backoff; 0 = the default
	launch   func(*messages.Launch) // changes each seed's launch message; nil = none
	log      *slog.Logger           // the worker's logger; nil = discard
	after    func(*Worker)          // looks at the worker once the frontier drained; nil = none
}

// crawl runs a worker as r says until its frontier drains, and returns
// every crawled event on the topic by URL.
func (e *env) crawl(t *testing.T, r crawlRun) map[string][]messages.Crawled {
	t.Helper()
	p := r.p
	p.Fetch.AllowPrivateAddresses = !r.guarded
	if r.dir == "" {
		r.dir = t.TempDir()
	}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	w, err := New(Config{Crawl: "fc", Stream: "npld", ID: "w1", Threads: 4, DataDir: r.dir, Lease: time.Minute, ClamdAddr: r.clamd},
		Deps{Profile: p, Kafka: e.kc, Redis: e.rdb, Resolver: r.resolver,
			Logger: r.log, Registerer: prometheus.NewRegistry(), Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if r.idle > 0 {
		w.idleMin, w.idleMax = r.idle, r.idle
	}
	for _, s := range r.seeds {
		l := messages.Launch{URL: s, IsSeed: true, ParentURL: s,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:" + s}}}
		if r.launch != nil {
			r.launch(&l)
		}
		b, _ := json.Marshal(l)
		if err := e.cl.ProduceSync(context.Background(), &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte("k"), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	run := runWorker(t, w)
	waitDrained(t, w, r.minURIs, "not drained before the deadline", "")
	if err := run.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r.after != nil {
		r.after(w)
	}
	out := map[string][]messages.Crawled{}
	for _, r := range readTopic(t, e, "fc.crawled") {
		ev, err := messages.DecodeCrawled(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		out[ev.URL] = append(out[ev.URL], ev)
	}
	return out
}

// A host that refuses connections is retried maxRetries times without a
// crawled event, then finishes once with Heritrix's "Nt" annotation: -61
// when its robots.txt could not be fetched (the robots prerequisite fails
// first), -8 when robots are ignored and the fetch itself kept failing.
func TestRetriesThenRetriesExhausted(t *testing.T) {
	for _, tc := range []struct {
		policy string
		want   int
	}{{profile.RobotsObey, -61}, {profile.RobotsIgnore, -8}} {
		t.Run(tc.policy, func(t *testing.T) {
			e := setup(t)
			u, _ := url.Parse(e.srv.Seeds()[0])
			dead := "http://" + u.Hostname() + ":1/" // nothing listens on port 1
			p := profile.Default()
			p.Politeness = profile.Politeness{MaxDelayMs: 5}
			p.Robots.Policy = tc.policy
			p.Frontier.MaxRetries, p.Frontier.RetryDelaySeconds = 2, 0
			events := runUntilDrained(t, e, p, []string{dead}, 1)
			evs := events[dead]
			if len(evs) != 1 {
				t.Fatalf("%d crawled events for the dead host, want exactly 1: %+v", len(evs), events)
			}
			if evs[0].StatusCode != tc.want || !strings.Contains(evs[0].Annotations, "3t") {
				t.Fatalf("event: status %d annotations %q, want %d with 3t", evs[0].StatusCode, evs[0].Annotations, tc.want)
			}
			robots := events["http://"+u.Hostname()+":1/robots.txt"]
			if tc.policy == profile.RobotsObey && (len(robots) != 1 || robots[0].StatusCode != -2 || robots[0].HopPath != "P") {
				t.Fatalf("robots.txt events %+v, want one prerequisite that failed to connect (-2)", robots)
			}
		})
	}
}

// Once a server's quota of successes is used up, its remaining URIs
// finish with -5003 and "Q:serverMaxFetchSuccesses", each exactly once.
func TestQuotaBlocksWith5003(t *testing.T) {
	e := setup(t)
	p := profile.Default()
	p.Politeness = profile.Politeness{MaxDelayMs: 5}
	p.Quotas.ServerMaxFetchSuccesses = 3
	events := runUntilDrained(t, e, p, e.srv.Seeds(), 4)
	ok, blocked := 0, 0
	for u, evs := range events {
		if strings.HasSuffix(evs[0].HopPath, "P") {
			continue // robots.txt and dns: are prerequisites, not quota-counted fetches
		}
		if len(evs) != 1 {
			t.Fatalf("%s: %d crawled events", u, len(evs))
		}
		switch ev := evs[0]; {
		case ev.StatusCode >= 200 && ev.StatusCode < 300:
			ok++
		case ev.StatusCode == -5003:
			blocked++
			if !strings.Contains(ev.Annotations, "Q:serverMaxFetchSuccesses") || ev.WarcFilename != nil {
				t.Errorf("%s: blocked event %+v lacks its annotation or has a capture", u, ev)
			}
		}
	}
	if ok != 3 || blocked == 0 {
		t.Fatalf("%d successes and %d blocked URIs, want 3 and some", ok, blocked)
	}
}

// Every URI a launch leads to, however many hops from its seed, names the
// launch in its crawled event (extra_info launchId), while the launch
// timestamp itself stops at refreshDepth; a launch without a timestamp
// names none.
func TestLaunchIDReachesDeepURIs(t *testing.T) {
	e := setup(t)
	p := profile.Default()
	p.Politeness = profile.Politeness{MaxDelayMs: 1}
	seeds := e.srv.Seeds()
	const ts = "20240117090000"
	depth := 1
	events := e.crawl(t, crawlRun{p: p, resolver: e.srv.Resolver(), seeds: seeds[:1], minURIs: 10,
		launch: func(l *messages.Launch) {
			hd := &l.ParentURLMetadata.HeritableData
			hd.LaunchTimestamp, hd.RefreshDepth = ts, &depth
			hd.Heritable = []string{"source", "heritable", "refreshDepth"}
		}})
	deepest := 0
	for u, evs := range events {
		for _, ev := range evs {
			if got := ev.LaunchID(); got != ts {
				t.Errorf("%s (hops %q): launch id %q, want %s", u, ev.HopPath, got, ts)
			}
			deepest = max(deepest, len(strings.TrimRight(ev.HopPath, "P")))
		}
	}
	if deepest < 3 {
		t.Fatalf("deepest URI %d hops from the seed: the crawl did not go deep enough to show inheritance", deepest)
	}
}

// waitDrained polls, for up to a minute, until w has finished at least
// minURIs URIs and its frontier has nothing queued or in flight; it fails
// with what (and detail, such as the logs) past the deadline.
// runningWorker is a worker started by runWorker.
type runningWorker struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when Run has returned
	err    error         // Run's error, once done is closed
}

// runWorker runs w until stop is called or the test ends, so that a
// test failing mid-crawl leaves no worker behind for the next test's
// goroutine check.
func runWorker(t *testing.T, w *Worker) *runningWorker {
	ctx, cancel := context.WithCancel(context.Background())
	r := &runningWorker{cancel: cancel, done: make(chan struct{})}
	go func() {
		r.err = w.Run(ctx)
		close(r.done)
	}()
	t.Cleanup(func() { _ = r.stop() })
	return r
}

// stop ends the worker's run and returns Run's error; it may be called
// again.
func (r *runningWorker) stop() error {
	r.cancel()
	<-r.done
	return r.err
}

// tempDiskFree says how much room the test's temporary filesystem has:
// a crawl that stalls on a full disk (WARCs refused, Redis's append-only
// file refused) looks like a stuck frontier otherwise.
func tempDiskFree() string {
	free, size, err := statfs(os.TempDir())
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%d MiB free of %d MiB in %s", free>>20, size>>20, os.TempDir())
}

func waitDrained(t *testing.T, w *Worker, minURIs int64, what, detail string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		tot, err := w.Totals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		st, err := w.Frontier().Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if tot.URIs >= minURIs && st.Queued == 0 && st.InFlight == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %+v, %d finished (%s)\n%s", what, st, tot.URIs, tempDiskFree(), detail)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
}
