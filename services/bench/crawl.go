package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	pprofile "github.com/google/pprof/profile"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/services/standalone"
)

// benchProfile is cfg.Base with politeness off, cfg's threads, gzip level
// and clamd, and private addresses allowed (the site is on loopback).
func benchProfile(cfg Config) (profile.Profile, error) {
	p := cfg.Base
	p.Politeness = profile.Politeness{}
	p.Frontier.ParallelQueues = 2 * cfg.Threads
	p.Fetch.AllowPrivateAddresses = true
	p.WARC.CompressionLevel = cfg.GzipLevel
	p.ClamAV.Address = cfg.ClamdAddr
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("bench profile: %w", err)
	}
	return p, nil
}

// runStandalone runs a standalone crawl of seeds to its end.
func runStandalone(ctx context.Context, cfg Config, p profile.Profile, seeds []string, res fetch.Resolver, dataDir string, reg *prometheus.Registry) (*standalone.Summary, error) {
	return standalone.Run(ctx, standalone.Config{
		DataDir: dataDir, Seeds: seeds, UntilIdle: true, Threads: cfg.Threads, Crawl: "fc", Stream: "npld",
		KafkaListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Partitions: 1, TimeZone: "UTC",
	}, standalone.Deps{Profile: p, Resolver: res, Logger: cfg.Logger, Registry: reg, Version: "bench"})
}

// emptyCrawl measures starting and stopping a crawl with no seeds.
func emptyCrawl(ctx context.Context, cfg Config, dataDir string) (Startup, error) {
	p, err := benchProfile(cfg)
	if err != nil {
		return Startup{}, err
	}
	start, cpu0, child0 := time.Now(), processCPU(), childrenCPU()
	sum, err := runStandalone(ctx, cfg, p, nil, nil, dataDir, prometheus.NewRegistry())
	if err != nil {
		return Startup{}, fmt.Errorf("bench empty crawl: %w", err)
	}
	return Startup{Wall: time.Since(start), CPU: processCPU() - cpu0 + childrenCPU() - child0, Phases: sum.Phases}, nil
}

// crawl runs a standalone crawl of s with politeness off, under a CPU
// profile.
func crawl(ctx context.Context, cfg Config, s *site, dataDir string) (CrawlResult, error) {
	p, err := benchProfile(cfg)
	if err != nil {
		return CrawlResult{}, err
	}
	resetPeakRSS()
	if cfg.Trace != "" {
		stop, err := startTrace(cfg.Trace)
		if err != nil {
			return CrawlResult{}, err
		}
		defer stop()
	}
	if err := writeAllocs(cfg.MemProfile, ".base"); err != nil {
		return CrawlResult{}, err
	}
	var prof bytes.Buffer
	cpu0, child0, mach0 := processCPU(), childrenCPU(), machineCPU()
	if err := pprof.StartCPUProfile(&prof); err != nil {
		return CrawlResult{}, fmt.Errorf("bench cpu profile: %w", err)
	}
	reg := prometheus.NewRegistry()
	var sum *standalone.Summary
	instructions, cycles, err := countInstructions(func() (err error) {
		sum, err = runStandalone(ctx, cfg, p, s.seeds, s.resolver, dataDir, reg)
		return err
	})
	pprof.StopCPUProfile()
	r := CrawlResult{CPU: processCPU() - cpu0, ChildCPU: childrenCPU() - child0, MachineCPU: machineCPU() - mach0,
		PeakRSS: peakRSS(), Instructions: instructions, Cycles: cycles, Links: counterSum(reg, "trawler_worker_candidates_total")}
	if err != nil {
		return r, fmt.Errorf("bench crawl: %w", err)
	}
	r.Redis = sum.RedisCommands
	if err := writeAllocs(cfg.MemProfile, ""); err != nil {
		return r, err
	}
	if cfg.CPUProfile != "" {
		if err := os.WriteFile(cfg.CPUProfile, prof.Bytes(), 0o644); err != nil {
			return r, fmt.Errorf("bench: keep cpu profile: %w", err)
		}
	}
	if r.Stages, r.Top, err = stageCPU(prof.Bytes()); err != nil {
		return r, err
	}
	r.Pages, r.Window, err = crawlWindow(filepath.Join(dataDir, "logs", "fc-npld"))
	return r, err
}

