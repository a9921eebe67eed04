package cdxwriter

import (
	"context"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/kafka"
)

// benchEvents returns n crawled events shaped like the worker's: many
// hosts, varied paths, one in ten a failure. They are of the last day, so
// the recently-crawled TTL keeps them (older ones would expire on arrival
// and measure deletion instead).
func benchEvents(n, seed int) [][]byte {
	out := make([][]byte, n)
	start := time.Now().UTC().Add(-24 * time.Hour).Truncate(time.Second)
	for i := range out {
		id := seed*n + i
		host := fmt.Sprintf("www.host%d.example.org", id%997)
		u := fmt.Sprintf("https://%s/section/%d/article-%d.html?ref=%d", host, id%53, id, id%7)
		at := start.Add(time.Duration(id) * time.Millisecond)
		var d [20]byte
		binary.LittleEndian.PutUint64(d[:], uint64(id)*0x9e3779b97f4a7c15)
		digest := base32.StdEncoding.EncodeToString(d[:])
		if i%10 == 9 {
			out[i] = fmt.Appendf(nil, `{"timestamp":%q,"url":%q,"status_code":-6,"size":null,"content_length":null,"content_digest":null,"mimetype":"unknown","hop_path":"L","via":"https://%s/","seed":"tid:1001:https://%s/","host":%q,"thread":3,"start_time_plus_duration":"-","annotations":"","warc_filename":null,"warc_offset":null,"warc_length":null,"crawl_name":"frequent-npld","extra_info":{"scopeDecision":"ACCEPT by rule #2 SurtPrefixedDecideRule"}}`,
				at.Format("2006-01-02T15:04:05.000Z"), u, host, host, host)
			continue
		}
		out[i] = fmt.Appendf(nil, `{"timestamp":%q,"url":%q,"status_code":200,"size":51822,"content_length":51542,"content_digest":"sha1:%s","mimetype":"text/html; charset=utf-8","hop_path":"LL","via":"https://%s/","seed":"tid:1001:https://%s/","host":%q,"thread":3,"start_time_plus_duration":"%s%03d+299","annotations":"launchTimestamp:20240117090000","warc_filename":"NPLD-20240117085959123-%05d-worker-0.warc.gz","warc_offset":%d,"warc_length":13107,"crawl_name":"frequent-npld","extra_info":{"scopeDecision":"ACCEPT by rule #2 SurtPrefixedDecideRule","etag":"\"%x\""}}`,
			at.Add(300*time.Millisecond).Format("2006-01-02T15:04:05.000Z"), u, digest, host, host, host,
			at.Format("20060102150405"), at.Nanosecond()/1e6, id/10000, int64(id)*13107, id)
	}
	return out
}

