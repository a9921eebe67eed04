package frontier

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// roundTrips counts Redis round trips: one per command, one per pipeline.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { r.n.Add(1); return next(ctx, cmd) }
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { r.n.Add(1); return next(ctx, cmds) }
}

// benchHosts is the number of hosts benchmark URIs spread over.
const benchHosts = 500

// benchURL is a realistic URL: about 60 bytes.
func benchURL(host, n int) string {
	return fmt.Sprintf("http://www.site-%03d.example.co.uk/section/%d/article-%07d.html", host, n%10, n)
}

func benchCand(host, n int) Candidate {
	u := benchURL(host, n)
	c := cand("x", "/", "LL", false)
	c.Launch.URL, c.Launch.ParentURL = u, benchURL(host, n/7)
	return c
}

// fill queues n URIs over benchHosts hosts, in batches of 1000.
func fill(b testing.TB, f *Frontier, start, n int) {
	b.Helper()
	batch := make([]Candidate, 0, 1000)
	for i := start; i < start+n; i++ {
		batch = append(batch, benchCand(i%benchHosts, i))
		if len(batch) == cap(batch) || i == start+n-1 {
			if _, err := f.Admit(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// BenchmarkAdmit queues new outlinks in batches of 100 (a page's links),
// four threads at a time.
func BenchmarkAdmit(b *testing.B) {
	for _, be := range backends()[:1] {
		b.Run(be.name, func(b *testing.B) {
			rdb := openBench(b, be)
			f, err := New(rdb, "bench", Options{})
			if err != nil {
				b.Fatal(err)
			}
			var next atomic.Int64
			before := commandStats(b, rdb)
			instructions := perfInstructions(b, rdb)
			b.ResetTimer()
			b.SetParallelism(2)
			b.RunParallel(func(pb *testing.PB) {
				batch := make([]Candidate, 0, 100)
				for pb.Next() {
					i := int(next.Add(1))
					batch = append(batch, benchCand(i%benchHosts, i))
					if len(batch) == cap(batch) {
						if _, err := f.Admit(context.Background(), batch); err != nil {
							b.Error(err)
							return
						}
						batch = batch[:0]
					}
				}
				if len(batch) > 0 {
					if _, err := f.Admit(context.Background(), batch); err != nil {
						b.Error(err)
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "admissions/s")
			if n := instructions(); n > 0 {
				b.ReportMetric(n/float64(b.N), "redis-instr/op")
			}
			if before != nil {
				reportCommands(b, diffCommands(before, commandStats(b, rdb)), int64(b.N))
			}
		})
	}
}

func openBench(b *testing.B, be backend) *redis.Client {
	b.Helper()
	return be.open(b)
}

// BenchmarkClaimComplete measures claim+complete cycles: 16 crawl loops,
// each claiming up to 8 URIs per call and completing every URI on its own
// through a shared Batcher, as worker threads do. It reports cycles/s and
// Redis round trips per URI. In "fair", the calls claim as one of three
// claimants in turn, as three workers do (fair.lua's cost).
func BenchmarkClaimComplete(b *testing.B) {
	for _, be := range backends() {
		b.Run(be.name, func(b *testing.B) { benchClaimComplete(b, be, false) })
		b.Run(be.name+"/fair", func(b *testing.B) { benchClaimComplete(b, be, true) })
	}
}

func benchClaimComplete(b *testing.B, be backend, fair bool) {
	rdb := openBench(b, be)
	rt := &roundTrips{}
	rdb.AddHook(rt)
	f, err := New(rdb, "bench", Options{})
	if err != nil {
		b.Fatal(err)
	}
	fill(b, f, 0, b.N)
	bt := NewBatcher(f)
	pol := testPolicy()
	rt.n.Store(0)
	var done atomic.Int64
	before := commandStats(b, rdb)
	instructions := perfInstructions(b, rdb)
	b.ResetTimer()
	var calls atomic.Int64
	crawlLoops(b, 16, func(ctx context.Context) bool {
		var who Claimant
		if fair {
			who = Claimant{ID: fmt.Sprintf("w%d", calls.Add(1)%3), Hungry: 8}
		}
		cs, _, err := f.ClaimAs(ctx, who, 8, time.Minute)
		if err != nil {
			b.Error(err)
			return false
		}
		if len(cs) == 0 {
			return done.Load() < int64(b.N)
		}
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := bt.Complete(ctx, []Outcome{{Claim: c, Status: 200, Bytes: 5000, Policy: pol}}); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		done.Add(int64(len(cs)))
		return true
	})
	b.StopTimer()
	b.ReportMetric(float64(done.Load())/b.Elapsed().Seconds(), "cycles/s")
	b.ReportMetric(float64(rt.n.Load())/float64(max(done.Load(), 1)), "roundtrips/uri")
	if n := instructions(); n > 0 {
		b.ReportMetric(n/float64(max(done.Load(), 1)), "redis-instr/op")
	}
	if before != nil {
		reportCommands(b, diffCommands(before, commandStats(b, rdb)), done.Load())
	}
}

// BenchmarkCrawlCycle is the worker's whole frontier traffic per crawled
// URI: a batched claim, the URI's outlinks admitted (ten per page, one in
// ten of them new) and its completion, both through the Batcher. It
// reports round trips per crawled URI.
func BenchmarkCrawlCycle(b *testing.B) {
	be := backends()[0]
	rdb := openBench(b, be)
	rt := &roundTrips{}
	rdb.AddHook(rt)
	f, err := New(rdb, "bench", Options{})
	if err != nil {
		b.Fatal(err)
	}
	fill(b, f, 0, b.N)
	bt := NewBatcher(f)
	pol := testPolicy()
	rt.n.Store(0)
	var done, fresh atomic.Int64
	fresh.Store(int64(b.N))
	before := commandStats(b, rdb)
	instructions := perfInstructions(b, rdb)
	b.ResetTimer()
	crawlLoops(b, 16, func(ctx context.Context) bool {
		cs, _, err := f.Claim(ctx, 8, time.Minute)
		if err != nil {
			b.Error(err)
			return false
		}
		if len(cs) == 0 {
			return done.Load() < int64(b.N)
		}
		var wg sync.WaitGroup
		for _, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				links := make([]Candidate, 10)
				for i := range links {
					n := int(fresh.Load()) - i*97 // mostly known URIs
					if i == 0 {
						n = int(fresh.Add(1)) + 1<<30 // one new URI, never claimed in this run
					}
					links[i] = benchCand(n%benchHosts, n)
				}
				if _, err := bt.Admit(ctx, links); err != nil {
					b.Error(err)
				}
				if _, err := bt.Complete(ctx, []Outcome{{Claim: c, Status: 200, Bytes: 5000, Policy: pol}}); err != nil {
					b.Error(err)
				}
			}()
		}
		wg.Wait()
		return done.Add(int64(len(cs))) < int64(b.N)
	})
	b.StopTimer()
	b.ReportMetric(float64(done.Load())/b.Elapsed().Seconds(), "uris/s")
	b.ReportMetric(float64(rt.n.Load())/float64(max(done.Load(), 1)), "roundtrips/uri")
	if n := instructions(); n > 0 {
		b.ReportMetric(n/float64(max(done.Load(), 1)), "redis-instr/op")
	}
	if before != nil {
		reportCommands(b, diffCommands(before, commandStats(b, rdb)), done.Load())
	}
}

// crawlLoops runs n loops of step until one returns false.
func crawlLoops(b *testing.B, n int, step func(context.Context) bool) {
	var wg sync.WaitGroup
	ctx := context.Background()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for step(ctx) {
			}
		}()
	}
	wg.Wait()
}

// BenchmarkMemoryPerQueuedURI queues 1,000,000 URIs (TRAWLER_BENCH_URIS
// overrides) over 500 hosts on redis-server and reports used_memory per
// queued URI from INFO memory. Run it with -benchtime=1x.
func BenchmarkMemoryPerQueuedURI(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("TRAWLER_BENCH_URIS")); err == nil && v > 0 {
		n = v
	}
	be := backends()[0]
	rdb := openBench(b, be)
	if addr := rdb.Options().Addr; !isRedisServer(rdb) {
		b.Skipf("%s is not redis-server", addr)
	}
	f, err := New(rdb, "bench", Options{})
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		before := usedMemory(b, rdb)
		start := time.Now()
		fill(b, f, 0, n)
		el := time.Since(start)
		after := usedMemory(b, rdb)
		mustEqualB(b, stats2(b, f).Queued, int64(n))
		b.ReportMetric(float64(after-before)/float64(n), "bytes/uri")
		b.ReportMetric(float64(n)/el.Seconds(), "admissions/s")
		if _, err := rdb.FlushAll(context.Background()).Result(); err != nil {
			b.Fatal(err)
		}
	}
}

func isRedisServer(rdb *redis.Client) bool {
	s, err := rdb.Info(context.Background(), "server").Result()
	return err == nil && strings.Contains(s, "redis_version")
}

func usedMemory(b *testing.B, rdb *redis.Client) int64 {
	s, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	b.Fatal("no used_memory in INFO")
	return 0
}

func stats2(b *testing.B, f *Frontier) Stats {
	st, err := f.Stats(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return st
}

func mustEqualB(b *testing.B, got, want int64) {
	if got != want {
		b.Fatalf("got %d, want %d", got, want)
	}
}

// BenchmarkQueuedByHostName reads the queued URIs of every host: the
// whole map (the hosts report's #remaining) and the top 20 host names
// (the admin API's status), over FRONTIER_BENCH_STATUS_HOSTS hosts with
// one URI queued each (default 10,000; a domain crawl has millions).
func BenchmarkQueuedByHostName(b *testing.B) {
	hosts := 10_000
	if v := os.Getenv("FRONTIER_BENCH_STATUS_HOSTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("FRONTIER_BENCH_STATUS_HOSTS=%q: want a positive number", v)
		}
		hosts = n
	}
	rdb := openBench(b, backends()[0])
	f, err := New(rdb, "bench", Options{})
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]Candidate, 0, 1000)
	for i := range hosts {
		c := cand("x", "/", "L", false)
		c.Launch.URL = fmt.Sprintf("http://host-%07d.example/", i)
		batch = append(batch, c)
		if len(batch) == cap(batch) || i == hosts-1 {
			if _, err := f.Admit(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	report := func(b *testing.B) {
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/read")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(hosts), "ns/host")
	}
	b.Run("all", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, err := f.QueuedByHostName(context.Background())
			if err != nil || len(m) != hosts {
				b.Fatalf("%d hosts read, %v; want %d", len(m), err, hosts)
			}
		}
		report(b)
	})
	b.Run("top20", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			top, err := f.TopQueuedHostNames(context.Background(), 20)
			if err != nil || len(top) != min(20, hosts) {
				b.Fatalf("%d top hosts, %v", len(top), err)
			}
		}
		report(b)
	})
}
