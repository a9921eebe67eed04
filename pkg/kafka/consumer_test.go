package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

type event struct {
	N int `json:"n"`
}

func decodeEvent(r *kgo.Record) (event, error) {
	var e event
	if err := json.Unmarshal(r.Value, &e); err != nil {
		return e, fmt.Errorf("decode event: %w", err)
	}
	return e, nil
}

// collector is a Handle that records what it saw.
type collector struct {
	mu    sync.Mutex
	seen  []int
	calls int
	// failFirst makes the first calls fail.
	failFirst int
	// block, if set, is waited on (after started is signalled) by the first
	// call.
	block   chan struct{}
	started chan struct{}
}

func (c *collector) handle(ctx context.Context, batch []Item[event]) error {
	c.mu.Lock()
	c.calls++
	call := c.calls
	c.mu.Unlock()
	if call == 1 && c.block != nil {
		close(c.started)
		<-c.block
	}
	if call <= c.failFirst {
		return fmt.Errorf("transient failure %d", call)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, it := range batch {
		if it.Record == nil {
			return errors.New("item without record")
		}
		c.seen = append(c.seen, it.Value.N)
	}
	return nil
}

func (c *collector) values() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Clone(c.seen)
	slices.Sort(out)
	return out
}

// fastOpts keep the tests quick: short backoffs and fetch waits.
func fastOpts(o ConsumerOptions[event]) ConsumerOptions[event] {
	o.MinBackoff, o.MaxBackoff = 5*time.Millisecond, 20*time.Millisecond
	o.ClientOpts = append(o.ClientOpts, kgo.FetchMaxWait(200*time.Millisecond))
	return o
}

// runConsumer starts Run in a goroutine. cancel cancels its context; stop
// cancels and returns Run's error.
func runConsumer(t *testing.T, c *Consumer[event]) (stop func() error, cancel func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-errc:
			case <-time.After(30 * time.Second):
				err = errors.New("Run did not return within 30s of cancel")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop, cancel
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		<-tick.C
	}
}

