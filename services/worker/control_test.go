package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/control"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// hitLog records when the slow site served what, by host.
type hitLog struct {
	mu    sync.Mutex
	hits  map[string][]time.Time // host -> request end times
	paths map[string]bool        // host+path served
	open  int                    // requests being served
}

func (h *hitLog) after(host string, t time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, at := range h.hits[host] {
		if at.After(t) {
			n++
		}
	}
	return n
}

// slowSite serves pages on any host, each taking delay: /0 links to /1 ...
// /400, /fan to /d/0 ... /d/39, the rest to nothing.
func slowSite(t *testing.T, delay time.Duration) (*fcSite, *hitLog) {
	h := &hitLog{hits: map[string][]time.Time{}, paths: map[string]bool{}}
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		h.mu.Lock()
		h.open++
		h.mu.Unlock()
		time.Sleep(delay) // the site is slow on purpose
		var links []string
		switch {
		case r.URL.Path == "/fan":
			for i := range 40 {
				links = append(links, fmt.Sprintf("/d/%d", i))
			}
		case r.URL.Path == "/0":
			// One hop from the seed, so max hops never end the supply.
			for i := range 400 {
				links = append(links, fmt.Sprintf("/%d", i+1))
			}
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, fcPage("", links...))
		h.mu.Lock()
		h.open--
		h.hits[host] = append(h.hits[host], time.Now())
		h.paths[host+r.URL.Path] = true
		h.mu.Unlock()
	})
	return site, h
}

