package launcher

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the launcher's Prometheus series.
type metrics struct {
	runs         *prometheus.CounterVec
	targets      prometheus.Counter
	launches     prometheus.Counter
	skipped      *prometheus.CounterVec
	badLines     prometheus.Counter
	runDuration  prometheus.Gauge
	lastSuccess  prometheus.Gauge
	lastLaunchHr prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_launcher_runs_total", Help: "Launch runs by result (ok, error).",
		}, []string{"result"}),
		targets: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_launcher_targets_read_total", Help: "Valid feed targets read.",
		}),
		launches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_launcher_launches_total", Help: "Launch messages sent (acknowledged by the broker) or printed.",
		}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_launcher_targets_skipped_total", Help: "Targets not launched, by reason.",
		}, []string{"reason"}),
		badLines: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_launcher_feed_bad_lines_total", Help: "Feed lines skipped as bad.",
		}),
		runDuration: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "trawler_launcher_last_run_duration_seconds", Help: "How long the last launch run took.",
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "trawler_launcher_last_success_timestamp_seconds", Help: "When the last launch run without error ended (Unix time).",
		}),
		lastLaunchHr: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "trawler_launcher_last_launched_hour_timestamp_seconds", Help: "The hour the last successful run launched (Unix time).",
		}),
	}
	// The labelled counters start at zero for every label value, so a
	// launcher that has not run yet, or never failed, exports them (its
	// dashboard panels read 0, its "no series" alerts stay quiet). The
	// gauges are set by a run: a zero timestamp would read as 1970.
	for _, result := range []string{"ok", "error"} {
		m.runs.WithLabelValues(result)
	}
	for _, reason := range []string{SkipNoSchedule, SkipEnded, SkipNotStarted, SkipFrequency, SkipNotDue,
		SkipAlreadyLaunched, SkipNoKey, SkipInvalid} {
		m.skipped.WithLabelValues(reason)
	}
	return m, register(reg, m.runs, m.targets, m.launches, m.skipped, m.badLines, m.runDuration, m.lastSuccess, m.lastLaunchHr)
}

// register registers cs with reg, if there is one.
func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	if reg == nil {
		return nil
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if errors.As(err, &already) {
				return fmt.Errorf("launcher metrics: registered twice (one launcher per registry): %w", err)
			}
			return fmt.Errorf("launcher metrics: %w", err)
		}
	}
	return nil
}

// bulkMetrics are the bulk loader's series.
type bulkMetrics struct {
	seeds      prometheus.Counter
	badLines   prometheus.Counter
	checkpoint prometheus.Gauge
}

func newBulkMetrics(reg prometheus.Registerer) (*bulkMetrics, error) {
	m := &bulkMetrics{
		seeds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_launcher_bulk_seeds_total", Help: "Seeds sent by bulk loads (acknowledged by the broker).",
		}),
		badLines: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_launcher_bulk_bad_lines_total", Help: "Bulk input lines skipped as bad.",
		}),
		checkpoint: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "trawler_launcher_bulk_checkpoint_line", Help: "Last input line of the bulk load acknowledged and checkpointed.",
		}),
	}
	return m, register(reg, m.seeds, m.badLines, m.checkpoint)
}

// record adds one run's summary to the counters.
func (m *metrics) record(sum Summary, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.runs.WithLabelValues(result).Inc()
	m.targets.Add(float64(sum.Targets))
	m.launches.Add(float64(sum.Messages))
	m.badLines.Add(float64(sum.BadLines))
	for reason, n := range sum.Skipped {
		m.skipped.WithLabelValues(reason).Add(float64(n))
	}
	m.runDuration.Set(sum.Duration.Seconds())
	if err == nil {
		m.lastSuccess.Set(float64(sum.Ended.UnixNano()) / 1e9)
		m.lastLaunchHr.Set(float64(sum.Hour.Unix()))
	}
}