// writeAllocs writes the allocation profile to name+suffix; nothing when
// name is "". The profile counts from the start of the process, so the
// crawl's own allocations are the difference of the two written.
func writeAllocs(name, suffix string) error {
	if name == "" {
		return nil
	}
	runtime.GC() // the profile is as of the last GC
	f, err := os.Create(name + suffix)
	if err != nil {
		return fmt.Errorf("bench memory profile: %w", err)
	}
	err = pprof.Lookup("allocs").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("bench memory profile %s: %w", name+suffix, err)
	}
	return nil
}

// startTrace writes an execution trace of the crawl to name, for
// finding where threads wait (go tool trace).
func startTrace(name string) (stop func(), err error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, fmt.Errorf("bench trace: %w", err)
	}
	if err := trace.Start(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("bench trace: %w", err)
	}
	return func() { trace.Stop(); _ = f.Close() }, nil
}

// topFuncs is how many functions Report.Print lists.
const topFuncs = 5

// stageCPU sums the profile's CPU samples by their "stage" label, and
// returns the functions with the most flat CPU.
func stageCPU(b []byte) (map[string]time.Duration, []FuncCPU, error) {
	prof, err := pprofile.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, nil, fmt.Errorf("bench: parse cpu profile: %w", err)
	}
	idx := -1
	for i, st := range prof.SampleType {
		if st.Type == "cpu" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, nil, fmt.Errorf("bench: cpu profile has no cpu samples")
	}
	out := map[string]time.Duration{}
	flat := map[string]time.Duration{}
	for _, s := range prof.Sample {
		stage := "other"
		if v := s.Label["stage"]; len(v) > 0 {
			stage = v[0]
		}
		out[stage] += time.Duration(s.Value[idx])
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 && s.Location[0].Line[0].Function != nil {
			flat[s.Location[0].Line[0].Function.Name] += time.Duration(s.Value[idx])
		}
	}
	top := make([]FuncCPU, 0, len(flat))
	for name, d := range flat {
		top = append(top, FuncCPU{Name: name, CPU: d})
	}
	sort.Slice(top, func(i, j int) bool {
		return top[i].CPU > top[j].CPU || top[i].CPU == top[j].CPU && top[i].Name < top[j].Name
	})
	return out, top[:min(len(top), topFuncs)], nil
}

// crawlWindow reads crawl.log: the fetched pages (an HTTP status, not a
// DNS lookup) and the time from the first fetch start to the last line.
func crawlWindow(dir string) (pages int, window time.Duration, err error) {
	files, _ := filepath.Glob(filepath.Join(dir, "crawl.log*"))
	var first, last time.Time
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return 0, 0, fmt.Errorf("bench: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fl := strings.Fields(sc.Text())
			if len(fl) < 9 {
				continue
			}
			logged, err1 := time.Parse("2006-01-02T15:04:05.000Z", fl[0])
			status, err2 := strconv.Atoi(fl[1])
			if err1 != nil || err2 != nil {
				continue
			}
			if status > 0 && !strings.HasPrefix(fl[3], "dns:") {
				pages++
			}
			if logged.After(last) {
				last = logged
			}
			if start := fl[8]; strings.IndexByte(start, '+') == 17 {
				t, err := time.Parse("20060102150405.000", start[:14]+"."+start[14:17])
				if err == nil && (first.IsZero() || t.Before(first)) {
					first = t
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return 0, 0, fmt.Errorf("bench: read %s: %w", name, err)
		}
	}
	if pages == 0 {
		return 0, 0, fmt.Errorf("bench: crawl.log in %s has no fetched pages", dir)
	}
	return pages, last.Sub(first), nil
}

func processCPU() time.Duration { return rusage(syscall.RUSAGE_SELF) }

// childrenCPU is what the process's ended and waited-for children used:
// a standalone crawl's redis-server once the crawl has stopped it.
func childrenCPU() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// counterSum adds up every series of the counter family name in reg.
func counterSum(reg *prometheus.Registry, name string) int {
	mfs, err := reg.Gather()
	if err != nil {
		return 0
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return int(sum)
}

// machineCPU is the busy time of all CPUs from /proc/stat (0 elsewhere).
func machineCPU() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return time.Duration(busy) * (time.Second / 100) // USER_HZ
}

// resetPeakRSS restarts the kernel's high-water mark (VmHWM), so the peak
// read after the crawl is the crawl's own.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
