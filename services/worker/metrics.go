package worker

import (
	"context"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/frontier"
)

type metrics struct {
	fetches         *prometheus.CounterVec
	bytes           prometheus.Counter
	fetchSeconds    prometheus.Histogram
	candidates      *prometheus.CounterVec
	launchesSkipped *prometheus.CounterVec
	warcErrors      prometheus.Counter
	retries         prometheus.Counter
	// outlinksReplayed counts stored outlinks followed from pages that
	// answered 304 Not Modified.
	outlinksReplayed prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_worker_uris_finished_total", Help: "URIs finished, by status code.",
		}, []string{"status"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_worker_response_bytes_total", Help: "Response bytes received (on the wire).",
		}),
		fetchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "trawler_worker_fetch_duration_seconds", Help: "Fetch duration.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
		}),
		candidates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_worker_candidates_total", Help: "Candidate URIs by outcome (admitted, reprioritised, queued, seen, rejected, bad_url).",
		}, []string{"outcome"}),
		launchesSkipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_worker_launches_skipped_total", Help: "Launch messages not crawled, by reason.",
		}, []string{"reason"}),
		warcErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_worker_warc_write_errors_total", Help: "Captures that could not be written to WARC.",
		}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_worker_retries_total", Help: "Fetch attempts that failed transiently and were queued for a retry.",
		}),
		outlinksReplayed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_worker_outlinks_replayed_total",
			Help: "Outlinks of an earlier full capture followed again because the page answered 304 Not Modified.",
		}),
	}
	reg.MustRegister(m.fetches, m.bytes, m.fetchSeconds, m.candidates, m.launchesSkipped, m.warcErrors, m.retries,
		m.outlinksReplayed)
	return m
}

func (m *metrics) observe(o *outcome) {
	m.fetches.WithLabelValues(strconv.Itoa(o.status)).Inc()
	if o.size > 0 {
		m.bytes.Add(float64(o.size))
	}
	m.fetchSeconds.Observe(o.duration.Seconds())
}

// Totals reads the crawl-wide totals the frontier keeps.
func (w *Worker) Totals(ctx context.Context) (frontier.Totals, error) { return w.front.Totals(ctx) }
