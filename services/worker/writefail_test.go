package worker

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// Issue 39: with its WARC directory unwritable a worker fetched one page
// about 175 times a second. Here the WARC directory is replaced by a
// regular file while a worker crawls two hosts (one by address, whose
// first request is robots.txt; one by name, whose first write is its dns:
// record): chmod would not do, since tests may run as root. Then:
//   - each host's requests are at least its politeness delay apart;
//   - the site gets at most writeFailureThreshold + threads - 1 requests
//     while the directory is gone (the failures that stop claims, plus
//     the fetches other threads had begun), and none at all once claims
//     have stopped, since the test writes fail too and no probe is sent;
//   - /readyz and trawler_worker_writes_failing say so, the log says so
//     once;
//   - once the directory is back, a probe finds writes working, the
//     worker claims again and every URI is archived exactly once, without
//     a retry charged for the failed writes.
func TestWriteFailureDoesNotHammer(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	kc, cl := embeddedtest.Kafka(t, 1)
	arr := &arrivals{at: map[string][]arrival{}}
	var requests atomic.Int64
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		requests.Add(1)
		arr.add(host, r.URL.Path, 0)
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			fcHTML(w, fcPage("<title>"+host+"</title>", "/p1", "/p2", "/p3", "/p4"))
		default: // each page its own, so none is a revisit of another
			fcHTML(w, fcPage("<title>"+host+r.URL.Path+"</title>"))
		}
	})
	const (
		threads  = 4
		minDelay = 200 * time.Millisecond
		// bound is the most requests the site may get while writes fail.
		bound = writeFailureThreshold + threads - 1
	)
	p := profile.Default()
	p.Fetch.AllowPrivateAddresses = true
	p.Politeness = profile.Politeness{MinDelayMs: minDelay.Milliseconds(), MaxDelayMs: minDelay.Milliseconds(),
		BackOffBaseMs: 300, BackOffMaxMs: 1200}
	dir := t.TempDir()
	log, logs := testlog.New(slog.LevelInfo)
	reg := prometheus.NewRegistry()
	w, err := New(Config{Crawl: "fc", Stream: "npld", ID: "w1", Threads: threads, DataDir: dir, Lease: time.Minute},
		Deps{Profile: p, Kafka: kc, Redis: rdb, Resolver: newFCHosts("named.test"), Logger: log,
			Registerer: reg, Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	// The admin listener as the worker role wires it: /readyz, /metrics.
	adm, err := admin.Listen("127.0.0.1:0", reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adm.Close() })
	adm.AddReadyCheck("writes", w.WritesReady)
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + adm.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	if code, body := get("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz before the crawl: %d %s", code, body)
	}
	w.writes.every, w.writes.maxGap = 100*time.Millisecond, 400*time.Millisecond
	var testWrites atomic.Int64
	w.writes.write = func(d string) error { testWrites.Add(1); return writeProbeFile(d) }

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker run: %v", err)
			}
		}
	}
	t.Cleanup(stop)

	// The worker has opened its outputs (crawl.log last) and written
	// nothing yet: WARC files are created on first write.
	waitFor(t, "crawl.log opened", func() bool {
		_, err := os.Stat(filepath.Join(w.cfg.logDirOf(w.cfg.ID), crawllog.DefaultName))
		return err == nil
	})
	warcs := w.cfg.WARCDir()
	if err := os.Rename(warcs, warcs+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(warcs, []byte("not a directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	seeds := []string{site.url("127.0.0.1", "/"), site.url("named.test", "/")}
	for _, s := range seeds {
		b, _ := json.Marshal(messages.Launch{URL: s, IsSeed: true, ParentURL: s,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:" + s}}})
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte("k"), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	waitFor(t, "claims stopped for failing writes", func() bool { return w.WritesReady(context.Background()) != nil })
	if code, body := get("/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "writes failing") ||
		!strings.Contains(body, "not a directory") {
		t.Errorf("/readyz while writes fail: %d %q, want 503 with the error", code, body)
	}
	if _, body := get("/metrics"); !strings.Contains(body, "\ntrawler_worker_writes_failing 1\n") {
		t.Errorf("/metrics while writes fail lacks trawler_worker_writes_failing 1")
	}
	if got := testutil.ToFloat64(w.metrics.writes.failures.WithLabelValues(writeWARC)); got < writeFailureThreshold {
		t.Errorf("trawler_worker_write_failures_total{what=\"warc\"} = %v, want >= %d", got, writeFailureThreshold)
	}
	// Ten test writes (a second) let the fetches begun before the stop
	// end; in ten more nothing may reach the site.
	n := testWrites.Load()
	waitFor(t, "ten test writes", func() bool { return testWrites.Load() >= n+10 })
	held := requests.Load()
	waitFor(t, "ten more test writes", func() bool { return testWrites.Load() >= n+20 })
	during := requests.Load()
	t.Logf("while the WARC directory was a file: %d requests (bound %d), %d test writes", during, bound, testWrites.Load())
	if during > bound {
		t.Errorf("%d requests while writes failed, want at most %d", during, bound)
	}
	if during != held {
		t.Errorf("%d requests after claims stopped, want none", during-held)
	}

	if err := os.Remove(warcs); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(warcs+".away", warcs); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, w, 10, "not crawled after the WARC directory came back", logs.String())
	if code, body := get("/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after the directory came back: %d %q", code, body)
	}
	if _, body := get("/metrics"); !strings.Contains(body, "\ntrawler_worker_writes_failing 0\n") {
		t.Errorf("/metrics after recovery lacks trawler_worker_writes_failing 0")
	}
	stop()

	for _, line := range []string{"writes failing: claiming no new URIs", "writes succeed again"} {
		if c := strings.Count(logs.String(), line); c != 1 {
			t.Errorf("%d %q lines, want 1:\n%s", c, line, logs)
		}
	}
	for _, host := range []string{"127.0.0.1", "named.test"} {
		as := arr.of(host)
		for i := 1; i < len(as); i++ {
			if gap := as[i].at.Sub(as[i-1].at); gap < minDelay-2*time.Millisecond {
				t.Errorf("%s: %s came %v after %s, within the politeness delay %v", host, as[i].path, gap, as[i-1].path, minDelay)
			}
		}
	}
	events := map[string][]messages.Crawled{}
	for _, r := range readTopic(t, &env{kc: kc, cl: cl}, "fc.crawled") {
		ev, err := messages.DecodeCrawled(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		events[ev.URL] = append(events[ev.URL], ev)
	}
	want := map[string]int{"dns:named.test": 1}
	for _, s := range seeds {
		want[strings.TrimSuffix(s, "/")+"/robots.txt"] = http.StatusNotFound
		for _, path := range []string{"", "p1", "p2", "p3", "p4"} {
			want[s+path] = http.StatusOK
		}
	}
	for u, status := range want {
		ev := fcOne(t, events, u)
		if ev.StatusCode != status || ev.WarcFilename == nil || fcRetried(ev) {
			t.Errorf("%s: status %d, annotations %q, WARC %v; want %d, archived, no retry charged",
				u, ev.StatusCode, ev.Annotations, ev.WarcFilename, status)
			continue
		}
		if _, typ, _ := fcRecord(t, dir, ev); typ != gowarc.Response {
			t.Errorf("%s: WARC record of type %v, want a response", u, typ)
		}
	}
	if len(events) != len(want) {
		t.Errorf("events for %d URLs, want %d: %v", len(events), len(want), fcSummary(events))
	}
}
