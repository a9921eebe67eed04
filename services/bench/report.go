package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// stageOrder lists the worker's stages in pipeline order, then the other
// roles of a standalone process.
var stageOrder = []string{"precondition", "fetch", "scan", "extract", "dedup", "warc", "outlinks", "admit", "publish",
	"frontier", "worker", "index", "provenance", "broker", "render", "other"}

// Print writes the report as a table.
func (r *Report) Print(w io.Writer) {
	c, b := r.Crawl, r.Baseline
	if r.Levels > 0 {
		fmt.Fprintf(w, "site %s: %d URLs in %d levels\n", r.Site, r.URLs, r.Levels)
	} else {
		fmt.Fprintf(w, "site %s: %d URLs\n", r.Site, r.URLs)
	}
	fmt.Fprintf(w, "%-9s %8s %10s %14s %18s %10s\n", "", "pages", "pages/s", "CPU-µs/page", "machine-µs/page", "peak RSS")
	for i, run := range r.Baselines {
		fmt.Fprintf(w, "%-9s %8d %10.0f %14.0f %18s %10s\n", fmt.Sprintf("base #%d", i+1), run.Pages, run.PagesPerSec, run.CPUMicrosPerPage, "-", "-")
	}
	fmt.Fprintf(w, "%-9s %8d %10.0f %14.0f %18s %10s\n", "baseline", b.Pages, b.PagesPerSec, b.CPUMicrosPerPage, "-", "-")
	fmt.Fprintf(w, "%-9s %8d %10.0f %14.0f %18.0f %9.0fM\n", "trawler", c.Pages, c.PagesPerSec(),
		perPage(r.crawlCPU(), c.Pages), perPage(c.MachineCPU, c.Pages), float64(c.PeakRSS)/(1<<20))
	fmt.Fprintf(w, "start-up and stop of an empty crawl: %s wall, %s CPU (taken off the crawl's CPU above)%s\n",
		r.Startup.Wall.Round(time.Millisecond), r.Startup.CPU.Round(time.Millisecond), r.Startup.phases())
	fmt.Fprintf(w, "crawl CPU: process %s + redis-server %s - start-up %s = %s; %.1f µs per link (%d links, %.1f per page); site process %s (baseline's %s), on neither side\n",
		c.CPU.Round(time.Millisecond), c.ChildCPU.Round(time.Millisecond), r.Startup.CPU.Round(time.Millisecond),
		r.crawlCPU().Round(time.Millisecond), perPage(r.crawlCPU(), c.Links), c.Links, float64(c.Links)/float64(max(c.Pages, 1)),
		c.SiteCPU.Round(time.Millisecond), r.BaselineSiteCPU.Round(time.Millisecond))
	if b.PagesPerSec > 0 {
		fmt.Fprintf(w, "trawler/baseline: %.0f%% of the baseline's pages/s, %.0f%% of its CPU-µs/page (crawl window %s)\n",
			100*r.RateRatio(), 100*r.CPURatio(), c.Window.Round(time.Millisecond))
		fmt.Fprintf(w, "time ratio: the crawl took %.2fx the baseline's one pass over the known URL list (%s), start-up (%s) not counted; %.2f cores busy on average (crawl CPU over the crawl window)\n",
			r.TimeRatio(), r.onePass().Round(time.Millisecond), r.Startup.Wall.Round(time.Millisecond), r.crawlCPU().Seconds()/c.Window.Seconds())
	}
	r.printInstructions(w)
	fmt.Fprintf(w, "CPU-µs per page by stage (profiled):")
	names := make([]string, 0, len(c.Stages))
	for n := range c.Stages {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return rank(names[i]) < rank(names[j]) })
	for _, n := range names {
		fmt.Fprintf(w, " %s %.0f", n, perPage(c.Stages[n], c.Pages))
	}
	fmt.Fprintln(w)
	if len(c.Top) > 0 {
		fmt.Fprintf(w, "top functions (flat CPU-µs per page):")
		for _, f := range c.Top {
			fmt.Fprintf(w, " %s %.0f;", f.Name, perPage(f.CPU, c.Pages))
		}
		fmt.Fprintln(w)
	}
	c.printRedis(w)
}

// phases says where an empty crawl's wall time went: ": checks 1ms,
// cluster 120ms, ..., then 60ms to stop the broker and Redis".
func (s Startup) phases() string {
	if len(s.Phases) == 0 {
		return ""
	}
	var b strings.Builder
	var sum time.Duration
	for i, p := range s.Phases {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%s %s", sep, p.Name, p.Took.Round(time.Millisecond))
		sum += p.Took
	}
	fmt.Fprintf(&b, ", then %s to stop the broker and Redis", (s.Wall - sum).Round(time.Millisecond))
	return b.String()
}

