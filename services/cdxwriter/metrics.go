package cdxwriter

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the cdxwriter's own metrics; the consumers add theirs
// (trawler_kafka_consumer_*, records consumed and dead-lettered, batch
// time from poll to commit) and the index its size (trawler_cdx_*).
type metrics struct {
	events      *prometheus.CounterVec
	indexLines  prometheus.Counter
	forwarded   prometheus.Counter
	applySecs   *prometheus.HistogramVec
	lag         *prometheus.GaugeVec
	isolations  prometheus.Counter
	lineRejects prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trawler_cdxwriter_events_total",
			Help: "Crawled events applied, by what they amounted to: capture, failure, index_only (a record the recently-crawled DB does not track, e.g. dns:) or skipped."},
			[]string{"result"}),
		indexLines: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_cdxwriter_index_lines_total",
			Help: "CDX lines written to the index (redeliveries included)."}),
		forwarded: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_cdxwriter_forwarded_lines_total",
			Help: "CDX lines the external OutbackCDX accepted for committed batches."}),
		applySecs: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "trawler_cdxwriter_apply_duration_seconds",
			Help:    "Time to apply one batch, by stage: index, recent (Redis), batch (both, in parallel), forward.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}, []string{"stage"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "trawler_cdxwriter_lag_records",
			Help: "Crawled events not yet committed, by consumer group (polled)."}, []string{"group"}),
		isolations: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_cdxwriter_bad_batch_isolations_total",
			Help: "Batches the index rejected, retried line by line to find the bad lines."}),
		lineRejects: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_cdxwriter_index_rejected_total",
			Help: "Events whose line the index rejected, sent to the dead-letter topic."}),
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.events, m.indexLines, m.forwarded, m.applySecs, m.lag, m.isolations, m.lineRejects} {
		errs = append(errs, reg.Register(c))
	}
	return m, errors.Join(errs...)
}
