package worker

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
)

// The disk guard stops a worker claiming new URIs while a filesystem it
// writes to (WARCs, viral WARCs, spool, crawl.log) has less free space
// than the threshold, as Heritrix and NetarchiveSuite pause a crawl on a
// full disk: claims already held are crawled to the end (their records
// may still fit; if not, the WARC writer cuts the failed capture out of
// the file and the URI finishes with an error), nothing new is started,
// /readyz fails with the reason, trawler_worker_disk_low is 1, and the
// log says so once. When space returns, the worker claims again.

// DiskConfig sets the free-space threshold. The zero value sets none
// (tests, embedded uses): free space is still measured and exported, but
// claims never stop for it; the flags' defaults set one.
type DiskConfig struct {
	// MinFreeBytes is the free space below which the worker stops
	// claiming; 0: no byte threshold.
	MinFreeBytes int64 `yaml:"minFreeBytes"`
	// MinFreePercent is the same as a share of the filesystem's size;
	// 0: no percentage threshold. Either threshold stops claims.
	MinFreePercent float64 `yaml:"minFreePercent"`
	// CheckInterval is how often free space is read (default 5s).
	CheckInterval time.Duration `yaml:"checkInterval"`
}

// RegisterFlags registers the disk guard's flags with their defaults.
func (c *DiskConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.Int64Var(&c.MinFreeBytes, "min-free-disk-bytes", 1<<30,
		"stop claiming new URIs while the WARC, spool or log filesystem has less free space than this (0: no byte threshold); resumes when space returns")
	fs.Float64Var(&c.MinFreePercent, "min-free-disk-percent", 0,
		"as --min-free-disk-bytes, as a percentage of the filesystem's size (0: no percentage threshold)")
	fs.DurationVar(&c.CheckInterval, "disk-check-interval", 5*time.Second, "how often the free space of the worker's filesystems is read")
}

// Validate checks the thresholds.
func (c DiskConfig) Validate() error {
	var errs []error
	if c.MinFreeBytes < 0 {
		errs = append(errs, fmt.Errorf("min-free-disk-bytes %d must not be negative", c.MinFreeBytes))
	}
	if c.MinFreePercent < 0 || c.MinFreePercent >= 100 {
		errs = append(errs, fmt.Errorf("min-free-disk-percent %g: want 0 <= percent < 100", c.MinFreePercent))
	}
	if c.CheckInterval < 0 {
		errs = append(errs, fmt.Errorf("disk-check-interval %s must not be negative", c.CheckInterval))
	}
	return errors.Join(errs...)
}

// DiskStat reports the bytes of a directory's filesystem available to the
// worker (not the blocks reserved for root) and its size. Tests replace
// it to simulate a full disk.
type DiskStat func(dir string) (free, size uint64, err error)

// statfs is the real DiskStat.
func statfs(dir string) (free, size uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}

// diskDir is a directory the guard watches, with the label its metrics
// carry (a role, not a path, so series do not change with deployments).
type diskDir struct{ label, path string }

// diskMetrics are the guard's gauges, registered with the worker's.
type diskMetrics struct {
	free, size *prometheus.GaugeVec
	low        prometheus.Gauge
}

func newDiskMetrics() diskMetrics {
	return diskMetrics{
		free: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "trawler_worker_disk_free_bytes",
			Help: "Free bytes (available to the worker) of the filesystem of each directory the worker writes: warcs, viral, spool, logs.",
		}, []string{"dir"}),
		size: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "trawler_worker_disk_size_bytes", Help: "Size of the filesystem of each directory the worker writes.",
		}, []string{"dir"}),
		low: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "trawler_worker_disk_low",
			Help: "1 while a filesystem the worker writes has less free space than its threshold and the worker claims no new URIs.",
		}),
	}
}

// diskGuard watches the free space of the worker's directories.
type diskGuard struct {
	cfg  DiskConfig
	dirs []diskDir
	stat DiskStat
	log  *slog.Logger
	m    diskMetrics

	mu      sync.Mutex
	reason  string        // why space is low; "" when it is not
	statErr string        // the last stat failure, logged once
	resumed chan struct{} // signalled (non-blocking) when space returns
}

func newDiskGuard(cfg DiskConfig, dirs []diskDir, m diskMetrics, log *slog.Logger) *diskGuard {
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = 5 * time.Second
	}
	return &diskGuard{cfg: cfg, dirs: dirs, stat: statfs, log: log, m: m, resumed: make(chan struct{}, 1)}
}

// run checks every CheckInterval until ctx ends. The first check is the
// caller's (check), before the dispatcher starts.
func (g *diskGuard) run(ctx context.Context) {
	t := time.NewTicker(g.cfg.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.check()
		}
	}
}

// check reads every directory's free space, updates the metrics, and
// changes state (logging the change) when the answer changed.
func (g *diskGuard) check() {
	var lows, errs []string
	for _, d := range g.dirs {
		free, size, err := g.stat(d.path)
		if err != nil {
			// An unreadable filesystem does not stop claims: the WARC
			// writer's own errors say more, and a stat that fails
			// once must not pause the crawl.
			errs = append(errs, err.Error())
			continue
		}
		g.m.free.WithLabelValues(d.label).Set(float64(free))
		g.m.size.WithLabelValues(d.label).Set(float64(size))
		if why := g.below(free, size); why != "" {
			lows = append(lows, fmt.Sprintf("%s (%s): %s", d.label, d.path, why))
		}
	}
	reason := strings.Join(lows, "; ")
	statErr := strings.Join(errs, "; ")

	g.mu.Lock()
	was, wasErr := g.reason, g.statErr
	g.reason, g.statErr = reason, statErr
	g.mu.Unlock()

	if statErr != wasErr && statErr != "" {
		g.log.Warn("disk guard: cannot read free space", "err", statErr)
	}
	switch {
	case reason != "" && was == "":
		g.m.low.Set(1)
		g.log.Warn("disk space low: claiming no new URIs, finishing those held", "reason", reason)
	case reason == "" && was != "":
		g.m.low.Set(0)
		g.log.Info("disk space returned: claiming again")
		select {
		case g.resumed <- struct{}{}:
		default:
		}
	}
}

// below says why free of size bytes is under a threshold, or "".
func (g *diskGuard) below(free, size uint64) string {
	if g.cfg.MinFreeBytes > 0 && free < uint64(g.cfg.MinFreeBytes) {
		return fmt.Sprintf("%d bytes free, threshold %d", free, g.cfg.MinFreeBytes)
	}
	if g.cfg.MinFreePercent > 0 && size > 0 {
		if pct := 100 * float64(free) / float64(size); pct < g.cfg.MinFreePercent {
			return fmt.Sprintf("%.1f%% free, threshold %g%%", pct, g.cfg.MinFreePercent)
		}
	}
	return ""
}

// low returns why the worker claims nothing new, or "" while space is
// sufficient.
func (g *diskGuard) low() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reason
}

// DiskReady is a readiness check: it fails while a filesystem the worker
// writes is below its free-space threshold, with the reason.
func (w *Worker) DiskReady(context.Context) error {
	if why := w.disk.low(); why != "" {
		return fmt.Errorf("disk space low, not claiming new URIs: %s", why)
	}
	return nil
}

// diskDirs are the directories the worker writes.
func (c Config) diskDirs() []diskDir {
	return []diskDir{
		{"warcs", c.WARCDir()}, {"viral", c.ViralDir()}, {"spool", c.spoolDirOf(c.ID)}, {"logs", c.logDirOf(c.ID)},
	}
}
