package cdxindex

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the index's Prometheus metrics. They exist (unregistered)
// when Options.Registerer is nil, so the code never checks for nil.
type metrics struct {
	reg          prometheus.Registerer
	entries      *prometheus.GaugeVec
	bytes        prometheus.GaugeFunc
	queries      prometheus.Histogram
	writeLatency *prometheus.HistogramVec
	lines        *prometheus.CounterVec
}

func newMetrics(ix *Index) *metrics {
	return &metrics{
		entries: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "trawler_cdx_index_entries",
			Help: "Captures in the CDX index, by collection.",
		}, []string{"collection"}),
		bytes: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "trawler_cdx_index_bytes",
			Help: "Disk space used by the CDX index database.",
		}, func() float64 { return float64(ix.DiskBytes()) }),
		queries: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "trawler_cdx_query_duration_seconds",
			Help:    "Time to answer a CDX query over HTTP, from request to last byte written.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		writeLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "trawler_cdx_write_duration_seconds",
			Help:    "Time to write one batch to the CDX index, durable on return, by operation (put, delete).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"op"}),
		lines: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_cdx_ingest_lines_total",
			Help: "CDX lines received, by collection and result: added (put, new or rewritten), deleted, bad (rejected or skipped).",
		}, []string{"collection", "result"}),
	}
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.entries, m.bytes, m.queries, m.writeLatency, m.lines}
}

// register registers every collector or none.
func (m *metrics) register(reg prometheus.Registerer) error {
	if reg == nil {
		return nil
	}
	var done []prometheus.Collector
	for _, c := range m.collectors() {
		if err := reg.Register(c); err != nil {
			for _, d := range done {
				reg.Unregister(d)
			}
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return fmt.Errorf("register metrics: another index already registered trawler_cdx metrics: %w", err)
			}
			return fmt.Errorf("register metrics: %w", err)
		}
		done = append(done, c)
	}
	m.reg = reg
	return nil
}

// unregister lets a registry outlive the index (tests open several).
func (m *metrics) unregister() {
	if m.reg == nil {
		return
	}
	for _, c := range m.collectors() {
		m.reg.Unregister(c)
	}
}
