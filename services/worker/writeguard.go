package worker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// The write guard keeps a worker that cannot record what it fetches from
// hammering the sites it fetches (issue 39: a read-only WARC directory
// once made a worker fetch one page 175 times a second, since every failed
// write returned the URI to its queue at once).
//
// A URI whose work could not be recorded (its WARC records, its crawl.log
// line, its spool file, its crawled or inscope events, its outlinks'
// admission, its hand-off to the renderer) is deferred: it goes back to
// the head of its queue uncharged, and its host waits the longer of its
// politeness delay and a back-off that doubles with each write failure in
// a row, politeness.backOffBaseMs × 2^(n−1) up to politeness.backOffMaxMs
// (the settings of a server's 429/503 back-off). A local failure is not
// the site's, so it never uses up the URI's retries (maxRetries) and
// never finishes it: the URI waits in the frontier until some worker can
// record it.
//
// After writeFailureThreshold failures in a row the worker stops claiming
// new URIs; claims it holds but has not started go back unstarted; /readyz
// fails with the error; trawler_worker_writes_failing is 1; the log says
// so once, then at most once a minute while it lasts. It probes every
// probeInterval by writing a small file in each directory it writes
// (warcs, viral, spool, logs), which costs no site anything; once that
// succeeds it claims one URI, and that URI's outcome decides: recorded in
// full (its crawled event published), the worker claims again; another
// failure, and the next probe claim waits twice as long (up to
// maxProbeInterval), so a failure the test write cannot see (a broker that
// is down) costs the sites one request per interval at most.

// writeFailureThreshold is how many write failures in a row stop claims:
// one or two are a hiccup (a broker leader moving), three in a row are a
// broken disk or broker.
const writeFailureThreshold = 3

// probeInterval is how often a worker whose writes fail tries a test
// write; maxProbeInterval bounds the doubling wait between probe claims.
const (
	probeInterval    = 10 * time.Second
	maxProbeInterval = 5 * time.Minute
)

// writeLogEvery spaces the log lines about failing writes.
const writeLogEvery = time.Minute

// What could not be recorded: the values of the failures counter's label.
const (
	writeWARC     = "warc"     // WARC records (captures, dns: records)
	writeCrawlLog = "crawllog" // crawl.log lines
	writeSpool    = "spool"    // the fetcher's spool (or another local fetch failure)
	writePublish  = "publish"  // crawled and inscope events, hand-offs
	writeAdmit    = "admit"    // outlinks into the frontier
)

// writeMetrics are the guard's series.
type writeMetrics struct {
	failing  prometheus.Gauge
	failures *prometheus.CounterVec
}

func newWriteMetrics() writeMetrics {
	m := writeMetrics{
		failing: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "trawler_worker_writes_failing",
			Help: "1 while the worker's writes fail (" + fmt.Sprint(writeFailureThreshold) + " or more in a row) and it claims no new URIs but a probe.",
		}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_worker_write_failures_total",
			Help: "URIs whose work could not be recorded, deferred with a back-off, by what failed: warc, crawllog, spool, publish, admit.",
		}, []string{"what"}),
	}
	// Every label from the start, so a healthy crawl shows zeros rather
	// than no data.
	for _, w := range []string{writeWARC, writeCrawlLog, writeSpool, writePublish, writeAdmit} {
		m.failures.WithLabelValues(w)
	}
	return m
}

// writeGuard counts write failures in a row and stops claims past the
// threshold. It is safe for concurrent use.
type writeGuard struct {
	dirs []diskDir
	log  *slog.Logger
	m    writeMetrics
	now  func() time.Time
	// write is the test write in one directory (writeProbeFile; tests
	// count its calls).
	write func(dir string) error
	// threshold, every and maxGap are writeFailureThreshold,
	// probeInterval and maxProbeInterval; tests shorten them.
	threshold     int
	every, maxGap time.Duration

	mu      sync.Mutex
	inARow  int
	failing bool
	since   time.Time // when the writes began to fail
	lastErr string
	// nextProbe is when the next test write may run; gap is the wait
	// after a probe claim, doubling while probes fail.
	nextProbe time.Time
	gap       time.Duration
	// probes are claims a thread may start while writes fail.
	probes   int
	lastLog  time.Time
	unlogged int           // failures since the last line
	resumed  chan struct{} // signalled (non-blocking) when writes succeed again
}

func newWriteGuard(dirs []diskDir, m writeMetrics, log *slog.Logger) *writeGuard {
	return &writeGuard{dirs: dirs, log: log, m: m, now: time.Now, write: writeProbeFile, threshold: writeFailureThreshold,
		every: probeInterval, maxGap: maxProbeInterval, resumed: make(chan struct{}, 1)}
}

// fail records that what could not be recorded for url.
func (g *writeGuard) fail(what, url string, err error) {
	g.m.failures.WithLabelValues(what).Inc()
	g.log.Debug("could not record; the URI is deferred", "what", what, "url", url, "err", err)
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inARow++
	g.unlogged++
	g.lastErr = what + ": " + err.Error()
	tripped := !g.failing && g.inARow >= g.threshold
	if tripped {
		g.failing, g.since, g.probes = true, now, 0
		g.gap, g.nextProbe = g.every, now.Add(g.every)
		g.m.failing.Set(1)
	}
	if !tripped && now.Sub(g.lastLog) < writeLogEvery {
		return
	}
	msg := "could not record a URI's capture or events; it waits its host's back-off and is tried again"
	if g.failing {
		msg = "writes failing: claiming no new URIs until a write succeeds"
	}
	g.log.Error(msg, "what", what, "url", url, "err", err, "failures", g.unlogged, "in_a_row", g.inARow)
	g.lastLog, g.unlogged = now, 0
}

