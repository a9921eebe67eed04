package worker

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// produceSeeds launches seeds on the crawl's tocrawl topic.
func produceSeeds(t *testing.T, e *env, seeds []string) {
	t.Helper()
	for _, s := range seeds {
		l := messages.Launch{URL: s, IsSeed: true, ParentURL: s,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:" + s}}}
		b, _ := json.Marshal(l)
		if err := e.cl.ProduceSync(context.Background(), &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte("k"), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// startWorker runs a worker of crawl "fc" with profile p until the test
// ends; its dispatcher looks at the limits every 20 ms when idle.
func startWorker(t *testing.T, e *env, p profile.Profile, id string) *Worker {
	t.Helper()
	p.Fetch.AllowPrivateAddresses = true
	w, err := New(Config{Crawl: "fc", Stream: "npld", ID: id, Threads: 2, DataDir: t.TempDir(), Lease: time.Minute},
		Deps{Profile: p, Kafka: e.kc, Redis: e.rdb, Resolver: e.srv.Resolver(),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: prometheus.NewRegistry(), Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	w.idleMin, w.idleMax = 20*time.Millisecond, 20*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker %s: %v", id, err)
		}
	})
	return w
}

// maxTimeSeconds counts from the crawl's start in Redis: two workers (two
// worker.New instances on one Redis and broker, in one process), the
// second started a second later, stop claiming at the same crawl time,
// and the second does not restart the clock.
func TestMaxTimeCountsFromCrawlStart(t *testing.T) {
	e := setup(t)
	p := fcProfile()
	p.Limits.MaxTimeSeconds = 2
	t0 := time.Now()
	w1 := startWorker(t, e, p, "w1")
	time.Sleep(time.Second) // the second worker starts late on purpose
	w2 := startWorker(t, e, p, "w2")

	stopped := map[*Worker]time.Time{}
	deadline := time.Now().Add(10 * time.Second)
	for len(stopped) < 2 {
		for _, w := range []*Worker{w1, w2} {
			if _, ok := stopped[w]; !ok && w.LimitReached() != "" {
				stopped[w] = time.Now()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("workers did not both reach the time limit: %d did", len(stopped))
		}
		time.Sleep(10 * time.Millisecond) // polling a condition with a deadline
	}
	if w1.LimitReached() != frontier.LimitTime || w2.LimitReached() != frontier.LimitTime {
		t.Fatalf("limits %q, %q; want %s", w1.LimitReached(), w2.LimitReached(), frontier.LimitTime)
	}
	if !w1.started.Equal(w2.started) || w1.started.Before(t0.Add(-time.Second)) || w1.started.After(t0.Add(time.Second)) {
		t.Fatalf("crawl starts %v and %v; want one start, near %v", w1.started, w2.started, t0)
	}
	// A per-worker clock would stop the second worker a second later,
	// three seconds after the crawl started; the slack below that is for a
	// loaded machine.
	for w, at := range stopped {
		if el := at.Sub(t0); el < 2*time.Second || el > 2900*time.Millisecond {
			t.Errorf("worker %s stopped %v after the crawl started, want about 2s", w.cfg.ID, el)
		}
	}
}

// The crawl clock survives a restart; a new job run (RestartCrawlClock)
// starts it again.
func TestCrawlClockRestart(t *testing.T) {
	e := setup(t)
	w := newWorker(t, e, t.TempDir())
	ctx := context.Background()
	first, err := w.Frontier().CrawlStart(ctx)
	if err != nil {
		t.Fatal(err)
	}
	again, err := w.Frontier().CrawlStart(ctx)
	if err != nil || !again.Equal(first) {
		t.Fatalf("second CrawlStart = %v, %v; want the first, %v", again, err, first)
	}
	if err := w.Frontier().RestartCrawlClock(ctx); err != nil {
		t.Fatal(err)
	}
	restarted, err := w.Frontier().CrawlStart(ctx)
	if err != nil || restarted.Before(first) {
		t.Fatalf("after a restart CrawlStart = %v, %v; want no earlier than %v", restarted, err, first)
	}
}

// maxNovelUrls and maxNovelBytes stop claiming once the crawl's novel
// totals (in Redis, over all workers) reach them; on a first crawl every
// capture is novel.
func TestNovelLimits(t *testing.T) {
	cases := []struct {
		name   string
		limits profile.Limits
		want   string
	}{
		{"maxNovelUrls", profile.Limits{MaxNovelUrls: 3}, frontier.LimitNovelURIs},
		{"maxNovelBytes", profile.Limits{MaxNovelBytes: 1}, frontier.LimitNovelSize},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			p := fcProfile()
			p.Limits = tc.limits
			w := startWorker(t, e, p, "w1")
			produceSeeds(t, e, e.srv.Seeds())
			deadline := time.Now().Add(30 * time.Second)
			for w.LimitReached() == "" {
				if time.Now().After(deadline) {
					t.Fatal("no limit reached")
				}
				time.Sleep(10 * time.Millisecond) // polling a condition with a deadline
			}
			if got := w.LimitReached(); got != tc.want {
				t.Fatalf("limit %q, want %q", got, tc.want)
			}
			tot, err := w.Totals(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if tot.Novel < 1 || tot.NovelBytes < 1 || (tc.limits.MaxNovelUrls > 0 && tot.Novel > tc.limits.MaxNovelUrls+int64(2*w.cfg.Threads)) {
				t.Fatalf("novel totals %d URIs, %d bytes under %+v", tot.Novel, tot.NovelBytes, tc.limits)
			}
		})
	}
}
