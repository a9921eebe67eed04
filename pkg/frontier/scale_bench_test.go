package frontier

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/redisconf"
)

// The scale benchmark answers whether the frontier keeps its speed as it
// grows to a domain crawl's size: it admits URIs over many hosts into one
// redis-server and measures admission and claim+complete rates once a
// tenth of them is queued and again once all are, with the domain crawl's
// Bloom filter sized for 500M URIs. docs/frontier.md, Sizing.

// scaleConfig is one run of the scale benchmark.
type scaleConfig struct {
	uris, hosts int
	// window is how many admissions each admission rate is measured over:
	// the first window and the last.
	window int
	// cycles is how many claim+complete cycles each rate is measured over.
	cycles int
	// bloomURIs and bloomFP size the Bloom filter.
	bloomURIs int64
	bloomFP   float64
}

// scaleResult holds the figures of a run.
type scaleResult struct {
	admitFirst, admitLast   float64 // admissions/s over the first and last window
	cycleFirst, cycleLast   float64 // claim+complete cycles/s at a tenth and at all queued
	queuedFirst, queuedLast int64
	bytesPerURI             float64 // used_memory per queued URI, Bloom bitmaps excluded
	// bytesPerURISettled is the same once clients' buffers are freed;
	// bytesPerURIAlloc less the Bloom bitmaps' allocations (MEMORY
	// USAGE) rather than their lengths.
	bytesPerURISettled, bytesPerURIAlloc float64
	bloomBytes                           int64   // the Bloom bitmaps in Redis
	bloomBitsPerURI                      float64 // of the expected URIs
	evalUsFirst, evalUsLast              map[string]float64
	// byKind is MEMORY USAGE per queued URI by key kind (q, x, h, ...).
	byKind map[string]float64
	// memStats is MEMORY STATS per queued URI: what used_memory holds
	// beside the keys (client buffers, the main dict, scripts).
	memStats map[string]float64
	// Per claim+complete cycle and per admission: redis-server CPU µs
	// (INFO cpu) and, with TRAWLER_BENCH_PERF=1, instructions (perf
	// stat), which unlike times do not vary with the machine's load.
	cycleCPUFirst, cycleCPULast, admitCPUFirst, admitCPULast float64
	// calibFirst and calibLast are redis-server's CPU ms for a fixed Lua
	// loop that touches no keys, just before each claim+complete window:
	// they tell the machine's drift (this VM's speed moves by tens of
	// percent within minutes) from what the dataset's size costs.
	calibFirst, calibLast                                            float64
	cycleInstrFirst, cycleInstrLast, admitInstrFirst, admitInstrLast float64
	// The same for this process (the frontier's Go side: codecs, blocks,
	// batching), CPU µs.
	cycleClientFirst, cycleClientLast, admitClientFirst, admitClientLast float64
	// cmdFirst and cmdLast are redis-server's µs and calls per cycle by
	// command (commands scripts run included), for what grows with size.
	cmdFirst, cmdLast map[string]string
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkFrontierScale admits FRONTIER_BENCH_URIS (default 10,000,000)
// URIs over FRONTIER_BENCH_HOSTS (default one per 100 URIs) into a
// redis-server without persistence, in Bloom mode sized for
// FRONTIER_BENCH_BLOOM_URIS (default 500,000,000) at 10^-4, and reports
// memory per queued URI, the Bloom filter's bytes, and admission and
// claim+complete rates at a tenth and at all of the URIs. Run it with
// -benchtime=1x; the full size takes several minutes and about 4 GB.
func BenchmarkFrontierScale(b *testing.B) {
	n := envInt("FRONTIER_BENCH_URIS", 10_000_000)
	cfg := scaleConfig{
		uris: n, hosts: envInt("FRONTIER_BENCH_HOSTS", max(n/100, 1)),
		window: max(n/10, 1), cycles: envInt("FRONTIER_BENCH_CYCLES", min(max(n/50, 1), 200_000)),
		bloomURIs: int64(envInt("FRONTIER_BENCH_BLOOM_URIS", 500_000_000)), bloomFP: 1e-4,
	}
	for range b.N {
		r := runScale(b, cfg)
		b.ReportMetric(r.bytesPerURI, "bytes/queued-uri")
		b.ReportMetric(r.bytesPerURISettled, "bytes/queued-uri-settled")
		b.ReportMetric(r.bytesPerURIAlloc, "bytes/queued-uri-alloc")
		b.ReportMetric(float64(r.bloomBytes)/float64(cfg.bloomURIs), "bloom-bytes/uri")
		b.ReportMetric(r.bloomBitsPerURI, "bloom-bits/uri")
		b.ReportMetric(r.admitFirst, "admit/s@10%")
		b.ReportMetric(r.admitLast, "admit/s@100%")
		b.ReportMetric(r.cycleFirst, "cycles/s@10%")
		b.ReportMetric(r.cycleLast, "cycles/s@100%")
		b.Logf("%d URIs over %d hosts: %.0f bytes per queued URI (%d queued), Bloom %d bytes for %d URIs (%.2f bits/URI); "+
			"admissions/s %.0f at %d, %.0f at %d (%+.1f%%); claim+complete/s %.0f at %d queued, %.0f at %d queued (%+.1f%%)",
			cfg.uris, cfg.hosts, r.bytesPerURI, r.queuedLast, r.bloomBytes, cfg.bloomURIs, r.bloomBitsPerURI,
			r.admitFirst, cfg.window, r.admitLast, cfg.uris, pct(r.admitFirst, r.admitLast),
			r.cycleFirst, r.queuedFirst, r.cycleLast, r.queuedLast, pct(r.cycleFirst, r.cycleLast))
		b.Logf("EVALSHA µs per call at 10%%: %v; at 100%%: %v", r.evalUsFirst, r.evalUsLast)
		b.Logf("MEMORY USAGE per queued URI by key kind: %v", r.byKind)
		b.Logf("MEMORY STATS per queued URI: %v; used_memory per queued URI once clients' buffers are freed: %.1f, less the Bloom bitmaps' allocations (not lengths): %.1f",
			r.memStats, r.bytesPerURISettled, r.bytesPerURIAlloc)
		b.Logf("redis-server per admission: %.1f then %.1f CPU µs, %.0f then %.0f instructions; per claim+complete: %.1f then %.1f CPU µs, %.0f then %.0f instructions",
			r.admitCPUFirst, r.admitCPULast, r.admitInstrFirst, r.admitInstrLast, r.cycleCPUFirst, r.cycleCPULast, r.cycleInstrFirst, r.cycleInstrLast)
		b.Logf("this process (the frontier's Go side) per admission: %.1f then %.1f CPU µs; per claim+complete: %.1f then %.1f",
			r.admitClientFirst, r.admitClientLast, r.cycleClientFirst, r.cycleClientLast)
		b.Logf("redis-server µs/calls per claim+complete by command at 10%%: %v; at 100%%: %v", r.cmdFirst, r.cmdLast)
		b.Logf("calibration (a Lua loop touching no keys, redis-server main thread CPU ms) before the claim+complete windows: %.1f then %.1f (%+.1f%%); "+
			"claim+complete/s at the calibration's speed: %+.1f%%",
			r.calibFirst, r.calibLast, pct(r.calibFirst, r.calibLast), pct(r.cycleFirst, r.cycleLast*r.calibLast/r.calibFirst))
	}
}

// calibrate is the median of five runs of a fixed Lua loop in
// redis-server, in its main thread's CPU ms: the same work whatever the
// dataset holds. It is not the machine's drift alone: on a bare
// redis-server the loop took 23% longer beside 2.5 GB of DEBUG POPULATE
// keys than in an empty server (28.5 against 35 ms).
func calibrate(tb testing.TB, rdb *redis.Client) float64 {
	tb.Helper()
	const loop = `local s = 0
for i = 1, 2000000 do s = s + (i % 7) * 3 end
local t = {}
for i = 1, 20000 do t[#t + 1] = tostring(i) .. 'x' end
return s`
	var ms []float64
	for range 5 {
		main := []string{"used_cpu_sys_main_thread", "used_cpu_user_main_thread"}
		cpu0 := infoCPU(tb, rdb, main...)
		if err := rdb.Eval(context.Background(), loop, nil).Err(); err != nil {
			tb.Fatalf("calibrate: %v", err)
		}
		ms = append(ms, (infoCPU(tb, rdb, main...)-cpu0)*1e3)
	}
	slices.Sort(ms)
	return ms[len(ms)/2]
}

// TestFrontierScaleSmoke keeps the scale benchmark working at a tiny size
// (the CI smoke run; it checks no rates, since the machine is shared).
func TestFrontierScaleSmoke(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("no redis-server")
	}
	r := runScale(t, scaleConfig{uris: 20_000, hosts: 200, window: 2_000, cycles: 500, bloomURIs: 1_000_000, bloomFP: 1e-4})
	if r.bytesPerURI <= 0 || r.bytesPerURI > 1000 || r.bloomBytes <= 0 || r.admitLast <= 0 || r.cycleLast <= 0 {
		t.Fatalf("implausible figures: %+v", r)
	}
}

