package kafka

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// consumerMetrics are a Consumer's metrics, labelled with its group so
// several consumers can share one registry.
type consumerMetrics struct {
	consumed     *prometheus.CounterVec
	deadLettered *prometheus.CounterVec
	dropped      *prometheus.CounterVec
	handleErrors prometheus.Counter
	commitErrors prometheus.Counter
	batchSeconds prometheus.Histogram
}

// newConsumerMetrics builds the metrics and registers them on reg (nil:
// unregistered). Two consumers of the same group in one process share the
// already-registered collectors. The per-topic counters of topics start
// at zero (dead-lettered ones when there is a dead-letter topic, dropped
// ones when there is none), so dashboards and alerts see a healthy
// consumer's zero rather than no data.
func newConsumerMetrics(reg prometheus.Registerer, group string, topics []string, dlq bool) (*consumerMetrics, error) {
	labels := prometheus.Labels{"group": group}
	m := &consumerMetrics{
		consumed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_kafka_consumer_records_total", ConstLabels: labels,
			Help: "Records polled by the consumer, by source topic.",
		}, []string{"topic"}),
		deadLettered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_kafka_consumer_dlq_records_total", ConstLabels: labels,
			Help: "Undecodable records written to the dead-letter topic, by source topic.",
		}, []string{"topic"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_kafka_consumer_dropped_records_total", ConstLabels: labels,
			Help: "Undecodable records skipped because no dead-letter topic is configured, by source topic.",
		}, []string{"topic"}),
		handleErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_kafka_consumer_handle_errors_total", ConstLabels: labels,
			Help: "Failed batch handler calls (each is retried).",
		}),
		commitErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_kafka_consumer_commit_errors_total", ConstLabels: labels,
			Help: "Failed offset commits (the batch will be redelivered).",
		}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "trawler_kafka_consumer_batch_duration_seconds", ConstLabels: labels,
			Help:    "Time from poll to commit for one batch, handler retries included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	m.consumed = register(reg, m.consumed, &err)
	m.deadLettered = register(reg, m.deadLettered, &err)
	m.dropped = register(reg, m.dropped, &err)
	m.handleErrors = register(reg, m.handleErrors, &err)
	m.commitErrors = register(reg, m.commitErrors, &err)
	m.batchSeconds = register(reg, m.batchSeconds, &err)
	m.initTopics(topics, dlq)
	return m, err
}

// initTopics creates the per-topic series of topics at zero.
func (m *consumerMetrics) initTopics(topics []string, dlq bool) {
	for _, t := range topics {
		m.consumed.WithLabelValues(t)
		if dlq {
			m.deadLettered.WithLabelValues(t)
		} else {
			m.dropped.WithLabelValues(t)
		}
	}
}

// register registers c, returning the collector already registered under
// the same description if there is one. The first real error is kept in
// *errp.
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	if *errp == nil {
		*errp = err
	}
	return c
}
