package provenance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/metawarc"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// fakeFrontier reports a settable count for every source.
type fakeFrontier struct {
	mu   sync.Mutex
	left map[string]int64
}

func (f *fakeFrontier) set(source string, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.left[source] = n
}

func (f *fakeFrontier) TargetCounts(context.Context) ([]frontier.TargetCount, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []frontier.TargetCount
	for s, n := range f.left {
		out = append(out, frontier.TargetCount{Source: s, Queued: n})
	}
	return out, nil
}

// harness is one service on a real broker and Redis.
type harness struct {
	t     *testing.T
	kc    kafka.Config
	cl    *kgo.Client
	rdb   *redis.Client
	front *fakeFrontier
	cfg   Config
	reg   *prometheus.Registry
}

func newHarness(t *testing.T) *harness {
	kc, cl := embeddedtest.Kafka(t, 2)
	dir := t.TempDir()
	cfg := Config{Crawl: "fc", Stream: "npld", DataDir: dir, Hostname: "h", WARCPrefix: "T",
		PollInterval: 50 * time.Millisecond, Settle: 200 * time.Millisecond, Batch: 100}
	return &harness{t: t, kc: kc, cl: cl, rdb: embeddedtest.Redis(t), front: &fakeFrontier{left: map[string]int64{}}, cfg: cfg}
}

// start runs a service until the test ends.
func (h *harness) start() *Service {
	h.t.Helper()
	p := profile.Default()
	p.Crawl.Name = "test-crawl"
	return h.startWith(p, nil)
}

// startWith runs a service with profile p and clock now (nil: time.Now)
// until the test ends.
func (h *harness) startWith(p profile.Profile, now func() time.Time) *Service {
	h.t.Helper()
	h.reg = prometheus.NewRegistry()
	s, err := New(h.cfg, Deps{Kafka: h.kc, Redis: h.rdb, Frontier: h.front, Profile: p, Version: "test", Registerer: h.reg, Now: now})
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	h.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			h.t.Error(err)
		}
	})
	return s
}

