package frontier

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ClientMetrics measure one process's own calls to the frontier, where
// NewCollector's gauges read the crawl-wide state from Redis. Every worker
// exports its own, so dashboards sum them over workers (unlike the
// collector's gauges, which every worker exports alike).
//
// The frontier does not measure itself: a Frontier is also opened by tools
// (rebuild, stats, the admin API) that must not export claim metrics, so
// the process that claims records what it did. A nil *ClientMetrics
// records nothing.
type ClientMetrics struct {
	claimSeconds  prometheus.Histogram
	leasesExpired prometheus.Counter
}

// NewClientMetrics registers, for the frontier called name,
// trawler_frontier_claim_duration_seconds (the round trip of one Claim
// call, empty or not) and trawler_frontier_leases_expired_total (leases
// this process's reaper found expired and returned to their queues).
func NewClientMetrics(reg prometheus.Registerer, name string) (*ClientMetrics, error) {
	l := prometheus.Labels{"frontier": name}
	m := &ClientMetrics{
		claimSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "trawler_frontier_claim_duration_seconds", ConstLabels: l,
			Help: "Round trip of one frontier claim call (a script call per shard visited), whether it leased URIs or not.",
			// Sub-millisecond on a local Redis, tens of ms on a busy one.
			Buckets: prometheus.ExponentialBuckets(0.0002, 2.5, 12),
		}),
		leasesExpired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_frontier_leases_expired_total", ConstLabels: l,
			Help: "Expired leases (a worker that crashed or stalled) this process's reaper returned to their queues, uncharged.",
		}),
	}
	for _, c := range []prometheus.Collector{m.claimSeconds, m.leasesExpired} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("frontier %s client metrics: %w", name, err)
		}
	}
	return m, nil
}

// ObserveClaim records the duration of one Claim call.
func (m *ClientMetrics) ObserveClaim(d time.Duration) {
	if m != nil {
		m.claimSeconds.Observe(d.Seconds())
	}
}

// LeasesExpired counts n leases returned by Reap.
func (m *ClientMetrics) LeasesExpired(n int) {
	if m != nil && n > 0 {
		m.leasesExpired.Add(float64(n))
	}
}