// printRedis prints the busiest Redis commands per page: calls and
// server µs (a script's commands are inside its evalsha's time too).
func (c CrawlResult) printRedis(w io.Writer) {
	if len(c.Redis) == 0 || c.Pages == 0 {
		return
	}
	fmt.Fprintf(w, "redis-server per page (calls, µs):")
	for i, st := range c.Redis {
		if i == 8 {
			break
		}
		fmt.Fprintf(w, " %s %.1f %.0f;", st.Name, float64(st.Calls)/float64(c.Pages), float64(st.Usec)/float64(c.Pages))
	}
	fmt.Fprintln(w)
}

// printInstructions prints the perf counters' figures when there are any.
func (r *Report) printInstructions(w io.Writer) {
	c, b := r.Crawl, r.Baseline
	if r.BaselineInstructions == 0 || c.Instructions == 0 || b.Pages == 0 || c.Pages == 0 {
		return
	}
	bi, ci := float64(r.BaselineInstructions)/float64(b.Pages), float64(c.Instructions)/float64(c.Pages)
	fmt.Fprintf(w, "machine instructions per page (all CPUs, perf counters): baseline %.0fk, trawler %.0fk (%.0f%%)\n",
		bi/1000, ci/1000, 100*ci/bi)
	bc, cc := float64(r.BaselineCycles)/float64(b.Pages), float64(c.Cycles)/float64(c.Pages)
	if bc > 0 && cc > 0 {
		fmt.Fprintf(w, "machine cycles per page: baseline %.0fk, trawler %.0fk (%.0f%%); instructions per cycle %.2f and %.2f\n",
			bc/1000, cc/1000, 100*cc/bc, bi/bc, ci/cc)
	}
}

// crawlCPU is the crawl's own CPU: the process's and redis-server's, less
// an empty crawl's start-up and stop.
func (r *Report) crawlCPU() time.Duration {
	return max(r.Crawl.CPU+r.Crawl.ChildCPU-r.Startup.CPU, 0)
}

func perPage(d time.Duration, pages int) float64 {
	if pages == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(pages)
}

func rank(stage string) int {
	for i, s := range stageOrder {
		if s == stage {
			return i
		}
	}
	return len(stageOrder)
}

// RateRatio is the crawl's pages/s over the baseline's (0 when unknown).
func (r *Report) RateRatio() float64 {
	if r.Baseline.PagesPerSec <= 0 {
		return 0
	}
	return r.Crawl.PagesPerSec() / r.Baseline.PagesPerSec
}

// CPURatio is the crawl's CPU per page over the baseline's (0 when
// unknown).
func (r *Report) CPURatio() float64 {
	if r.Baseline.CPUMicrosPerPage <= 0 {
		return 0
	}
	return perPage(r.crawlCPU(), r.Crawl.Pages) / r.Baseline.CPUMicrosPerPage
}

// onePass is how long the baseline takes over the known URL list once.
func (r *Report) onePass() time.Duration {
	if r.Baseline.PagesPerSec <= 0 {
		return 0
	}
	return time.Duration(float64(r.URLs) / r.Baseline.PagesPerSec * float64(time.Second))
}

// TimeRatio is the crawl's duration over the baseline's one pass of the
// known URL list (issue 24's "at most 1.5x"); 0 when unknown.
func (r *Report) TimeRatio() float64 {
	once := r.onePass()
	if once <= 0 {
		return 0
	}
	return r.Crawl.Window.Seconds() / once.Seconds()
}

// PrintSummary writes the median and range of each ratio over several
// runs: a run lasts about a second, and a VM's speed drifts within one.
func PrintSummary(w io.Writer, reports []*Report) {
	if len(reports) == 0 {
		return
	}
	fmt.Fprintf(w, "over %d runs (median, min-max):", len(reports))
	for _, m := range []struct {
		name   string
		value  func(*Report) float64
		format string
	}{
		{"time ratio", (*Report).TimeRatio, "%.2fx"},
		{"CPU-µs/page vs baseline", (*Report).CPURatio, "%.0f%%"},
		{"pages/s vs baseline", (*Report).RateRatio, "%.0f%%"},
	} {
		v := make([]float64, len(reports))
		for i, r := range reports {
			v[i] = m.value(r)
			if strings.HasSuffix(m.format, "%%") {
				v[i] *= 100
			}
		}
		sort.Float64s(v)
		med := v[len(v)/2]
		if len(v)%2 == 0 {
			med = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		fmt.Fprintf(w, " %s "+m.format+" ("+m.format+"-"+m.format+");", m.name, med, v[0], v[len(v)-1])
	}
	fmt.Fprintln(w)
}