func pct(first, last float64) float64 { return 100 * (last - first) / first }

// scaleURL is a URL of host h, about 60 bytes; n numbers it in the crawl.
func scaleURL(h, n int) string {
	return fmt.Sprintf("http://www.site-%06d.example.co.uk/section/%d/article-%08d.html", h, n%10, n)
}

func scaleCand(hosts, n int) Candidate {
	h := n % hosts
	c := cand("x", "/", "LL", false)
	c.Launch.URL, c.Launch.ParentURL = scaleURL(h, n), scaleURL(h, n/7)
	return c
}

func runScale(tb testing.TB, cfg scaleConfig) scaleResult {
	tb.Helper()
	rdb := startBareRedis(tb)
	f, err := New(rdb, "bench", Options{SeenFilter: profile.SeenBloom, BloomExpectedURIs: cfg.bloomURIs, BloomFalsePositiveRate: cfg.bloomFP})
	if err != nil {
		tb.Fatal(err)
	}
	var r scaleResult
	base := usedMemoryTB(tb, rdb)
	bt := NewBatcher(f)

	var el time.Duration
	r.admitCPUFirst, r.admitInstrFirst, r.admitClientFirst = serverCost(tb, rdb, "admit-first", cfg.window, func() {
		el = admitRange(tb, bt, cfg.hosts, 0, cfg.window)
	})
	r.admitFirst = float64(cfg.window) / el.Seconds()
	r.queuedFirst = mustStats(tb, f).Queued
	r.calibFirst = calibrate(tb, rdb)
	before := commandStats(tb, rdb)
	r.cycleCPUFirst, r.cycleInstrFirst, r.cycleClientFirst = serverCost(tb, rdb, "cycle-first", cfg.cycles, func() {
		r.cycleFirst = claimComplete(tb, f, bt, cfg.cycles)
	})
	after := commandStats(tb, rdb)
	r.evalUsFirst, r.cmdFirst = evalUs(before, after), cmdPerOp(before, after, cfg.cycles)

	if rest := cfg.uris - 2*cfg.window; rest > 0 {
		admitRange(tb, bt, cfg.hosts, cfg.window, cfg.window+rest)
	}
	start := max(cfg.uris-cfg.window, cfg.window)
	r.admitCPULast, r.admitInstrLast, r.admitClientLast = serverCost(tb, rdb, "admit-last", cfg.uris-start, func() {
		el = admitRange(tb, bt, cfg.hosts, start, cfg.uris)
	})
	r.admitLast = float64(cfg.uris-start) / el.Seconds()

	st := mustStats(tb, f)
	r.queuedLast = st.Queued
	r.bloomBytes = bloomBytesIn(tb, rdb, f)
	r.bytesPerURI = float64(usedMemoryTB(tb, rdb)-base-r.bloomBytes) / float64(st.Queued)
	r.memStats = memoryStats(tb, rdb, st.Queued)
	// Clients' buffers of the last calls are freed by Redis's cron once
	// the clients idle: used_memory again once they are.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if memoryStats(tb, rdb, 1)["clients.normal"] < 1<<20 {
			break
		}
	}
	used := usedMemoryTB(tb, rdb)
	r.bytesPerURISettled = float64(used-base-r.bloomBytes) / float64(st.Queued)
	r.byKind = memoryByKind(tb, rdb, st.Queued)
	// The bitmaps' allocations exceed their length by what the
	// allocator rounds up (its size classes are 128 MB apart at 512 MB),
	// which differs from run to run: used_memory less the allocations is
	// what the queued URIs cost.
	r.bytesPerURIAlloc = (float64(used-base) - r.byKind["bloom"]*float64(st.Queued)) / float64(st.Queued)
	r.bloomBitsPerURI = float64(f.bloom.m) / float64(cfg.bloomURIs)
	r.calibLast = calibrate(tb, rdb)
	before = commandStats(tb, rdb)
	r.cycleCPULast, r.cycleInstrLast, r.cycleClientLast = serverCost(tb, rdb, "cycle-last", cfg.cycles, func() {
		r.cycleLast = claimComplete(tb, f, bt, cfg.cycles)
	})
	after = commandStats(tb, rdb)
	r.evalUsLast, r.cmdLast = evalUs(before, after), cmdPerOp(before, after, cfg.cycles)
	return r
}

