package frontier

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/redisconn"
)

// Redis spends most of a crawl's frontier time inside the scripts, and
// each redis.call has a fixed cost, so the benchmarks report the commands
// the scripts run per crawled URI (from INFO commandstats, which counts
// commands called from Lua too) beside the time spent in EVALSHA.

// cmdStat is one command's line of INFO commandstats.
type cmdStat struct{ calls, usec int64 }

// commandStats reads INFO commandstats; nil when the server has none
// (miniredis).
func commandStats(tb testing.TB, rdb *redis.Client) map[string]cmdStat {
	tb.Helper()
	stats, err := redisconn.CommandStats(context.Background(), rdb)
	if err != nil || len(stats) == 0 {
		return nil
	}
	out := make(map[string]cmdStat, len(stats))
	for _, st := range stats {
		out[st.Name] = cmdStat{calls: st.Calls, usec: st.Usec}
	}
	return out
}

// clientCommands are sent by the Go side or the benchmark itself, not by
// the scripts.
var clientCommands = map[string]bool{"evalsha": true, "eval": true, "script": true, "info": true, "ping": true, "hello": true, "client": true}

// commandDelta is what ran between two commandstats snapshots: per command
// of the scripts, and in total; EVALSHA calls and their time.
type commandDelta struct {
	byCmd               map[string]int64
	total, evals, usecs int64
}

func diffCommands(before, after map[string]cmdStat) commandDelta {
	d := commandDelta{byCmd: map[string]int64{}}
	for name, a := range after {
		n := a.calls - before[name].calls
		switch {
		case name == "evalsha":
			d.evals, d.usecs = n, a.usec-before[name].usec
		case n > 0 && !clientCommands[name]:
			d.byCmd[name] = n
			d.total += n
		}
	}
	return d
}

// reportCommands reports the delta per op: "calls/op" for all script
// commands, "<command>/op" for each, "evalsha/op" and "evalsha-us/op".
func reportCommands(b *testing.B, d commandDelta, ops int64) {
	b.Helper()
	if ops <= 0 {
		return
	}
	per := func(n int64) float64 { return float64(n) / float64(ops) }
	names := make([]string, 0, len(d.byCmd))
	for name := range d.byCmd {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b.ReportMetric(per(d.byCmd[name]), name+"/op")
	}
	b.ReportMetric(per(d.total), "calls/op")
	b.ReportMetric(per(d.evals), "evalsha/op")
	b.ReportMetric(per(d.usecs), "evalsha-us/op")
}

// perfInstructions counts the instructions the redis-server behind rdb
// runs until the returned function is called, with perf stat, when
// TRAWLER_BENCH_PERF is set: unlike times, the count does not vary with
// the load on a shared machine. The function returns 0 when not counting.
func perfInstructions(tb testing.TB, rdb *redis.Client) func() float64 {
	tb.Helper()
	none := func() float64 { return 0 }
	if os.Getenv("TRAWLER_BENCH_PERF") == "" {
		return none
	}
	pid := serverPID(rdb)
	cmd := exec.Command("perf", "stat", "-x,", "-e", "instructions", "-p", pid)
	var out bytes.Buffer
	cmd.Stderr = &out
	if pid == "" || cmd.Start() != nil {
		tb.Log("perf stat unavailable: not counting instructions")
		return none
	}
	time.Sleep(300 * time.Millisecond) // perf attaches asynchronously
	return func() float64 {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Split(line, ","); len(f) > 2 && strings.HasPrefix(f[2], "instructions") {
				n, _ := strconv.ParseFloat(f[0], 64)
				return n
			}
		}
		return 0
	}
}

// serverPID is the process id of the redis-server behind rdb, "" if
// unknown.
func serverPID(rdb *redis.Client) string {
	info, err := rdb.Info(context.Background(), "server").Result()
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return v
		}
	}
	return ""
}

// perfRecord samples the call stacks of the redis-server behind rdb into
// $FRONTIER_BENCH_PERF_RECORD/name.data with perf record (cpu-clock, so
// it works where hardware counters do not) until the returned function
// is called; nothing when that variable is unset. With a redis-server
// built with symbols first in PATH, perf report shows where a window's
// server time went.
func perfRecord(tb testing.TB, rdb *redis.Client, name string) func() {
	tb.Helper()
	dir := os.Getenv("FRONTIER_BENCH_PERF_RECORD")
	pid := serverPID(rdb)
	if dir == "" || pid == "" {
		return func() {}
	}
	cmd := exec.Command("perf", "record", "-e", "cpu-clock", "-F", "499", "-g", "-p", pid,
		"-o", filepath.Join(dir, name+".data"))
	if err := cmd.Start(); err != nil {
		tb.Logf("perf record unavailable: %v", err)
		return func() {}
	}
	time.Sleep(300 * time.Millisecond) // perf attaches asynchronously
	return func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
}

// BenchmarkCrawlSteps is BenchmarkCrawlCycle without concurrency, so that
// the Redis commands per crawled URI are the same on every run: one loop
// on a fixed clock claims batch URIs, admits the ten outlinks of each of
// those pages in one call and completes them in one call, as the Batcher
// does under load (batch=8) or when idle (batch=1). Outlinks: one new URI
// per page, nine already known.
func BenchmarkCrawlSteps(b *testing.B) {
	for _, batch := range []int{1, 8} {
		b.Run("batch="+strconv.Itoa(batch), func(b *testing.B) {
			rdb := backends()[0].open(b)
			ck := newClock()
			f, err := New(rdb, "bench", Options{Now: ck.now})
			if err != nil {
				b.Fatal(err)
			}
			fill(b, f, 0, b.N)
			pol := testPolicy()
			ctx := context.Background()
			fresh := b.N
			before := commandStats(b, rdb)
			instructions := perfInstructions(b, rdb)
			b.ResetTimer()
			for done := 0; done < b.N; {
				cs, _, err := f.Claim(ctx, min(batch, b.N-done), time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				if len(cs) == 0 {
					b.Fatalf("nothing to claim after %d of %d", done, b.N)
				}
				var links []Candidate
				outs := make([]Outcome, len(cs))
				for k, c := range cs {
					fresh++
					for i := range 10 {
						n := fresh - i*97
						if i == 0 {
							n = fresh + 1<<30
						}
						links = append(links, benchCand(n%benchHosts, n))
					}
					outs[k] = Outcome{Claim: c, Status: 200, Bytes: 5000, Policy: pol}
				}
				if _, err := f.Admit(ctx, links); err != nil {
					b.Fatal(err)
				}
				if _, err := f.Complete(ctx, outs); err != nil {
					b.Fatal(err)
				}
				done += len(cs)
				ck.add(time.Millisecond)
			}
			b.StopTimer()
			if n := instructions(); n > 0 {
				b.ReportMetric(n/float64(b.N), "redis-instr/op")
			}
			if before != nil {
				reportCommands(b, diffCommands(before, commandStats(b, rdb)), int64(b.N))
			}
		})
	}
}
