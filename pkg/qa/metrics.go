package qa

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/replay"
)

// Metrics counts QA runs. A nil *Metrics counts nothing.
type Metrics struct {
	pages     *prometheus.CounterVec
	errors    prometheus.Counter
	requests  *prometheus.CounterVec
	patched   prometheus.Counter
	dropped   prometheus.Counter
	badLines  prometheus.Counter
	lastScore prometheus.Gauge
}

// NewMetrics registers the QA metrics with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		pages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_qa_pages_total", Help: "Pages replayed by QA, by severity (good, moderate, severe).",
		}, []string{"severity"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_qa_page_errors_total", Help: "Pages QA could not replay (never finished loading, browser crashed); counted severe too.",
		}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_qa_requests_total", Help: "Requests of replayed pages, by outcome (answered, missing, offsite, robots, broken).",
		}, []string{"outcome"}),
		patched: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_qa_patch_urls_total", Help: "Missing URLs sent to tocrawl for a patch crawl.",
		}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_qa_patch_urls_dropped_total", Help: "Missing URLs left out of a patch crawl by the per-page or per-launch bound.",
		}),
		badLines: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_qa_bad_log_lines_total", Help: "crawl.log lines QA could not read and skipped.",
		}),
		lastScore: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "trawler_qa_mean_score_ratio", Help: "Mean page score (0 to 1) of the last QA report.",
		}),
	}
	for _, c := range []prometheus.Collector{m.pages, m.errors, m.requests, m.patched, m.dropped, m.badLines, m.lastScore} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register qa metric: %w", err)
		}
	}
	for _, s := range []Severity{Good, Moderate, Severe} {
		m.pages.WithLabelValues(string(s))
	}
	for _, o := range []replay.Outcome{replay.Answered, replay.Missing, replay.Offsite, replay.Robots, replay.Broken} {
		m.requests.WithLabelValues(string(o))
	}
	return m, nil
}

func (m *Metrics) page(r PageResult) {
	if m == nil {
		return
	}
	m.pages.WithLabelValues(string(r.Severity)).Inc()
	if r.Error != "" {
		m.errors.Inc()
	}
}

func (m *Metrics) request(o replay.Outcome) {
	if m != nil {
		m.requests.WithLabelValues(string(o)).Inc()
	}
}

// BadLines counts crawl.log lines skipped.
func (m *Metrics) BadLines(n int) {
	if m != nil {
		m.badLines.Add(float64(n))
	}
}

func (m *Metrics) patch(sent, dropped int) {
	if m != nil {
		m.patched.Add(float64(sent))
		m.dropped.Add(float64(dropped))
	}
}

// Observe records a finished report's mean score.
func (m *Metrics) Observe(r *Report) {
	if m != nil {
		m.lastScore.Set(r.MeanScore)
	}
}
