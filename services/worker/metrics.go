package worker

import (
	"context"
	"fmt"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/frontier"
)

type metrics struct {
	fetches         *prometheus.CounterVec
	bytes           prometheus.Counter
	fetchSeconds    *prometheus.HistogramVec
	candidates      *prometheus.CounterVec
	launchesSkipped *prometheus.CounterVec
	warcErrors      prometheus.Counter
	retries         prometheus.Counter
	handedOff       prometheus.Counter
	// outlinksReplayed counts stored outlinks followed from pages that
	// answered 304 Not Modified.
	outlinksReplayed prometheus.Counter
	// crossURLRevisits counts revisits of a record of another URL (the
	// digest index); adaptiveSaved the candidates the adaptive recrawl
	// interval held back that a launch or the recrawl interval would
	// have fetched.
	crossURLRevisits prometheus.Counter
	adaptiveSaved    prometheus.Counter
	// streamManifests and streamSegments count HLS and DASH manifests
	// read and the media segments they listed, by kind.
	streamManifests, streamSegments *prometheus.CounterVec
	// challenges counts bot-challenge pages met, by vendor; traps the
	// links dropped as a crawler trap's, by kind.
	challenges, traps *prometheus.CounterVec
	// front times this worker's claims and counts the leases its reaper
	// returned (the frontier's gauges are the collector's).
	front *frontier.ClientMetrics
	// disk is the free-space guard's (disk.go), writes the write
	// guard's (writeguard.go).
	disk   diskMetrics
	writes writeMetrics
}

func newMetrics(reg prometheus.Registerer, frontierName string) (*metrics, error) {
	front, err := frontier.NewClientMetrics(reg, frontierName)
	if err != nil {
		return nil, fmt.Errorf("worker metrics: %w", err)
	}
	m := &metrics{front: front, disk: newDiskMetrics(), writes: newWriteMetrics(),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_worker_uris_finished_total", Help: "URIs finished, by status code.",
		}, []string{"status"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_worker_response_bytes_total", Help: "Response bytes received (on the wire).",
		}),
		fetchSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "trawler_worker_fetch_duration_seconds",
			Help: "Duration of finished URIs' fetches by outcome: the status class (1xx..5xx), dns, failed " +
				"(a negative status after contacting the host) or not_fetched (the host was not contacted: 0 s).",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
		}, []string{"outcome"}),
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
		handedOff: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_worker_render_handoffs_total", Help: "URIs handed to the renderer (-5002) instead of fetched.",
		}),
		outlinksReplayed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_worker_outlinks_replayed_total",
			Help: "Outlinks of an earlier full capture followed again because the page answered 304 Not Modified or adaptive recrawl held it back.",
		}),
		crossURLRevisits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_worker_cross_url_revisits_total",
			Help: "Captures written as identical-payload-digest revisits of a record of another URL (the digest index).",
		}),
		adaptiveSaved: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_worker_adaptive_recrawl_saved_total",
			Help: "Admission decisions that held a URI back because its adaptive recrawl interval had not run out, though a launch or the recrawl interval would have fetched it (a URI found on several pages counts each time).",
		}),
		streamManifests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_worker_stream_manifests_total", Help: "HLS playlists and DASH manifests read for links, by kind (hls, dash).",
		}, []string{"kind"}),
		streamSegments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_worker_stream_segments_total", Help: "Media segments listed by the chosen renditions of HLS and DASH manifests, by kind.",
		}, []string{"kind"}),
	}
	m.challenges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trawler_worker_challenges_total",
		Help: "Bot-challenge and CAPTCHA pages met (not recorded; the host backed off), by vendor.",
	}, []string{"vendor"})
	m.traps = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "trawler_worker_trap_links_dropped_total",
		Help: "Links dropped as a crawler trap's, by kind: query (an ever-growing query), pattern (a page's own pattern past its budget of new URLs).",
	}, []string{"kind"})
	m.traps.WithLabelValues("query")
	m.traps.WithLabelValues("pattern")
	for _, k := range []string{"hls", "dash"} {
		m.streamManifests.WithLabelValues(k)
		m.streamSegments.WithLabelValues(k)
	}
	for _, c := range []prometheus.Collector{m.traps, m.challenges, m.streamManifests, m.streamSegments, m.fetches, m.bytes, m.fetchSeconds, m.candidates, m.launchesSkipped, m.warcErrors,
		m.retries, m.outlinksReplayed, m.handedOff, m.disk.free, m.disk.size, m.disk.low, m.crossURLRevisits, m.adaptiveSaved,
		m.writes.failing, m.writes.failures} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("worker metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) observe(o *outcome) {
	m.fetches.WithLabelValues(strconv.Itoa(o.status)).Inc()
	if o.size > 0 {
		m.bytes.Add(float64(o.size))
	}
	m.fetchSeconds.WithLabelValues(fetchOutcome(o)).Observe(o.duration.Seconds())
}

// fetchOutcome is the outcome label of the fetch-duration histogram: few
// values, so latency by outcome stays a handful of series per worker.
func fetchOutcome(o *outcome) string {
	switch {
	case o.notFetched:
		return "not_fetched"
	case o.status == 1:
		return "dns"
	case o.status >= 100 && o.status <= 599:
		return strconv.Itoa(o.status/100) + "xx"
	default:
		return "failed"
	}
}

// Totals reads the crawl-wide totals the frontier keeps.
func (w *Worker) Totals(ctx context.Context) (frontier.Totals, error) { return w.front.Totals(ctx) }
