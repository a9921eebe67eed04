package frontier

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// collector exports Stats as gauges, read from Redis at scrape time.
type collector struct {
	f                    *Frontier
	queued, inflight     *prometheus.Desc
	hosts, paused, error *prometheus.Desc
	backingOff, backOffs *prometheus.Desc
	topHost              *prometheus.Desc
	bloomURIs, bloomFP   *prometheus.Desc
	top                  topHostsCache
}

// NewCollector returns a Prometheus collector of the frontier's Stats:
// trawler_frontier_queued_uris, trawler_frontier_in_flight_uris,
// trawler_frontier_hosts{state=ready|snoozed|busy|exhausted|paused|known},
// trawler_frontier_paused, trawler_frontier_backing_off_hosts,
// trawler_frontier_backoffs_total{status} and
// trawler_frontier_top_host_queued_uris{host} (the topHosts hosts with the
// most URIs queued, from a scan spaced by its cost: see topHostsCache), and
// with a Bloom seen filter trawler_frontier_bloom_uris and
// trawler_frontier_bloom_false_positive_ratio.
// Register it with the role's Registerer.
func NewCollector(f *Frontier) prometheus.Collector {
	l := prometheus.Labels{"frontier": f.name}
	return &collector{
		f:        f,
		queued:   prometheus.NewDesc("trawler_frontier_queued_uris", "URIs waiting in host queues.", nil, l),
		inflight: prometheus.NewDesc("trawler_frontier_in_flight_uris", "URIs leased to workers.", nil, l),
		hosts:    prometheus.NewDesc("trawler_frontier_hosts", "Hosts by queue state (Heritrix's ready, snoozed, in-process as busy, exhausted, retired as paused; known counts all).", []string{"state"}, l),
		paused:   prometheus.NewDesc("trawler_frontier_paused", "1 when the whole frontier is paused.", nil, l),
		error:    prometheus.NewDesc("trawler_frontier_stats_up", "1 when the last read of the frontier's state from Redis succeeded.", nil, l),
		backingOff: prometheus.NewDesc("trawler_frontier_backing_off_hosts",
			"Hosts waiting out a back-off that a 429 or 503 response or a bot-challenge page asked for.", nil, l),
		backOffs: prometheus.NewDesc("trawler_frontier_backoffs_total",
			"Host back-offs of the crawl (all workers, all runs) by the HTTP status that asked for them, or challenge for a bot-challenge page.", []string{"status"}, l),
		topHost: prometheus.NewDesc("trawler_frontier_top_host_queued_uris",
			"URIs queued at each of the 10 hosts with the most queued (held included); other hosts have no series.", []string{"host"}, l),
		bloomURIs: prometheus.NewDesc("trawler_frontier_bloom_uris",
			"URIs the Bloom seen filter holds (admitted since the filter was created, each once).", nil, l),
		bloomFP: prometheus.NewDesc("trawler_frontier_bloom_false_positive_ratio",
			"Estimated chance that the Bloom seen filter takes a new URI for one already seen, at its current size (mean over shards); a new URI so taken is never crawled.", nil, l),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.queued, c.inflight, c.hosts, c.paused, c.error, c.backingOff, c.backOffs, c.topHost, c.bloomURIs, c.bloomFP} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.f.Stats(ctx)
	if err != nil {
		ch <- prometheus.MustNewConstMetric(c.error, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.error, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(st.Queued))
	ch <- prometheus.MustNewConstMetric(c.inflight, prometheus.GaugeValue, float64(st.InFlight))
	for state, v := range map[string]int64{
		"ready": st.ReadyHosts, "snoozed": st.SnoozedHosts, "busy": st.BusyHosts,
		"exhausted": st.ExhaustedHosts, "paused": st.PausedHosts, "known": st.Hosts,
	} {
		ch <- prometheus.MustNewConstMetric(c.hosts, prometheus.GaugeValue, float64(v), state)
	}
	paused := 0.0
	if st.Paused {
		paused = 1
	}
	ch <- prometheus.MustNewConstMetric(c.paused, prometheus.GaugeValue, paused)
	ch <- prometheus.MustNewConstMetric(c.backingOff, prometheus.GaugeValue, float64(st.BackingOffHosts))
	ch <- prometheus.MustNewConstMetric(c.backOffs, prometheus.CounterValue, float64(st.BackOffs429), "429")
	ch <- prometheus.MustNewConstMetric(c.backOffs, prometheus.CounterValue, float64(st.BackOffs503), "503")
	ch <- prometheus.MustNewConstMetric(c.backOffs, prometheus.CounterValue, float64(st.BackOffsChallenge), BackOffChallenge)
	if c.f.mode == "b" {
		ch <- prometheus.MustNewConstMetric(c.bloomURIs, prometheus.GaugeValue, float64(st.BloomURIs))
		ch <- prometheus.MustNewConstMetric(c.bloomFP, prometheus.GaugeValue, st.BloomFalsePositiveRate)
	}
	// Built afresh from the last scan, so hosts that left the top have no
	// series any more.
	for _, h := range c.top.get(ctx, c.f, st.Queued > 0) {
		ch <- prometheus.MustNewConstMetric(c.topHost, prometheus.GaugeValue, float64(h.Queued), h.Host)
	}
}
