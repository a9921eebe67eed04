package cdxforward

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the forwarder's metrics.
type metrics struct {
	queued   prometheus.Gauge
	lines    prometheus.Counter
	requests *prometheus.CounterVec
	retries  prometheus.Counter
	failures prometheus.Counter
	failing  prometheus.Gauge
	duration prometheus.Histogram
}

// newMetrics builds the metrics and registers them on reg (nil: not
// registered).
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		queued: prometheus.NewGauge(prometheus.GaugeOpts{Name: "trawler_cdxforward_queued_lines",
			Help: "CDX lines waiting to be forwarded or in flight."}),
		lines: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_cdxforward_lines_total",
			Help: "CDX lines the external OutbackCDX accepted."}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trawler_cdxforward_requests_total",
			Help: "POSTs to the external OutbackCDX, by HTTP status code (error: no answer)."}, []string{"code"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_cdxforward_retries_total",
			Help: "POSTs retried after a transient failure."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_cdxforward_failures_total",
			Help: "Batches given up on (permanent error or retries exhausted); their lines stay uncommitted."}),
		failing: prometheus.NewGauge(prometheus.GaugeOpts{Name: "trawler_cdxforward_failing",
			Help: "1 while the last batch failed for good, 0 once a batch succeeds."}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "trawler_cdxforward_request_duration_seconds",
			Help: "Time per POST to the external OutbackCDX.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.queued, m.lines, m.requests, m.retries, m.failures, m.failing, m.duration} {
		errs = append(errs, reg.Register(c))
	}
	return m, errors.Join(errs...)
}
