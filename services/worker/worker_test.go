package worker

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/testweb"
)

type env struct {
	kc  kafka.Config
	rdb *redis.Client
	srv *testweb.Server
	cl  *kgo.Client
}

func setup(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	kc, cl := embeddedtest.Kafka(t, 1)
	site, err := testweb.Generate(testweb.Config{Seed: 3, Hosts: 1, PagesPerHost: 8})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &env{kc: kc, rdb: rdb, srv: srv, cl: cl}
}

func newWorker(t *testing.T, e *env, dir string) *Worker {
	t.Helper()
	p := profile.Default()
	p.Politeness = profile.Politeness{MaxDelayMs: 5}
	p.Fetch.AllowPrivateAddresses = true
	w, err := New(Config{Crawl: "fc", Stream: "npld", ID: "w1", Threads: 4, DataDir: dir, Lease: time.Minute},
		Deps{Profile: p, Kafka: e.kc, Redis: e.rdb, Resolver: e.srv.Resolver(),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registerer: prometheus.NewRegistry(), Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// readTopic returns every record currently in topic.
func readTopic(t *testing.T, e *env, topic string) []*kgo.Record {
	t.Helper()
	cl, err := kafka.NewClient(e.kc, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	var out []*kgo.Record
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for int64(len(out)) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: got %d of %d records", topic, len(out), want)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

func header(r *kgo.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

// Launch messages of every shape arrive: good ones are crawled, a POST is
// skipped, undecodable JSON and an unusable URL go to the DLQ with the
// reason, and nothing stops the worker.
func TestIngestBadInputAndOrderlyShutdown(t *testing.T) {
	e := setup(t)
	dir := t.TempDir()
	seed := e.srv.Seeds()[0]
	good, _ := json.Marshal(messages.Launch{URL: seed, IsSeed: true, ParentURL: seed,
		ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:" + seed}}})
	inputs := []string{
		`{"url": "` + seed + `form", "method": "POST", "isSeed": false, "hop": "S"}`,
		`not json at all`,
		`{"url": 42}`,
		`{"url": "ht!tp:// bad url", "isSeed": true}`,
		string(good),
	}
	for i, v := range inputs {
		rec := &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte("k"), Value: []byte(v)}
		if err := e.cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	w := newWorker(t, e, dir)
	run := runWorker(t, w)

	want := len(e.srv.Reachable(testweb.ReachOptions{MaxHops: 20}))
	deadline := time.Now().Add(60 * time.Second)
	for {
		tot, err := w.Totals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if tot.URIs >= int64(want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("crawled %d of %d URIs before the deadline", tot.URIs, want)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
	run.cancel()
	select {
	case <-run.done:
		if run.err != nil {
			t.Fatalf("Run after cancel: %v", run.err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("worker did not shut down")
	}

	dlq := readTopic(t, e, "fc.dlq")
	if len(dlq) != 3 {
		t.Fatalf("DLQ has %d records, want 3 (bad JSON, wrong type, bad URL)", len(dlq))
	}
	for _, r := range dlq {
		if header(r, kafka.DLQHeaderError) == "" || header(r, kafka.DLQHeaderTopic) != "fc.tocrawl.npld" || header(r, kafka.DLQHeaderOffset) == "" {
			t.Errorf("DLQ record %q lacks its reason or position: %v", r.Value, r.Headers)
		}
	}
	crawled := readTopic(t, e, "fc.crawled")
	prereqs := map[string]int{}
	for _, r := range crawled {
		ev, err := messages.DecodeCrawled(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(ev.HopPath, "P") {
			prereqs[ev.URL]++
		}
	}
	host, _ := url.Parse(seed)
	wantPrereqs := map[string]int{"dns:" + host.Hostname(): 1, "http://" + host.Host + "/robots.txt": 1}
	if !maps.Equal(prereqs, wantPrereqs) {
		t.Fatalf("prerequisite events %v, want one DNS lookup and one robots.txt: %v", prereqs, wantPrereqs)
	}
	if len(crawled)-len(prereqs) != want {
		t.Fatalf("%d crawled events besides prerequisites, want %d", len(crawled)-len(prereqs), want)
	}
	for _, r := range crawled {
		ev, err := messages.DecodeCrawled(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(ev.URL, "/form") {
			t.Fatalf("POST launch was crawled: %s", ev.URL)
		}
		if ev.StatusCode > 0 && (ev.WarcFilename == nil || ev.WarcOffset == nil || ev.ContentDigest == nil) {
			t.Fatalf("event without WARC location: %s", r.Value)
		}
		if ev.Seed != "tid:1:"+seed || ev.CrawlName == "" || ev.ExtraInfo["scopeDecision"] == nil {
			t.Fatalf("event lacks inherited fields: %s", r.Value)
		}
	}
	inscope := readTopic(t, e, "fc.inscope.npld")
	if len(inscope) != want {
		t.Fatalf("%d inscope records, want one per admitted URI (%d)", len(inscope), want)
	}
	if open, _ := filepath.Glob(filepath.Join(dir, "warcs", "fc-npld", "*.open")); len(open) != 0 {
		t.Fatalf("WARCs left open after shutdown: %v", open)
	}
	notices := readTopic(t, e, "fc.warcs")
	if len(notices) == 0 {
		t.Fatal("no closed-WARC notice")
	}
	for _, r := range notices {
		if _, err := messages.DecodeWarcNotice(r.Value); err != nil {
			t.Fatalf("notice %s: %v", r.Value, err)
		}
	}
	// Offsets were committed: a restarted worker finds nothing new to ingest.
	lags, err := kadm.NewClient(e.cl).Lag(context.Background(), "trawler-worker-fc-npld")
	if err != nil {
		t.Fatal(err)
	}
	if total := lags["trawler-worker-fc-npld"].Lag.Total(); total != 0 {
		t.Fatalf("ingest lag after shutdown = %d, want 0", total)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Crawl: "fc", Stream: "npld", Threads: 1, DataDir: "d", Lease: time.Minute}, ""},
		{Config{Crawl: "dc", Threads: 1, DataDir: "d", Lease: time.Minute}, ""},
		{Config{Crawl: "xx", Stream: "npld", Threads: 1, DataDir: "d", Lease: time.Minute}, `crawl "xx"`},
		{Config{Crawl: "fc", Stream: "other", Threads: 1, DataDir: "d", Lease: time.Minute}, `stream "other"`},
		{Config{Crawl: "fc", Stream: "npld", Threads: 0, DataDir: "", Lease: 0}, "threads must be >= 1\ndata directory is required\nlease"},
	}
	for _, tc := range tests {
		err := tc.cfg.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: err %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if (Config{Crawl: "dc"}).ToCrawlTopic() != "dc.tocrawl" || (Config{Crawl: "fc", Stream: "bypm"}).InScopeTopic() != "fc.inscope.bypm" {
		t.Fatal("topic names")
	}
}
