package cdxwriter

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// harness is a real broker, a real redis-server and a data directory.
type harness struct {
	kc    kafka.Config
	cl    *kgo.Client
	rdb   *redis.Client
	cfg   Config
	reg   *prometheus.Registry
	deps  Deps
	recdb *recentdb.DB
	// logs is what the last started writer logged, debug lines included.
	logs *testlog.Buffer
}

func newHarness(t *testing.T, partitions int32) *harness {
	t.Helper()
	kc, cl := embeddedtest.Kafka(t, partitions)
	rdb := embeddedtest.Redis(t)
	h := &harness{kc: kc, cl: cl, rdb: rdb,
		cfg: Config{Crawl: "fc", Stream: "npld", DataDir: t.TempDir(), CDXAddr: "127.0.0.1:0", ForwardFailures: true, Batch: 100, Consumers: 2}}
	var err error
	if h.recdb, err = recentdb.New(rdb, recentdb.Options{Crawl: "fc", Stream: "npld"}); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) produce(t *testing.T, values ...string) {
	t.Helper()
	for _, v := range values {
		rec := &kgo.Record{Topic: "fc.crawled", Key: []byte(fmt.Sprint(len(v))), Value: []byte(v)}
		if err := h.cl.ProduceSync(context.Background(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// running is a Writer started by start.
type running struct {
	w      *Writer
	cancel context.CancelFunc
	done   chan error
}

// newWriter builds a writer on the harness, with a fresh registry and log.
func (h *harness) newWriter(t *testing.T) *Writer {
	t.Helper()
	h.reg = prometheus.NewRegistry()
	d := h.deps
	d.Kafka, d.Redis, d.Registerer, d.LagInterval = h.kc, h.rdb, h.reg, 50*time.Millisecond
	d.Logger, h.logs = testlog.New(slog.LevelDebug)
	w, err := New(h.cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// start runs a writer until stop (or the test's end).
func (h *harness) start(t *testing.T) *running {
	t.Helper()
	w := h.newWriter(t)
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{w: w, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- w.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

func (r *running) stop(t *testing.T) {
	t.Helper()
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	if err := <-r.done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// waitCommitted polls until group has committed every record of the
// crawled topic.
func (h *harness) waitCommitted(t testing.TB, group string) {
	t.Helper()
	adm := kadm.NewClient(h.cl)
	ctx := context.Background()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		ends, err1 := adm.ListEndOffsets(ctx, "fc.crawled")
		committed, err2 := adm.FetchOffsets(ctx, group)
		if err1 == nil && err2 == nil {
			caught := true
			ends.Each(func(o kadm.ListedOffset) {
				c, ok := committed.Lookup(o.Topic, o.Partition)
				if o.Offset > 0 && (!ok || c.At < o.Offset) {
					caught = false
				}
			})
			if caught {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s did not catch up (%v %v)", group, err1, err2)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
}

// query asks the writer's OutbackCDX API for url's captures.
func query(t *testing.T, w *Writer, rawURL string) []cdx.Line {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for w.APIAddr() == "" {
		if time.Now().After(deadline) {
			t.Fatal("CDX API did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get("http://" + w.APIAddr() + "/fc?url=" + url.QueryEscape(rawURL))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("query %s: %s", rawURL, resp.Status)
	}
	var out []cdx.Line
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		l, err := cdx.Parse(sc.Text())
		if err != nil {
			t.Fatalf("query %s: line %q: %v", rawURL, sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

func (h *harness) lookup(t *testing.T, urls ...string) []recentdb.Entry {
	t.Helper()
	es, err := h.recdb.Lookup(context.Background(), urls)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// indexCount reopens the (closed) index and counts the collection.
func (h *harness) indexCount(t *testing.T) int64 {
	t.Helper()
	ix, err := cdxindex.Open(h.cfg.IndexDir(), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	n, _ := ix.Count("fc")
	return n
}

// dlqRecords reads the dead-letter topic.
func (h *harness) dlqRecords(t *testing.T, want int) []*kgo.Record {
	t.Helper()
	cl, err := kafka.NewClient(h.kc, kgo.ConsumeTopics("fc.dlq"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("DLQ: %d records, want %d", len(recs), want)
		}
		recs = append(recs, fs.Records()...)
	}
	return recs
}

func headers(r *kgo.Record) map[string]string {
	m := map[string]string{}
	for _, h := range r.Headers {
		m[h.Key] = string(h.Value)
	}
	return m
}

// All three golden shapes are applied; bad events go to the DLQ with
// headers saying why and from where, and do not stop the rest.
func TestGoldenEventsAndDLQ(t *testing.T) {
	h := newHarness(t, 2)
	bad := []string{
		`{truncated`,
		`{"url": "http://x/", "status_code": "two hundred"}`,
		`{"url":"http://x/","status_code":200,"timestamp":"never","start_time_plus_duration":"-"}`,
		`{"url":"http://x/","status_code":200,"timestamp":"2024-01-17T09:00:03.120Z","extra_info":{"etag":5}}`,
	}
	h.produce(t, goldenEvents(t)...)
	h.produce(t, bad...)
	r := h.start(t)
	h.waitCommitted(t, h.cfg.Group())

	news := query(t, r.w, "https://news.example.org/")
	if len(news) != 1 || news[0].Offset != 10422 || news[0].Length != 13107 || news[0].Timestamp != "20240117090002" {
		t.Errorf("news captures: %+v", news)
	}
	lib := query(t, r.w, "https://cdn.example.net/lib.js")
	if len(lib) != 1 || lib[0].Mimetype != "application/javascript" {
		t.Errorf("proxy captures: %+v", lib)
	}
	if got := query(t, r.w, "https://social.example.com/someone"); len(got) != 0 {
		t.Errorf("the -5002 hand-off was indexed: %+v", got)
	}
	es := h.lookup(t, "https://news.example.org/", "https://cdn.example.net/lib.js", "https://social.example.com/someone")
	if es[0].Original == nil || es[0].Original.Offset != 10422 || es[1].Capture == nil || es[2].Found() {
		t.Errorf("recently crawled: %+v %+v %+v", es[0], es[1], es[2])
	}
	recs := h.dlqRecords(t, len(bad))
	sort.Slice(recs, func(i, j int) bool { return string(recs[i].Value) < string(recs[j].Value) })
	for _, rec := range recs {
		hd := headers(rec)
		if hd[kafka.DLQHeaderError] == "" || hd[kafka.DLQHeaderTopic] != "fc.crawled" || hd[kafka.DLQHeaderGroup] != h.cfg.Group() ||
			hd[kafka.DLQHeaderOffset] == "" || hd[kafka.DLQHeaderPartition] == "" {
			t.Errorf("DLQ record %s: headers %v", rec.Value, hd)
		}
	}
	if !strings.Contains(headers(recs[0])[kafka.DLQHeaderError], "field status_code") {
		t.Errorf("wrong-type error: %v", headers(recs[0])[kafka.DLQHeaderError])
	}
	// The index reports its size through the writer's registry.
	if got := metricValue(t, h, "trawler_cdx_index_entries"); got != 2 {
		t.Errorf("trawler_cdx_index_entries = %v, want 2", got)
	}
	if got := metricValue(t, h, "trawler_cdxwriter_events_total"); got != 3 {
		t.Errorf("trawler_cdxwriter_events_total = %v, want the 3 golden events", got)
	}
	r.stop(t)
	if n := h.indexCount(t); n != 2 {
		t.Errorf("index holds %d entries, want 2", n)
	}
}

func eventJSON(url string, status int, start string, digest, file string, offset int64) string {
	loc := `"warc_filename":null,"warc_offset":null`
	if file != "" {
		loc = fmt.Sprintf(`"warc_filename":%q,"warc_offset":%d,"warc_length":100`, file, offset)
	}
	d := "null"
	if digest != "" {
		d = fmt.Sprintf("%q", digest)
	}
	return fmt.Sprintf(`{"timestamp":"2024-01-17T09:00:03.120Z","url":%q,"status_code":%d,"content_digest":%s,"mimetype":"text/html","start_time_plus_duration":"%s+10",%s}`,
		url, status, d, start, loc)
}

// The same capture delivered twice, and the whole topic replayed from the
// start by a restarted writer, leave one index entry per capture; an older
// event arriving after a newer one does not win in the recently-crawled DB.
func TestRedeliveryAndOrder(t *testing.T) {
	h := newHarness(t, 1)
	const u = "http://site.example/page"
	newer := eventJSON(u, 200, "20240301000000000", "sha1:NEWER", "b.warc.gz", 500)
	older := eventJSON(u, 200, "20240101000000000", "sha1:OLDER", "a.warc.gz", 100)
	failure := eventJSON("http://site.example/gone", -6, "20240101000000000", "", "", 0)
	h.produce(t, newer, newer, older, failure, older)
	r := h.start(t)
	h.waitCommitted(t, h.cfg.Group())
	check := func() {
		t.Helper()
		if got := query(t, r.w, u); len(got) != 2 {
			t.Errorf("%d captures of %s, want 2 (one per capture)", len(got), u)
		}
		es := h.lookup(t, u, "http://site.example/gone")
		if es[0].Capture == nil || es[0].Capture.Digest != "sha1:NEWER" || es[0].Original.Filename != "b.warc.gz" {
			t.Errorf("recently crawled %+v %+v: the older event won", es[0].Capture, es[0].Original)
		}
		if es[1].Failure == nil || es[1].Failure.Status != -6 || es[1].Capture != nil {
			t.Errorf("failure entry %+v", es[1])
		}
		if got := query(t, r.w, "http://site.example/gone"); len(got) != 0 {
			t.Errorf("failure indexed: %+v", got)
		}
	}
	check()
	r.stop(t)

	// Replay: move the group back to the start, as after a lost commit.
	adm := kadm.NewClient(h.cl)
	var os kadm.Offsets
	os.Add(kadm.Offset{Topic: "fc.crawled", Partition: 0, At: 0, LeaderEpoch: -1})
	if _, err := adm.CommitOffsets(context.Background(), h.cfg.Group(), os); err != nil {
		t.Fatal(err)
	}
	h.produce(t, older) // plus one more late old event
	r = h.start(t)
	h.waitCommitted(t, h.cfg.Group())
	check()
	r.stop(t)
	if n := h.indexCount(t); n != 2 {
		t.Errorf("index holds %d entries after replay, want 2", n)
	}
}

func TestRunFailsWhenAPIPortTaken(t *testing.T) {
	h := newHarness(t, 1)
	first := h.start(t)
	deadline := time.Now().Add(10 * time.Second)
	for first.w.APIAddr() == "" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cfg := h.cfg
	cfg.DataDir = t.TempDir()
	cfg.CDXAddr = first.w.APIAddr()
	w, err := New(cfg, Deps{Kafka: h.kc, Redis: h.rdb})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "listen for the CDX API") {
		t.Fatalf("Run with the port taken: %v", err)
	}
}
