package provenance

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the role's own; its consumers add pkg/kafka's
// (trawler_kafka_consumer_*, dead-lettered records included).
type metrics struct {
	events    prometheus.Counter
	sealed    *prometheus.CounterVec
	expired   prometheus.Counter
	warcs     prometheus.Counter
	documents prometheus.Counter
	errors    *prometheus.CounterVec
	spoolBad  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_provenance_events_total",
			Help: "Crawled events handed to the statistics store (redeliveries included; each URL counts once per launch)."}),
		sealed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trawler_provenance_launches_sealed_total",
			Help: "Launches sealed, by the state they were sealed in."}, []string{"state"}),
		expired: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_provenance_launches_expired_total",
			Help: "Written launches whose statistics were dropped from Redis after provenance.keepSealedDays (the metadata WARC keeps them)."}),
		warcs: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_provenance_metadata_warcs_total",
			Help: "Metadata WARCs written (or found complete after a restart) and announced."}),
		documents: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_provenance_documents_total",
			Help: "Documents found on watched targets and published."}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trawler_provenance_errors_total",
			Help: "Failures that will be retried, by part: record, spool, seal, documents."}, []string{"part"}),
		spoolBad: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_provenance_spool_bad_lines_total",
			Help: "Spooled events of streaming launches that did not decode when their metadata WARC was built (skipped)."}),
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.events, m.sealed, m.expired, m.warcs, m.documents, m.errors, m.spoolBad} {
		errs = append(errs, reg.Register(c))
	}
	return m, errors.Join(errs...)
}
