package robots

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Cache tiers that can answer a Get.
const (
	tierLocal = "local" // the in-process LRU
	tierRedis = "redis" // Redis, then parsed and kept locally
)

// metrics are the Cache's Prometheus collectors. They are always built, so
// Get never checks for nil; only registration is optional.
type metrics struct {
	hits   *prometheus.CounterVec
	misses prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		hits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_robots_cache_hits_total",
			Help: "robots.txt cache lookups answered, by tier: local (in-process LRU) or redis.",
		}, []string{"tier"}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_robots_cache_misses_total",
			Help: "robots.txt cache lookups that found nothing valid, so robots.txt is fetched.",
		}),
	}
	// Pre-create the tiers so dashboards see zeros, not gaps.
	m.hits.WithLabelValues(tierLocal)
	m.hits.WithLabelValues(tierRedis)
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.hits, m.misses} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("robots cache metrics (one Cache per Registerer): %w", err)
		}
	}
	return m, nil
}