// BenchmarkApply measures the batch-apply path without Kafka: decode,
// index (Pebble, synced per batch) and recently-crawled DB (redis-server),
// in batches of DefaultBatch.
//
//	go test -run '^$' -bench BenchmarkApply -benchtime 200000x ./services/cdxwriter/
func BenchmarkApply(b *testing.B) {
	rdb := embeddedtest.Redis(b)
	ix, err := cdxindex.Open(b.TempDir(), cdxindex.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ix.Close() })
	w, err := New(Config{Crawl: "fc", Stream: "npld", DataDir: b.TempDir(), RecentTTL: DefaultRecentTTL},
		Deps{Kafka: kafka.Config{Brokers: []string{"127.0.0.1:9"}}, Redis: rdb, Index: ix})
	if err != nil {
		b.Fatal(err)
	}
	w.index = ix
	values := benchEvents(b.N, 0)
	ctx := context.Background()
	cpu := startCPU(b, rdb)
	b.ResetTimer()
	// DefaultConsumers appliers take batches in turn, as that many group
	// members would.
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, DefaultConsumers)
	for range DefaultConsumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := range next {
				if err := applyValues(ctx, w, values[start:min(start+DefaultBatch, b.N)]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for start := 0; start < b.N; start += DefaultBatch {
		next <- start
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	cpu.report(b)
}

// applyValues decodes and applies one batch, as a consumer member does.
func applyValues(ctx context.Context, w *Writer, values [][]byte) error {
	batch := make([]kafka.Item[event], 0, len(values))
	for _, v := range values {
		rec := &kgo.Record{Value: v}
		e, err := decodeRecord(rec)
		if err != nil {
			return err
		}
		batch = append(batch, kafka.Item[event]{Value: e, Record: rec})
	}
	return w.handle(ctx, batch)
}

// cpuMeter measures the CPU time this process and redis-server spend, so
// figures can be judged on a machine shared with other work: wall time
// there says more about the neighbours than about this code.
type cpuMeter struct {
	rdb         *redis.Client
	self, redis time.Duration
}

func startCPU(b *testing.B, rdb *redis.Client) *cpuMeter {
	m := &cpuMeter{rdb: rdb}
	m.self, m.redis = processCPU(b), redisCPU(b, rdb)
	return m
}

// report adds µs of CPU per event for each process, and the events/s two
// dedicated cores would sustain at that cost.
func (m *cpuMeter) report(b *testing.B) {
	self := processCPU(b) - m.self
	red := redisCPU(b, m.rdb) - m.redis
	n := float64(b.N)
	b.ReportMetric(float64(self.Microseconds())/n, "cpu-µs/event")
	b.ReportMetric(float64(red.Microseconds())/n, "redis-cpu-µs/event")
	b.ReportMetric(2*n/(self+red).Seconds(), "events/s@2cores")
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func redisCPU(b *testing.B, rdb *redis.Client) time.Duration {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, l := range strings.Split(info, "\r\n") {
		k, v, _ := strings.Cut(l, ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}

// BenchmarkEndToEnd produces events into the embedded broker beforehand,
// then times a writer (real Pebble index, real redis-server) from start
// until its group has committed them all.
//
//	go test -run '^$' -bench BenchmarkEndToEnd -benchtime 200000x ./services/cdxwriter/
func BenchmarkEndToEnd(b *testing.B) {
	kc, cl := embeddedtest.Kafka(b, 4)
	rdb := embeddedtest.Redis(b)
	ctx := context.Background()
	values := benchEvents(b.N, 1)
	for start := 0; start < len(values); start += 5000 {
		var recs []*kgo.Record
		for _, v := range values[start:min(start+5000, len(values))] {
			recs = append(recs, &kgo.Record{Topic: "fc.crawled", Key: v[20:28], Value: v})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			b.Fatal(err)
		}
	}
	cfg := Config{Crawl: "fc", Stream: "npld", DataDir: b.TempDir(), RecentTTL: DefaultRecentTTL, Batch: DefaultBatch, Consumers: DefaultConsumers}
	reg := prometheus.NewRegistry()
	w, err := New(cfg, Deps{Kafka: kc, Redis: rdb, Registerer: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	cpu := startCPU(b, rdb)
	b.ResetTimer()
	go func() { done <- w.Run(runCtx) }()
	steady := watchCommits(b, cl, cfg.Group(), int64(b.N))
	b.StopTimer()
	cpu.report(b) // process CPU includes the embedded broker serving the fetches
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(steady, "steady-events/s")
}

// watchCommits polls the group's committed offsets until it has committed
// want records, and returns the rate from its first commit to its last:
// the steady state, without the group join and first fetches.
func watchCommits(b *testing.B, cl *kgo.Client, group string, want int64) float64 {
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Minute)
	var firstAt time.Time
	var first int64
	for {
		committed, err := adm.FetchOffsets(ctx, group)
		var n int64
		if err == nil {
			committed.Each(func(o kadm.OffsetResponse) { n += o.At })
		}
		now := time.Now()
		if n > 0 && firstAt.IsZero() {
			firstAt, first = now, n
		}
		if n >= want {
			if n == first {
				return 0
			}
			return float64(n-first) / now.Sub(firstAt).Seconds()
		}
		if now.After(deadline) {
			b.Fatalf("group %s committed %d of %d records", group, n, want)
		}
		time.Sleep(5 * time.Millisecond) // polling with a deadline
	}
}