// memoryStats is MEMORY STATS's byte counts per queued URI.
func memoryStats(tb testing.TB, rdb *redis.Client, queued int64) map[string]float64 {
	tb.Helper()
	v, err := rdb.Do(context.Background(), "MEMORY", "STATS").Result()
	if err != nil {
		tb.Fatalf("memory stats: %v", err)
	}
	out := map[string]float64{}
	add := func(k, n any) {
		name, _ := k.(string)
		if b, ok := n.(int64); ok && (b > 1<<20 && !strings.HasPrefix(name, "keys.") || name == "clients.normal") {
			out[name] = float64(int(float64(b)/float64(max(queued, 1))*10)) / 10
		}
	}
	switch m := v.(type) {
	case map[any]any: // RESP3
		for k, n := range m {
			add(k, n)
		}
	case []any:
		for i := 0; i+1 < len(m); i += 2 {
			add(m[i], m[i+1])
		}
	}
	return out
}

// memoryByKind sums MEMORY USAGE over every key by its kind, the part of
// the name after the shard's tag up to the next colon, per queued URI.
func memoryByKind(tb testing.TB, rdb *redis.Client, queued int64) map[string]float64 {
	tb.Helper()
	ctx := context.Background()
	out := map[string]float64{}
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		_, kind, _ := strings.Cut(k, "}:")
		kind, _, _ = strings.Cut(kind, ":")
		n, err := rdb.MemoryUsage(ctx, k).Result()
		if err != nil {
			tb.Fatalf("memory usage %s: %v", k, err)
		}
		out[kind] += float64(n) / float64(max(queued, 1))
	}
	if err := iter.Err(); err != nil {
		tb.Fatal(err)
	}
	for k, v := range out {
		out[k] = float64(int(v*10)) / 10
	}
	return out
}