// ok records that a URI's work was recorded in full; it ends a failing
// spell.
func (g *writeGuard) ok() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inARow = 0
	if !g.failing {
		return
	}
	g.failing, g.probes = false, 0
	g.m.failing.Set(0)
	g.log.Info("writes succeed again: claiming new URIs", "failing_seconds", g.now().Sub(g.since).Seconds())
	select {
	case g.resumed <- struct{}{}:
	default:
	}
}

// failures is the count of write failures in a row (0 after a success).
func (g *writeGuard) failures() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inARow
}

// reason is why the worker claims nothing new, or "" while writes work.
func (g *writeGuard) reason() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.failing {
		return ""
	}
	return g.lastErr
}

// claimLimit tells the dispatcher how many URIs it may claim: -1 (no
// limit) while writes work; while they fail, 1 when a probe is due and
// the test writes succeed, else 0 and how long to wait before asking
// again.
func (g *writeGuard) claimLimit() (int, time.Duration) {
	now := g.now()
	g.mu.Lock()
	if !g.failing {
		g.mu.Unlock()
		return -1, 0
	}
	if wait := g.nextProbe.Sub(now); wait > 0 {
		g.mu.Unlock()
		return 0, wait
	}
	g.mu.Unlock()
	err := g.testWrite() // unlocked: it touches the disk
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.failing { // a held claim succeeded meanwhile
		return -1, 0
	}
	if err != nil {
		g.lastErr = "test write: " + err.Error()
		g.nextProbe = now.Add(g.every)
		if now.Sub(g.lastLog) >= writeLogEvery {
			g.log.Error("writes still failing: claiming no new URIs", "err", err,
				"failing_seconds", now.Sub(g.since).Seconds(), "failures", g.unlogged)
			g.lastLog, g.unlogged = now, 0
		}
		return 0, g.every
	}
	g.probes = 1
	g.nextProbe = now.Add(g.gap)
	g.gap = min(2*g.gap, g.maxGap)
	return 1, 0
}

// start says whether a thread may crawl a claim it took from the work
// channel: always while writes work; while they fail, only a probe.
func (g *writeGuard) start() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.failing {
		return true
	}
	if g.probes > 0 {
		g.probes--
		return true
	}
	return false
}

// testWrite creates, writes, syncs and removes a small file in each
// directory the worker writes.
func (g *writeGuard) testWrite() error {
	for _, d := range g.dirs {
		if err := g.write(d.path); err != nil {
			return fmt.Errorf("%s (%s): %w", d.label, d.path, err)
		}
	}
	return nil
}

func writeProbeFile(dir string) error {
	f, err := os.CreateTemp(dir, ".trawler-write-probe-*")
	if err != nil {
		return err
	}
	_, err = f.WriteString("trawler write probe\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	return err
}

// writeBackoff is how long a host waits at least after a URI of it could
// not be recorded, the n-th write failure in a row: the profile's
// back-off base doubling with n, capped.
func writeBackoff(p profile.Politeness, n int) time.Duration {
	base := time.Duration(p.BackOffBaseMs) * time.Millisecond
	if base <= 0 {
		return 0
	}
	d := base << min(max(n-1, 0), 20)
	return min(d, time.Duration(p.BackOffMaxMs)*time.Millisecond)
}

// WritesReady is a readiness check: it fails while the worker's writes
// fail and it claims no new URIs, with the last error.
func (w *Worker) WritesReady(context.Context) error {
	if why := w.writes.reason(); why != "" {
		return fmt.Errorf("writes failing, not claiming new URIs: %s", why)
	}
	return nil
}

// writeFailed reports that what could not be recorded for url: on
// shutdown the URI is interrupted (returned at once, as ever), otherwise
// it counts as a write failure and the URI is deferred (deferUnrecorded).
func (w *Worker) writeFailed(ctx context.Context, what, url string, err error) step {
	if ctx.Err() != nil {
		return interrupted
	}
	w.writes.fail(what, url, err)
	return unrecorded
}

// deferUnrecorded settles a claim whose work could not be recorded: the
// URI goes back to the head of its queue uncharged, and its host waits
// the longer of its politeness delay and the write back-off.
func (w *Worker) deferUnrecorded(ctx context.Context, t *task) {
	defer w.done(t.c)
	wait := writeBackoff(t.pol.Politeness, w.writes.failures())
	d := frontier.Decision{Retry: true, Defer: true, Status: frontier.StatusDeferred, Attempts: t.c.Retries + 1, Wait: wait}
	// The host may well have been contacted (a fetch whose spool or WARC
	// write failed): it waits at least its politeness delay.
	o := frontier.Outcome{Claim: t.c, Status: frontier.StatusDeferred, Policy: t.pol, Decision: &d,
		CrawlDelay: t.crawlDelay, CrawlDelayKnown: t.crawlDelayKnown}
	if t.out != nil {
		o.Duration = t.out.duration
	}
	var err error
	stage(ctx, "frontier", func(ctx context.Context) { _, err = w.batch.Complete(ctx, []frontier.Outcome{o}) })
	if err != nil {
		w.log.Error("defer unrecorded URI; its lease will expire and it be crawled again", "url", t.l.URL, "err", err)
	}
}