func produceEvents(t *testing.T, ctx context.Context, cl *kgo.Client, topic string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := Produce(ctx, cl, topic, fmt.Sprintf("host-%d", i%5), []byte(fmt.Sprintf(`{"n":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// committedEqualsEnd reports whether the group's commits reach the end of
// every partition of topic.
func committedEqualsEnd(t *testing.T, ctx context.Context, adm *kadm.Client, group, topic string) bool {
	t.Helper()
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	ok := true
	ends.Each(func(o kadm.ListedOffset) {
		c, found := committed.Lookup(o.Topic, o.Partition)
		if o.Offset > 0 && (!found || c.At != o.Offset) {
			ok = false
		}
	})
	return ok
}

func TestConsumerAtLeastOnce(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	cfg := newCluster(t, 3, "fc.crawled", "fc.dlq")
	cl := newTestClient(t, cfg)
	adm := kadm.NewClient(cl)

	produceEvents(t, ctx, cl, "fc.crawled", 0, 10)
	poison := []string{"not json", `{"n":"NaN"}`}
	for _, p := range poison {
		if err := Produce(ctx, cl, "fc.crawled", "bad-host", []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	produceEvents(t, ctx, cl, "fc.crawled", 10, 20)

	reg := prometheus.NewRegistry()
	col := &collector{failFirst: 2}
	c, err := NewConsumer(cfg, fastOpts(ConsumerOptions[event]{
		Group: "cdxwriter", Topics: []string{"fc.crawled"}, DLQTopic: "fc.dlq",
		Decode: decodeEvent, Handle: col.handle, Registerer: reg, MaxBatch: 7,
	}))
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := runConsumer(t, c)
	waitUntil(t, 30*time.Second, "all good records handled", func() bool { return len(col.values()) >= 20 })
	waitUntil(t, 30*time.Second, "offsets committed to the end", func() bool {
		return committedEqualsEnd(t, ctx, adm, "cdxwriter", "fc.crawled")
	})
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := col.values(); !slices.Equal(got, seq(0, 20)) {
		t.Errorf("handled %v, want 0..19 exactly once (failed calls must not record)", got)
	}

	dlq := readAll(t, ctx, cfg, "fc.dlq")
	if len(dlq) != len(poison) {
		t.Fatalf("dead-letter topic has %d records, want %d", len(dlq), len(poison))
	}
	for _, r := range dlq {
		h := headers(r)
		if string(r.Key) != "bad-host" || !slices.Contains(poison, string(r.Value)) {
			t.Errorf("DLQ record key %q value %q, want the original", r.Key, r.Value)
		}
		if !strings.Contains(h[DLQHeaderError], "decode event") || h[DLQHeaderTopic] != "fc.crawled" ||
			h[DLQHeaderGroup] != "cdxwriter" || h[DLQHeaderPartition] == "" || h[DLQHeaderOffset] == "" {
			t.Errorf("DLQ headers %v", h)
		}
		checkSourcePosition(t, ctx, cfg, h, string(r.Value))
	}

	checkMetric(t, reg, "trawler_kafka_consumer_records_total", 22)
	checkMetric(t, reg, "trawler_kafka_consumer_dlq_records_total", 2)
	checkMetric(t, reg, "trawler_kafka_consumer_handle_errors_total", 2)
	if n := histogramCount(t, reg, "trawler_kafka_consumer_batch_duration_seconds"); n < 3 {
		t.Errorf("batch histogram has %d samples; 22 records in batches of 7 make at least 4", n)
	}

	// A new member of the group resumes after the commits: it sees only
	// what was produced since.
	produceEvents(t, ctx, cl, "fc.crawled", 20, 25)
	col2 := &collector{}
	c2, err := NewConsumer(cfg, fastOpts(ConsumerOptions[event]{
		Group: "cdxwriter", Topics: []string{"fc.crawled"}, DLQTopic: "fc.dlq",
		Decode: decodeEvent, Handle: col2.handle, Registerer: reg, // shared registry: collectors reused
	}))
	if err != nil {
		t.Fatalf("second consumer on the same registry: %v", err)
	}
	stop2, _ := runConsumer(t, c2)
	waitUntil(t, 30*time.Second, "new records handled", func() bool { return len(col2.values()) >= 5 })
	waitUntil(t, 30*time.Second, "offsets committed", func() bool {
		return committedEqualsEnd(t, ctx, adm, "cdxwriter", "fc.crawled")
	})
	if err := stop2(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := col2.values(); !slices.Equal(got, seq(20, 25)) {
		t.Errorf("resumed consumer handled %v, want 20..24", got)
	}
}

// checkSourcePosition reads the record the DLQ headers point at and checks
// it is the poison record.
func checkSourcePosition(t *testing.T, ctx context.Context, cfg Config, h map[string]string, value string) {
	t.Helper()
	var p int32
	var off int64
	if _, err := fmt.Sscan(h[DLQHeaderPartition], &p); err != nil {
		t.Fatalf("partition header %q: %v", h[DLQHeaderPartition], err)
	}
	if _, err := fmt.Sscan(h[DLQHeaderOffset], &off); err != nil {
		t.Fatalf("offset header %q: %v", h[DLQHeaderOffset], err)
	}
	for _, r := range readAll(t, ctx, cfg, h[DLQHeaderTopic]) {
		if r.Partition == p && r.Offset == off {
			if string(r.Value) != value {
				t.Errorf("source %d@%d holds %q, want %q", p, off, r.Value, value)
			}
			return
		}
	}
	t.Errorf("no source record at partition %d offset %d", p, off)
}

func headers(r *kgo.Record) map[string]string {
	h := map[string]string{}
	for _, kv := range r.Headers {
		h[kv.Key] = string(kv.Value)
	}
	return h
}

func checkMetric(t *testing.T, reg *prometheus.Registry, name string, want float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			got += m.GetCounter().GetValue()
		}
	}
	if got != want {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

func histogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				n += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return n
}

func TestConsumerFinishesBatchOnShutdown(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	cfg := newCluster(t, 1, "dc.crawled")
	cl := newTestClient(t, cfg)
	produceEvents(t, ctx, cl, "dc.crawled", 0, 5)

	col := &collector{block: make(chan struct{}), started: make(chan struct{})}
	c, err := NewConsumer(cfg, fastOpts(ConsumerOptions[event]{
		Group: "g", Topics: []string{"dc.crawled"}, Decode: decodeEvent, Handle: col.handle,
	}))
	if err != nil {
		t.Fatal(err)
	}
	stop, cancel := runConsumer(t, c)
	select {
	case <-col.started:
	case <-ctx.Done():
		t.Fatal("Handle never called")
	}
	// Cancel while the batch is in hand, then let Handle finish.
	cancel()
	close(col.block)
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := col.values(); !slices.Equal(got, seq(0, 5)) {
		t.Errorf("handled %v, want 0..4", got)
	}
	if !committedEqualsEnd(t, ctx, kadm.NewClient(cl), "g", "dc.crawled") {
		t.Error("batch finished at shutdown was not committed")
	}
}

func TestConsumerAbandonsFailingBatchOnShutdown(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	cfg := newCluster(t, 1, "fc.inscope.npld")
	cl := newTestClient(t, cfg)
	produceEvents(t, ctx, cl, "fc.inscope.npld", 0, 3)

	failing := &collector{failFirst: 1 << 30}
	c, err := NewConsumer(cfg, fastOpts(ConsumerOptions[event]{
		Group: "rebuild", Topics: []string{"fc.inscope.npld"}, Decode: decodeEvent, Handle: failing.handle,
	}))
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := runConsumer(t, c)
	waitUntil(t, 30*time.Second, "a few failed attempts", func() bool {
		failing.mu.Lock()
		defer failing.mu.Unlock()
		return failing.calls >= 3
	})
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	offsets, err := kadm.NewClient(cl).FetchOffsets(ctx, "rebuild")
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup("fc.inscope.npld", 0); ok && o.At > 0 {
		t.Fatalf("failing batch committed at %d; it must be redelivered", o.At)
	}

	// The next member gets the records again: nothing was skipped.
	col := &collector{}
	c2, err := NewConsumer(cfg, fastOpts(ConsumerOptions[event]{
		Group: "rebuild", Topics: []string{"fc.inscope.npld"}, Decode: decodeEvent, Handle: col.handle,
	}))
	if err != nil {
		t.Fatal(err)
	}
	stop2, _ := runConsumer(t, c2)
	waitUntil(t, 30*time.Second, "redelivery", func() bool { return len(col.values()) >= 3 })
	if err := stop2(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestConsumerWithoutDLQSkipsPoison(t *testing.T) {
	ctx := testContext(t, 60*time.Second)
	cfg := newCluster(t, 1, "fc.control")
	cl := newTestClient(t, cfg)
	if err := Produce(ctx, cl, "fc.control", "*", []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	produceEvents(t, ctx, cl, "fc.control", 0, 2)
	reg := prometheus.NewRegistry()
	col := &collector{}
	panicky := func(r *kgo.Record) (event, error) {
		if string(r.Value) == "garbage" {
			panic("decoder bug")
		}
		return decodeEvent(r)
	}
	c, err := NewConsumer(cfg, fastOpts(ConsumerOptions[event]{
		Group: "w", Topics: []string{"fc.control"}, Decode: panicky, Handle: col.handle, Registerer: reg,
	}))
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := runConsumer(t, c)
	waitUntil(t, 30*time.Second, "good records", func() bool { return len(col.values()) >= 2 })
	waitUntil(t, 30*time.Second, "commit past the poison record", func() bool {
		return committedEqualsEnd(t, ctx, kadm.NewClient(cl), "w", "fc.control")
	})
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkMetric(t, reg, "trawler_kafka_consumer_dropped_records_total", 1)
}

func TestNewConsumerValidation(t *testing.T) {
	good := ConsumerOptions[event]{
		Group: "g", Topics: []string{"t"}, DLQTopic: "t.dlq",
		Decode: decodeEvent, Handle: func(context.Context, []Item[event]) error { return nil },
	}
	cfg := Config{Brokers: []string{"127.0.0.1:9092"}}
	tests := []struct {
		name string
		cfg  Config
		mod  func(*ConsumerOptions[event])
		want string
	}{
		{"no brokers", Config{}, func(*ConsumerOptions[event]) {}, "no brokers"},
		{"no group", cfg, func(o *ConsumerOptions[event]) { o.Group = "" }, "no group"},
		{"no topics", cfg, func(o *ConsumerOptions[event]) { o.Topics = nil }, "no topics"},
		{"empty topic", cfg, func(o *ConsumerOptions[event]) { o.Topics = []string{"t", ""} }, "empty topic"},
		{"dlq consumed", cfg, func(o *ConsumerOptions[event]) { o.DLQTopic = "t" }, `dead-letter topic "t" is also consumed`},
		{"no decode", cfg, func(o *ConsumerOptions[event]) { o.Decode = nil }, "no Decode"},
		{"no handle", cfg, func(o *ConsumerOptions[event]) { o.Handle = nil }, "no Handle"},
		{"negative batch", cfg, func(o *ConsumerOptions[event]) { o.MaxBatch = -1 }, "MaxBatch -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := good
			tc.mod(&o)
			_, err := NewConsumer(tc.cfg, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewConsumer = %v, want error containing %q", err, tc.want)
			}
		})
	}
	c, err := NewConsumer(cfg, good)
	if err != nil {
		t.Fatalf("NewConsumer(good): %v", err)
	}
	if c.o.MaxBatch != DefaultMaxBatch || c.o.ShutdownGrace != DefaultShutdownGrace {
		t.Errorf("defaults not applied: %+v", c.o)
	}
}