// Three workers (three worker.New on one Redis and broker) crawl a slow
// site; commands on fc.control reach all three: a paused target stops
// being fetched within 2 s and comes back on resume, an exclusion added
// through the topic stops a site within 2 s, a delete ends queued URIs
// with -6000 and their events, and a terminate ends every Run with the
// fetches in flight finished.
func TestControlTopicThreeWorkers(t *testing.T) {
	e := setup(t)
	site, hits := slowSite(t, 150*time.Millisecond)
	hosts := newFCHosts("a.test", "b.test", "c.test", "d.test")
	p := fcProfile()
	p.Fetch.AllowPrivateAddresses = true
	type run struct {
		w    *Worker
		dir  string
		done chan error
	}
	var runs []run
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range 3 {
		dir := t.TempDir()
		w, err := New(Config{Crawl: "fc", Stream: "npld", ID: fmt.Sprintf("w%d", i+1), Threads: 2, DataDir: dir, Lease: time.Minute},
			Deps{Profile: p, Kafka: e.kc, Redis: e.rdb, Resolver: hosts,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: prometheus.NewRegistry(), Version: "t"})
		if err != nil {
			t.Fatal(err)
		}
		w.idleMin, w.idleMax = 20*time.Millisecond, 50*time.Millisecond
		r := run{w: w, dir: dir, done: make(chan error, 1)}
		go func() { r.done <- w.Run(ctx) }()
		runs = append(runs, r)
	}
	launch := func(u, source string) {
		b, _ := json.Marshal(messages.Launch{URL: u, IsSeed: true, ParentURL: u,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: source}}})
		if err := e.cl.ProduceSync(ctx, &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte("k"), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	launch(site.url("a.test", "/0"), "tid:A")
	launch(site.url("b.test", "/0"), "tid:B")
	launch(site.url("c.test", "/0"), "tid:C")

	poll := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !ok() {
			if time.Now().After(deadline) {
				evs := crawledEvents(t, e)
				for _, ev := range evs[max(0, len(evs)-15):] {
					t.Logf("event %s %d %s", ev.Timestamp, ev.StatusCode, ev.URL)
				}
				t.Fatalf("%s: not before the deadline", what)
			}
			time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
		}
	}
	start := time.Now()
	poll("all sites fetched", 30*time.Second, func() bool {
		return hits.after("a.test", start) > 2 && hits.after("b.test", start) > 2 && hits.after("c.test", start) > 2
	})
	send := func(c messages.Control) string {
		t.Helper()
		c.By = "control-test"
		id, err := control.Send(ctx, e.cl, "fc", c)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	acked := func(id string) control.Acknowledgement {
		t.Helper()
		var a control.Acknowledgement
		poll("ack of "+id, 10*time.Second, func() bool {
			var err error
			a, err = control.Ack(ctx, e.rdb, "fc", id)
			if err != nil && !errors.Is(err, control.ErrNoAck) {
				t.Fatal(err)
			}
			return err == nil
		})
		if a.Error != "" || a.By != "control-test" {
			t.Fatalf("ack %s: %+v", id, a)
		}
		return a
	}

	// Pause target A: no fetch of a.test from 2 s after the command, while
	// b.test goes on.
	t0 := time.Now()
	acked(send(messages.Control{Command: messages.CommandPause, Scope: messages.ScopeTarget, Source: "tid:A"}))
	poll("b.test crawled on after the pause", 20*time.Second, func() bool { return hits.after("b.test", t0.Add(2*time.Second)) >= 5 })
	if n := hits.after("a.test", t0.Add(2*time.Second)); n > 0 {
		t.Errorf("paused target fetched %d times more than 2 s after the pause", n)
	}
	t1 := time.Now()
	acked(send(messages.Control{Command: messages.CommandResume, Scope: messages.ScopeTarget, Source: "tid:A"}))
	poll("a.test crawled again after the resume", 10*time.Second, func() bool { return hits.after("a.test", t1) > 0 })

	// Exclude c.test through the topic.
	t2 := time.Now()
	acked(send(messages.Control{Command: messages.CommandExclusions, URLs: []string{site.url("c.test", "/")}}))
	poll("b.test crawled on after the exclusion", 20*time.Second, func() bool { return hits.after("b.test", t2.Add(2*time.Second)) >= 5 })
	if n := hits.after("c.test", t2.Add(2*time.Second)); n > 0 {
		t.Errorf("excluded site fetched %d times more than 2 s after the exclusion", n)
	}

	// A fan of 40 URIs on d.test, then delete those queued under /d/.
	launch(site.url("d.test", "/fan"), "tid:D")
	poll("d.test fan fetched", 20*time.Second, func() bool { return hits.after("d.test", start) >= 2 })
	del := acked(send(messages.Control{Command: messages.CommandDelete, URLs: []string{site.url("d.test", "/d/")}}))
	var deleted int
	if _, err := fmt.Sscanf(strings.SplitN(del.Result, ": ", 2)[0], "deleted %d queued URIs", &deleted); err != nil || deleted == 0 {
		t.Fatalf("delete acknowledged %q", del.Result)
	}

	// Terminate: every Run returns, with what was in flight finished.
	acked(send(messages.Control{Command: messages.CommandTerminate}))
	for i, r := range runs {
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("worker %d: %v", i+1, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("worker %d still running 30 s after terminate", i+1)
		}
		if got := r.w.LimitReached(); got != LimitTerminated {
			t.Errorf("worker %d LimitReached = %q", i+1, got)
		}
	}
	hits.mu.Lock()
	open := hits.open
	hits.mu.Unlock()
	st, err := runs[0].w.Frontier().Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if open != 0 || st.InFlight != 0 {
		t.Errorf("after terminate: %d requests open, %d URIs in flight", open, st.InFlight)
	}

	// Every deleted URI has its -6000 event and crawl.log line; every page
	// the site served has its event (in-flight fetches finished).
	events := crawledEvents(t, e)
	var gone int
	got := map[string]bool{}
	for _, ev := range events {
		got[ev.URL] = true
		if ev.StatusCode == -6000 {
			gone++
			if !strings.Contains(ev.URL, "d.test") || !strings.Contains(ev.URL, "/d/") {
				t.Errorf("deleted %s", ev.URL)
			}
		}
	}
	if gone != deleted {
		t.Errorf("%d events with -6000, %d URIs deleted", gone, deleted)
	}
	var lines, crawling int
	var perWorker []int
	for _, r := range runs {
		var mine int
		matches, _ := filepath.Glob(filepath.Join(r.dir, "logs", "*", "crawl.log*"))
		more, _ := filepath.Glob(filepath.Join(r.dir, "logs", "*", "*", "crawl.log*"))
		for _, f := range append(matches, more...) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range strings.Split(string(b), "\n") {
				if f := strings.Fields(l); len(f) > 1 && f[1] == "-6000" {
					lines++
				} else if len(f) > 1 && f[1] == "200" {
					mine++
				}
			}
		}
		perWorker = append(perWorker, mine)
		if mine > 0 {
			crawling++
		}
	}
	// The frontier shares the ready hosts among the workers asking
	// (fair claims, issue 36), so each of the three crawls: the commands
	// acted across all of them.
	t.Logf("pages crawled by worker: %v", perWorker)
	if crawling < 3 {
		t.Errorf("only %d of 3 workers crawled a page (%v)", crawling, perWorker)
	}
	if lines != deleted {
		t.Errorf("%d crawl.log lines with -6000, %d URIs deleted", lines, deleted)
	}
	hits.mu.Lock()
	for hp := range hits.paths {
		host, path, _ := strings.Cut(hp, "/")
		if u := site.url(host, "/"+path); !got[u] {
			t.Errorf("%s served but no crawled event", u)
		}
	}
	hits.mu.Unlock()
}

