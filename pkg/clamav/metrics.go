package clamav

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the client's Prometheus collectors. They are always built, so
// the scan path never checks for nil; only registration is optional.
type metrics struct {
	scans    *prometheus.CounterVec
	duration prometheus.Histogram
	bytes    prometheus.Counter
	retries  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		scans: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_clamav_scans_total",
			Help: "Scan calls by outcome: clean, infected or error (after retries).",
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "trawler_clamav_scan_duration_seconds",
			Help:    "Wall time of a scan call, retries included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_clamav_scanned_bytes_total",
			Help: "Body bytes clamd returned a verdict on.",
		}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_clamav_retries_total",
			Help: "Scan attempts repeated after a clamd failure.",
		}),
	}
	// Pre-create the result series so dashboards see zeros, not gaps.
	for _, r := range []string{"clean", "infected", "error"} {
		m.scans.WithLabelValues(r)
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.scans, m.duration, m.bytes, m.retries} {
		if err := reg.Register(c); err != nil {
			// AlreadyRegisteredError here means a second Client on the
			// same Registerer: wrap it with prometheus.WrapRegistererWith.
			return nil, fmt.Errorf("clamav metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) observe(res Result, err error) {
	m.duration.Observe(res.Duration.Seconds())
	switch {
	case err != nil:
		m.scans.WithLabelValues("error").Inc()
		return
	case res.Infected:
		m.scans.WithLabelValues("infected").Inc()
	default:
		m.scans.WithLabelValues("clean").Inc()
	}
	m.bytes.Add(float64(res.Bytes))
}