// admitRange admits URIs [from, to) as the worker does: pages' outlinks
// (batches of 50) from several threads through the Batcher.
func admitRange(tb testing.TB, bt *Batcher, hosts, from, to int) time.Duration {
	tb.Helper()
	const threads, page = 8, 50
	var next atomic.Int64
	next.Store(int64(from))
	var wg sync.WaitGroup
	start := time.Now()
	for range threads {
		wg.Go(func() {
			batch := make([]Candidate, 0, page)
			for {
				i := int(next.Add(page)) - page
				if i >= to {
					return
				}
				batch = batch[:0]
				for n := i; n < min(i+page, to); n++ {
					batch = append(batch, scaleCand(hosts, n))
				}
				res, err := bt.Admit(context.Background(), batch)
				if err != nil {
					tb.Error(err)
					return
				}
				for _, a := range res {
					if a.Err != nil {
						tb.Error(a.Err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	if tb.Failed() {
		tb.FailNow()
	}
	return el
}

// claimComplete runs n claim+complete cycles as BenchmarkClaimComplete
// does (16 loops claiming 8 at a time, completions through the Batcher)
// and returns cycles/s.
func claimComplete(tb testing.TB, f *Frontier, bt *Batcher, n int) float64 {
	tb.Helper()
	pol := testPolicy()
	var done, claimed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range 16 {
		wg.Go(func() {
			ctx := context.Background()
			deadline := time.Now().Add(time.Minute)
			for claimed.Load() < int64(n) {
				cs, wait, err := f.Claim(ctx, 8, time.Minute)
				if err != nil {
					tb.Error(err)
					return
				}
				// On a small frontier every ready host can be leased by
				// the other loops for a moment; the claim then says when
				// to ask again.
				if len(cs) == 0 {
					if wait == Idle || time.Now().After(deadline) {
						tb.Errorf("nothing to claim after %d of %d (wait %v)", done.Load(), n, wait)
						return
					}
					time.Sleep(max(wait, time.Millisecond)) // polling the frontier with a deadline
					continue
				}
				claimed.Add(int64(len(cs)))
				var cwg sync.WaitGroup
				for _, c := range cs {
					cwg.Go(func() {
						if _, err := bt.Complete(ctx, []Outcome{{Claim: c, Status: 200, Bytes: 5000, Policy: pol}}); err != nil {
							tb.Error(err)
						}
					})
				}
				cwg.Wait()
				done.Add(int64(len(cs)))
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	if tb.Failed() {
		tb.FailNow()
	}
	return float64(done.Load()) / el.Seconds()
}

// serverCost runs fn and returns redis-server's CPU µs and instructions
// (0 unless counted) per op over it, and this process's CPU µs.
func serverCost(tb testing.TB, rdb *redis.Client, name string, ops int, fn func()) (cpuUs, instr, clientUs float64) {
	tb.Helper()
	cpu0, self0 := serverCPU(tb, rdb), selfCPU(tb)
	count := perfInstructions(tb, rdb)
	stop := perfRecord(tb, rdb, name)
	fn()
	stop()
	instr = count() / float64(ops)
	clientUs = (selfCPU(tb) - self0) * 1e6 / float64(ops)
	return (serverCPU(tb, rdb) - cpu0) * 1e6 / float64(ops), instr, clientUs
}

// selfCPU is this process's CPU seconds so far.
func selfCPU(tb testing.TB) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// cmdPerOp is redis-server's µs and calls per op by command between two
// commandstats snapshots (the commands scripts run counted apart from
// the EVALSHA that ran them), for those taking 0.5 µs an op or more.
func cmdPerOp(before, after map[string]cmdStat, ops int) map[string]string {
	out := map[string]string{}
	for name, a := range after {
		b := before[name]
		if us := float64(a.usec-b.usec) / float64(ops); us >= 0.5 {
			out[name] = fmt.Sprintf("%.1fµs/%.2f", us, float64(a.calls-b.calls)/float64(ops))
		}
	}
	return out
}

// serverCPU is redis-server's CPU seconds so far, from INFO cpu: all its
// threads (the allocator's purging thread works for the commands too).
func serverCPU(tb testing.TB, rdb *redis.Client) float64 {
	return infoCPU(tb, rdb, "used_cpu_sys", "used_cpu_user")
}

// infoCPU sums the named INFO cpu fields.
func infoCPU(tb testing.TB, rdb *redis.Client, fields ...string) float64 {
	tb.Helper()
	s, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(s, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if slices.Contains(fields, k) {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total
}

// evalUs is the mean EVALSHA time in µs between two commandstats
// snapshots, per script command and in total, so a script that slows down
// with size shows which.
func evalUs(before, after map[string]cmdStat) map[string]float64 {
	out := map[string]float64{}
	for name, a := range after {
		b := before[name]
		if n := a.calls - b.calls; n > 0 && (name == "evalsha" || !clientCommands[name]) {
			out[name] = float64(a.usec-b.usec) / float64(n)
		}
	}
	return out
}

// bloomBytesIn is the memory of the shard's Bloom bitmaps (SETBIT grows a
// string up to the highest bit set, so a filter is whole after a few
// admissions).
func bloomBytesIn(tb testing.TB, rdb *redis.Client, f *Frontier) int64 {
	tb.Helper()
	var total int64
	for i := uint64(0); i*f.bloom.chunk < f.bloom.m; i++ {
		n, err := rdb.StrLen(context.Background(), f.prefixes[0]+"bloom:"+strconv.FormatUint(i, 10)).Result()
		if err != nil {
			tb.Fatal(err)
		}
		total += n
	}
	return total
}

func mustStats(tb testing.TB, f *Frontier) Stats {
	tb.Helper()
	st, err := f.Stats(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func usedMemoryTB(tb testing.TB, rdb *redis.Client) int64 {
	tb.Helper()
	s, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	tb.Fatal("no used_memory in INFO")
	return 0
}

// startBareRedis runs redis-server on loopback without persistence (the
// benchmark measures the frontier, not the disk), with the listpack limit
// the embedded server and compose use, and stops it at cleanup.
func startBareRedis(tb testing.TB) *redis.Client {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		tb.Skip("no redis-server")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	// FRONTIER_BENCH_REDIS_ARGS adds to (and overrides) the frontier's
	// settings, to see what each is worth, e.g. "--list-compress-depth 0".
	cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", port, "--dir", tb.TempDir(),
		"--save", "", "--appendonly", "no", "--logfile", "")
	cmd.Args = append(cmd.Args, redisconf.Args()...)
	cmd.Args = append(cmd.Args, strings.Fields(os.Getenv("FRONTIER_BENCH_REDIS_ARGS"))...)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64})
	tb.Cleanup(func() { _ = rdb.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for rdb.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server on %s not answering", addr)
		}
		time.Sleep(20 * time.Millisecond) // polling PING with a deadline
	}
	return rdb
}
