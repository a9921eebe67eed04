package worker

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

type metrics struct {
	fetches         *prometheus.CounterVec
	bytes           prometheus.Counter
	fetchSeconds    prometheus.Histogram
	candidates      *prometheus.CounterVec
	launchesSkipped *prometheus.CounterVec
	warcErrors      prometheus.Counter
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
			Name: "trawler_worker_candidates_total", Help: "Candidate URIs by outcome (admitted, seen, rejected, bad_url).",
		}, []string{"outcome"}),
		launchesSkipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_worker_launches_skipped_total", Help: "Launch messages not crawled, by reason.",
		}, []string{"reason"}),
		warcErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_worker_warc_write_errors_total", Help: "Captures that could not be written to WARC.",
		}),
	}
	reg.MustRegister(m.fetches, m.bytes, m.fetchSeconds, m.candidates, m.launchesSkipped, m.warcErrors)
	return m
}

func (m *metrics) observe(o *outcome) {
	m.fetches.WithLabelValues(strconv.Itoa(o.status)).Inc()
	if o.size > 0 {
		m.bytes.Add(float64(o.size))
	}
	m.fetchSeconds.Observe(o.duration.Seconds())
}

// Stats are crawl-wide totals kept in Redis beside the frontier, so a
// summary covers every worker and survives restarts.
type Stats struct {
	rdb redis.UniversalClient
	key string
}

// NewStats keeps totals under keyPrefix + "stats".
func NewStats(rdb redis.UniversalClient, keyPrefix string) *Stats {
	return &Stats{rdb: rdb, key: keyPrefix + "stats"}
}

// Record counts one finished URI.
func (s *Stats) Record(ctx context.Context, status int, size int64) error {
	pipe := s.rdb.Pipeline()
	pipe.HIncrBy(ctx, s.key, "status:"+strconv.Itoa(status), 1)
	pipe.HIncrBy(ctx, s.key, "uris", 1)
	if size > 0 {
		pipe.HIncrBy(ctx, s.key, "bytes", size)
	}
	_, err := pipe.Exec(ctx)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	return nil
}

// Totals are the counters read back.
type Totals struct {
	URIs     int64
	Bytes    int64
	ByStatus map[int]int64
}

// Read returns the totals.
func (s *Stats) Read(ctx context.Context) (Totals, error) {
	m, err := s.rdb.HGetAll(ctx, s.key).Result()
	if err != nil {
		return Totals{}, fmt.Errorf("read stats: %w", err)
	}
	t := Totals{ByStatus: map[int]int64{}}
	for k, v := range m {
		n, _ := strconv.ParseInt(v, 10, 64)
		switch {
		case k == "uris":
			t.URIs = n
		case k == "bytes":
			t.Bytes = n
		case strings.HasPrefix(k, "status:"):
			code, err := strconv.Atoi(strings.TrimPrefix(k, "status:"))
			if err == nil {
				t.ByStatus[code] = n
			}
		}
	}
	return t, nil
}

// Totals reads the crawl-wide totals.
func (w *Worker) Totals(ctx context.Context) (Totals, error) { return w.stats.Read(ctx) }
