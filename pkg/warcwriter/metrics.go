package warcwriter

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the writer's Prometheus collectors.
type metrics struct {
	records     *prometheus.CounterVec
	bytes       prometheus.Counter
	filesClosed prometheus.Counter
	errors      prometheus.Counter
	openFiles   prometheus.Gauge
}

// newMetrics builds the collectors and registers them with reg when reg is
// not nil.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_warc_records_written_total",
			Help: "WARC records written, by WARC-Type.",
		}, []string{"type"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_warc_written_bytes_total",
			Help: "Compressed bytes written to WARC files.",
		}),
		filesClosed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_warc_files_closed_total",
			Help: "WARC files closed and renamed to their final name.",
		}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_warc_write_errors_total",
			Help: "Captures that could not be written because of an I/O error.",
		}),
		openFiles: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "trawler_warc_open_files",
			Help: "WARC files currently open for writing.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.records, m.bytes, m.filesClosed, m.errors, m.openFiles} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register warc metrics: %w", err)
		}
	}
	return m, nil
}