// A worker started after a terminate of its crawl claims nothing (it stays
// up, as a restarted pod would) until a resume lifts the terminate; then
// it crawls.
func TestTerminatedCrawlHoldsNewWorkers(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	f, err := frontier.New(e.rdb, "fc-npld", frontier.OptionsFrom(fcProfile()))
	if err != nil {
		t.Fatal(err)
	}
	if err := control.MarkTerminated(ctx, e.rdb, f.Prefix(), "t-before"); err != nil {
		t.Fatal(err)
	}
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) { fcHTML(w, fcPage("")) })
	seed := site.url("site.test", "/")
	p := fcProfile()
	p.Fetch.AllowPrivateAddresses = true
	w, err := New(Config{Crawl: "fc", Stream: "npld", ID: "w1", Threads: 2, DataDir: t.TempDir(), Lease: time.Minute},
		Deps{Profile: p, Kafka: e.kc, Redis: e.rdb, Resolver: newFCHosts("site.test"),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: prometheus.NewRegistry(), Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	w.idleMin, w.idleMax = 20*time.Millisecond, 20*time.Millisecond
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	produceSeeds(t, e, []string{seed})
	waitFor(t, "the seed queued while the crawl is terminated", func() bool {
		st, err := w.Frontier().Stats(ctx)
		return err == nil && st.Queued >= 1
	})
	if w.LimitReached() != LimitTerminated || site.hitCount("/") != 0 {
		t.Fatalf("limit %q, %d fetches of the seed; want %q and none", w.LimitReached(), site.hitCount("/"), LimitTerminated)
	}
	if err := control.ClearTerminated(ctx, e.rdb, f.Prefix()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the seed fetched after the resume", func() bool { return site.hitCount("/") > 0 })
	if w.LimitReached() != "" {
		t.Errorf("limit %q after the resume", w.LimitReached())
	}
}

// waitFor polls cond every 20 ms for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
}

// Two targets share one host: pausing the one whose URIs are at the head
// of the host's queue does not stop the other's being fetched, and a
// terminate of the paused target ends its queued URIs -6000, annotated
// terminate.
func TestControlPausedTargetSharesHost(t *testing.T) {
	e := setup(t)
	type hit struct {
		path string
		at   time.Time
	}
	var mu sync.Mutex
	var served []hit
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		var links []string
		switch r.URL.Path {
		case "/0": // target A: a long run of links at the head of the queue
			for i := range 300 {
				links = append(links, fmt.Sprintf("/a/%d", i))
			}
		case "/fan": // target B: enough to last past the 2 s the pause may take to reach the claim
			for i := range 120 {
				links = append(links, fmt.Sprintf("/b/%d", i))
			}
		}
		time.Sleep(50 * time.Millisecond) // slow enough that A's run stays queued
		fcHTML(w, fcPage("", links...))
		mu.Lock()
		served = append(served, hit{r.URL.Path, time.Now()})
		mu.Unlock()
	})
	count := func(prefix string, after time.Time) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, h := range served {
			if strings.HasPrefix(h.path, prefix) && h.at.After(after) {
				n++
			}
		}
		return n
	}
	p := fcProfile()
	p.Fetch.AllowPrivateAddresses = true
	ctx, cancel := context.WithCancel(context.Background())
	w, err := New(Config{Crawl: "fc", Stream: "npld", ID: "w1", Threads: 1, DataDir: t.TempDir(), Lease: time.Minute},
		Deps{Profile: p, Kafka: e.kc, Redis: e.rdb, Resolver: newFCHosts("h.test"),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: prometheus.NewRegistry(), Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	w.idleMin, w.idleMax = 20*time.Millisecond, 50*time.Millisecond
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	launch := func(u, source string) {
		b, _ := json.Marshal(messages.Launch{URL: u, IsSeed: true, ParentURL: u,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: source}}})
		if err := e.cl.ProduceSync(ctx, &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte("k"), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	launch(site.url("h.test", "/0"), "tid:A")
	waitFor(t, "target A's run queued", func() bool { return count("/a/", start) >= 2 })
	launch(site.url("h.test", "/fan"), "tid:B")
	waitFor(t, "target B's fan fetched", func() bool { return count("/fan", start) == 1 })
	send := func(c messages.Control) control.Acknowledgement {
		t.Helper()
		c.By = "control-test"
		id, err := control.Send(ctx, e.cl, "fc", c)
		if err != nil {
			t.Fatal(err)
		}
		var a control.Acknowledgement
		waitFor(t, "ack of "+id, func() bool {
			a, err = control.Ack(ctx, e.rdb, "fc", id)
			return err == nil
		})
		if a.Error != "" {
			t.Fatalf("ack %s: %+v", id, a)
		}
		return a
	}
	t0 := time.Now()
	send(messages.Control{Command: messages.CommandPause, Scope: messages.ScopeTarget, Source: "tid:A"})
	waitFor(t, "target B fetched on its host with A paused", func() bool { return count("/b/", t0.Add(2*time.Second)) >= 5 })
	if n := count("/a/", t0.Add(2*time.Second)); n > 0 {
		t.Errorf("paused target A fetched %d times more than 2 s after the pause", n)
	}
	a := send(messages.Control{Command: messages.CommandTerminate, Scope: messages.ScopeTarget, Source: "tid:A"})
	if !strings.Contains(a.Result, "terminated target tid:A") {
		t.Fatalf("terminate acknowledged %q", a.Result)
	}
	var deleted int
	if _, err := fmt.Sscanf(strings.SplitN(a.Result, ", ", 2)[1], "%d queued URIs deleted", &deleted); err != nil || deleted == 0 {
		t.Fatalf("terminate acknowledged %q (%v)", a.Result, err)
	}
	var gone int
	waitFor(t, "the -6000 events of target A", func() bool {
		gone = 0
		for _, ev := range crawledEvents(t, e) {
			if ev.StatusCode == frontier.StatusDeleted {
				if !strings.Contains(ev.URL, "/a/") || !strings.Contains(ev.Annotations, control.AnnotationTerminate) {
					t.Fatalf("deleted %s (annotations %q)", ev.URL, ev.Annotations)
				}
				gone++
			}
		}
		return gone == deleted
	})
}
