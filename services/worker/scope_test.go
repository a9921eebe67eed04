package worker

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// An operator answering a complaint appends a site to the watched
// excluded-SURTs file while the crawl runs: the site's queued URIs stop
// being fetched at once (-5000 at fetch time), while other sites go on.
func TestExclusionFileReloadStopsFetching(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	kc, cl := embeddedtest.Kafka(t, 1)
	site, err := testweb.Generate(testweb.Config{Seed: 5, Hosts: 2, PagesPerHost: 40})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	seeds := srv.Seeds()
	blocked, other := seeds[0], seeds[1]

	excl := filepath.Join(t.TempDir(), "exclude.txt")
	if err := os.WriteFile(excl, []byte("# sites withdrawn on request\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := profile.Default()
	p.Politeness = profile.Politeness{MinDelayMs: 150, MaxDelayMs: 150}
	p.Fetch.AllowPrivateAddresses = true
	p.Scope.ExcludedSurtsFile = excl
	w, err := New(Config{Crawl: "fc", Stream: "npld", ID: "w1", Threads: 4, DataDir: t.TempDir(), Lease: time.Minute},
		Deps{Profile: p, Kafka: kc, Redis: rdb, Resolver: srv.Resolver(),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: prometheus.NewRegistry(), Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range seeds {
		b, _ := json.Marshal(messages.Launch{URL: s, IsSeed: true, ParentURL: s,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:" + s}}})
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte("k"), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	e := &env{kc: kc, rdb: rdb, srv: srv, cl: cl}

	prefix := surt.ImpliedPrefix(blocked)
	onHost := func(ev messages.Crawled, seed string) bool {
		return strings.HasPrefix(surt.Heritrix(ev.URL), surt.ImpliedPrefix(seed))
	}
	// Exclude the site once a few of its pages are in.
	waitEvents(t, e, func(evs []messages.Crawled) bool {
		return count(evs, func(ev messages.Crawled) bool { return onHost(ev, blocked) }) >= 3
	})
	f, err := os.OpenFile(excl, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("+" + prefix + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// Within seconds the site's URIs finish with -5000 instead of being
	// fetched; after the first one, none of its URIs is fetched again.
	waitEvents(t, e, func(evs []messages.Crawled) bool {
		return count(evs, func(ev messages.Crawled) bool { return onHost(ev, blocked) && ev.StatusCode == -5000 }) >= 1
	})
	waitDrained(t, w, 0, "not drained before the deadline", "")
	evs := crawledEvents(t, e)
	seenBlock := false
	for _, ev := range evs {
		if !onHost(ev, blocked) {
			continue
		}
		if ev.StatusCode == -5000 {
			seenBlock = true
			if ev.WarcFilename != nil {
				t.Errorf("excluded %s has a capture", ev.URL)
			}
		} else if seenBlock && ev.StatusCode > 0 {
			t.Errorf("%s fetched (status %d) after the exclusion took effect", ev.URL, ev.StatusCode)
		}
	}
	if n := count(evs, func(ev messages.Crawled) bool { return onHost(ev, other) && ev.StatusCode == 200 }); n < 10 {
		t.Errorf("only %d pages of the other site crawled", n)
	}
}

func count(evs []messages.Crawled, f func(messages.Crawled) bool) int {
	n := 0
	for _, ev := range evs {
		if f(ev) {
			n++
		}
	}
	return n
}

func crawledEvents(t *testing.T, e *env) []messages.Crawled {
	t.Helper()
	var out []messages.Crawled
	for _, r := range readTopic(t, e, "fc.crawled") {
		ev, err := messages.DecodeCrawled(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func waitEvents(t *testing.T, e *env, ok func([]messages.Crawled) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok(crawledEvents(t, e)) {
		if time.Now().After(deadline) {
			t.Fatal("condition on crawled events not met before the deadline")
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}
