package dns

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Values of the result label of trawler_dns_lookups_total.
const (
	resultOK       = "ok"
	resultNotFound = "notfound"
	resultError    = "error"
)

// metrics are the resolver's metrics.
type metrics struct {
	lookups   *prometheus.CounterVec
	cacheHits prometheus.Counter
	duration  prometheus.Histogram
	queries   *prometheus.CounterVec
}

// newMetrics builds the metrics and registers them on reg (nil: not
// registered).
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		lookups: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trawler_dns_lookups_total",
			Help: "Host name lookups performed (cache misses), by result: ok, notfound (NXDOMAIN or no address), error (temporary)."},
			[]string{"result"}),
		cacheHits: prometheus.NewCounter(prometheus.CounterOpts{Name: "trawler_dns_cache_hits_total",
			Help: "Resolutions answered from the cache."}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "trawler_dns_lookup_duration_seconds",
			Help: "Time per host name lookup (A and AAAA, including retries).", Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)}),
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "trawler_dns_queries_total",
			Help: "DNS queries sent to name servers, by transport (tcp: retry of a truncated UDP reply)."},
			[]string{"transport"}),
	}
	for _, res := range []string{resultOK, resultNotFound, resultError} {
		m.lookups.WithLabelValues(res)
	}
	if reg == nil {
		return m, nil
	}
	var errs []error
	for _, c := range []prometheus.Collector{m.lookups, m.cacheHits, m.duration, m.queries} {
		errs = append(errs, reg.Register(c))
	}
	return m, errors.Join(errs...)
}