// produce writes records to fc.crawled.
func (h *harness) produce(values ...[]byte) {
	h.t.Helper()
	for _, v := range values {
		if err := kafka.Produce(context.Background(), h.cl, "fc.crawled", "k", v); err != nil {
			h.t.Fatal(err)
		}
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// findRecord reads topic from the start until match accepts a record.
func findRecord(t *testing.T, kc kafka.Config, topic string, match func(*kgo.Record) bool) {
	t.Helper()
	cl, err := kafka.NewClient(kc, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		f := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: no matching record", topic)
		}
		for _, r := range f.Records() {
			if match(r) {
				return
			}
		}
	}
}

// readTopic returns every record of topic so far.
func readTopic(t *testing.T, kc kafka.Config, topic string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kafka.NewClient(kc, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*kgo.Record
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(out) < want {
		f := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("%s: got %d records, want %d", topic, len(out), want)
		}
		out = append(out, f.Records()...)
	}
	return out
}

const src = "tid:5:http://done.example/"

// event is a crawled event of src at t.
func event(url string, status int, at time.Time, hop, annotations string) messages.Crawled {
	e := messages.Crawled{Timestamp: messages.FormatTimestamp(at), URL: url, StatusCode: status, Seed: src,
		HopPath: hop, Via: "http://done.example/", Annotations: annotations, Mimetype: "text/html", Host: "done.example",
		StartTimePlusDuration: at.UTC().Format("20060102150405") + "000+5", CrawlName: "test-crawl"}
	if status > 0 {
		e.Size = messages.Int64(100)
		d := "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		e.ContentDigest = &d
		e.WarcFilename, e.WarcOffset, e.WarcLength = messages.String("T-x.warc.gz"), messages.Int64(10), messages.Int64(90)
	}
	return e
}

// logLine is the crawl.log line of an event.
func logLine(t *testing.T, ev messages.Crawled) []byte {
	e, err := crawllog.FromCrawled(ev)
	if err != nil {
		t.Fatal(err)
	}
	return crawllog.AppendLine(nil, e)
}

func marshal(t *testing.T, ev messages.Crawled) []byte {
	b, err := ev.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLaunchLifecycle: a launch is counted (bad input dead-lettered),
// sealed once nothing of it is left, and its statistics and metadata WARC
// are published; a relaunch's lines stay out of it; a restart writes
// nothing again.
func TestLaunchLifecycle(t *testing.T) {
	h := newHarness(t)
	t1 := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	launch1 := []messages.Crawled{
		event("http://done.example/", 200, t1.Add(time.Second), "", "resetQuotas,launchTimestamp:20240117090000"),
		event("http://done.example/a", 200, t1.Add(2*time.Second), "L", ""),
		event("http://done.example/a", 200, t1.Add(3*time.Second), "L", ""), // recrawled in the launch
		event("http://done.example/b", 404, t1.Add(4*time.Second), "L", ""),
	}
	launch2 := []messages.Crawled{event("http://done.example/", 200, t2.Add(time.Second), "", "launchTimestamp:20240117100000")}
	other := event("http://other.example/", 200, t1.Add(5*time.Second), "", "launchTimestamp:20240117090000")
	other.Seed = "tid:6:http://other.example/"

	logDir := filepath.Join(h.cfg.DataDir, "logs", "fc-npld")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var all, want1 bytes.Buffer
	for _, ev := range launch1 {
		all.Write(logLine(t, ev))
		want1.Write(logLine(t, ev))
	}
	all.Write(logLine(t, other))
	all.Write(logLine(t, launch2[0]))
	if err := os.WriteFile(filepath.Join(logDir, "crawl.log"), all.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	h.front.set(src, 3)
	s := h.start()
	for _, ev := range launch1 {
		h.produce(marshal(t, ev))
	}
	h.produce([]byte("{not json"), []byte(`{"url": 7}`))
	l1 := harveststats.Launch{Source: src, Timestamp: "20240117090000"}
	ctx := context.Background()
	eventually(t, "launch 1 counted", func() bool {
		st, err := s.Store().Stats(ctx, l1)
		return err == nil && st.Totals.URIs == 3
	})
	// Still queued: not sealed, however long.
	if err := s.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	if f, _ := s.Store().Done(ctx, l1); f != "" {
		t.Fatal("sealed while URIs are queued")
	}
	h.front.set(src, 0)
	var file string
	eventually(t, "launch 1 sealed and written", func() bool {
		file, _ = s.Store().Done(ctx, l1)
		return file != ""
	})
	path := filepath.Join(h.cfg.warcDir(), file)
	blocks := readStrict(t, path)
	logURI := metawarc.URI(metawarc.PathCrawlLog, "fc", src, "20240117090000")
	if got := blocks[logURI]; !bytes.Equal(got, want1.Bytes()) {
		t.Errorf("crawl.log record:\n%s\nwant launch 1's lines:\n%s", got, want1.Bytes())
	}
	for _, p := range []string{metawarc.PathProfile, metawarc.PathSheets, metawarc.PathSeeds, metawarc.PathStatsJSON,
		metawarc.PathStatsText, metawarc.PathCDX, metawarc.PathReports + "crawl-report.txt", metawarc.PathReports + "hosts-report.txt"} {
		if _, ok := blocks[metawarc.URI(p, "fc", src, "20240117090000")]; !ok {
			t.Errorf("no %s record", p)
		}
	}
	if seeds := string(blocks[metawarc.URI(metawarc.PathSeeds, "fc", src, "20240117090000")]); seeds != "http://done.example/\n" {
		t.Errorf("seeds = %q", seeds)
	}
	if cdxLines := strings.Count(string(blocks[metawarc.URI(metawarc.PathCDX, "fc", src, "20240117090000")]), "\n"); cdxLines != 4 {
		t.Errorf("CDX has %d lines, want a header and 3", cdxLines)
	}

	// Published while running, then once completed.
	var st harveststats.LaunchStats
	var states []string
	findRecord(t, h.kc, "fc.harveststats", func(r *kgo.Record) bool {
		if err := json.Unmarshal(r.Value, &st); err != nil {
			t.Fatal(err)
		}
		states = append(states, st.State)
		return string(r.Key) == l1.Key() && st.State == "completed"
	})
	if states[0] != "running" || st.Totals.URIs != 3 || len(st.Domains) != 1 || st.Domains[0].StopReason.Code != "completed" {
		t.Errorf("published statistics (states %v): %+v", states, st)
	}
	notices := readTopic(t, h.kc, "fc.warcs", 1)
	n, err := messages.DecodeWarcNotice(notices[0].Value)
	if err != nil || n.Filename != file || n.Path != path {
		t.Errorf("notice %+v, %v", n, err)
	}
	dlq := readTopic(t, h.kc, "fc.dlq", 2)
	if len(dlq) != 2 {
		t.Errorf("dlq has %d records", len(dlq))
	}
	if got := testutil.ToFloat64(counter(t, h.reg, "trawler_kafka_consumer_dlq_records_total")); got != 2 {
		t.Errorf("dead-lettered counted %v, want 2", got)
	}
	for _, name := range []string{StatsJSON, StatsText, "crawl-report.txt"} {
		if _, err := os.Stat(filepath.Join(h.cfg.LaunchDir(l1), name)); err != nil {
			t.Error(err)
		}
	}

	// The relaunch: launch 1 gets nothing more; at crawl end launch 2 is
	// sealed as running (its source still has URIs queued).
	h.front.set(src, 1)
	h.produce(marshal(t, launch2[0]))
	endCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.EndCrawl(endCtx, harveststats.StateRunning); err != nil {
		t.Fatal(err)
	}
	l2 := harveststats.Launch{Source: src, Timestamp: "20240117100000"}
	f2, _ := s.Store().Done(ctx, l2)
	if f2 == "" || f2 == file {
		t.Fatalf("launch 2 file %q", f2)
	}
	b2 := readStrict(t, filepath.Join(h.cfg.warcDir(), f2))
	if got := b2[metawarc.URI(metawarc.PathCrawlLog, "fc", src, "20240117100000")]; !bytes.Equal(got, logLine(t, launch2[0])) {
		t.Errorf("launch 2 crawl.log record = %q", got)
	}
	if got := readStrict(t, path); !bytes.Equal(got[logURI], want1.Bytes()) {
		t.Error("launch 1's WARC changed")
	}
	st2, err := s.Store().Stats(ctx, l2)
	if err != nil || st2.State != "running" || st2.Domains[0].StopReason.Code != "running" {
		t.Errorf("launch 2: %+v, %v", st2, err)
	}

	// A crash after launch 2's file was renamed but before it was marked
	// done: a restarted service finds the file and writes no other.
	if err := h.rdb.HDel(ctx, "trawler:hs:{fc}:done", l2.Key()).Err(); err != nil {
		t.Fatal(err)
	}
	s2 := h.start()
	eventually(t, "launch 2 marked done again", func() bool {
		f, _ := s2.Store().Done(ctx, l2)
		return f == f2
	})
	metas, _ := filepath.Glob(filepath.Join(h.cfg.warcDir(), "*.warc.gz*"))
	if len(metas) != 2 {
		t.Errorf("metadata WARCs after restart: %v", metas)
	}
}

// counter finds a metric family's single counter value in reg.
func counter(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "x"})
	c.Add(total)
	return c
}

// readStrict reads a WARC as the content WARCs' tests do (every gowarc
// finding fails, digests checked) and returns blocks by target URI.
func readStrict(t *testing.T, path string) map[string][]byte {
	t.Helper()
	r, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation(), gowarc.WithBlockErrorPolicy(gowarc.ErrFail),
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail), gowarc.WithUnknownRecordTypePolicy(gowarc.ErrFail), gowarc.WithFixDigest(false))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	out := map[string][]byte{}
	for {
		rec, off, v, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s record at %d: %v", path, off, err)
		}
		rd, err := rec.Block().RawBytes()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rd)
		if err := rec.ValidateDigest(v); err != nil || len(*v) > 0 {
			t.Errorf("record at %d: %v %v", off, err, v.String())
		}
		out[rec.WarcHeader().Get(gowarc.WarcTargetURI)] = b
		_ = rec.Close()
	}
}
