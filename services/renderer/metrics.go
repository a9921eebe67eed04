package renderer

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	renders    *prometheus.CounterVec
	duration   prometheus.Histogram
	resources  prometheus.Histogram
	refusals   *prometheus.CounterVec
	proxied    *prometheus.CounterVec
	captures   *prometheus.CounterVec
	outlinks   prometheus.Counter
	warcErrors prometheus.Counter
	media      mediaMetrics
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{media: newMediaMetrics(),
		renders: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_renderer_renders_total",
			Help: "Render attempts by result: ok, failed, crashed (the browser died), fallback (handed back for a plain fetch).",
		}, []string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "trawler_renderer_render_duration_seconds", Help: "Time of one render attempt in the browser.",
			Buckets: []float64{0.5, 1, 2, 4, 8, 15, 30, 60, 120},
		}),
		resources: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "trawler_renderer_resources_per_page", Help: "Requests one rendered page made through the recording proxy.",
			Buckets: []float64{1, 5, 10, 20, 50, 100, 200, 500, 1000},
		}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_renderer_proxy_refusals_total",
			Help: "Browser requests the recording proxy refused, by reason (address, excluded, robots, resource_cap, method, scheme, virus, blocked).",
		}, []string{"reason"}),
		proxied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_renderer_proxy_requests_total", Help: "Browser requests the recording proxy fetched, by outcome (captured, failed).",
		}, []string{"outcome"}),
		captures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_renderer_captures_total", Help: "Crawled events the renderer published, by status class.",
		}, []string{"class"}),
		outlinks: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_renderer_outlinks_total", Help: "Outlinks of rendered pages sent to the tocrawl topic.",
		}),
		warcErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_renderer_warc_write_errors_total", Help: "Records the renderer could not write to WARC.",
		}),
	}
	for _, c := range []prometheus.Collector{m.renders, m.duration, m.resources, m.refusals, m.proxied, m.captures,
		m.outlinks, m.warcErrors, m.media.available, m.media.runs, m.media.widened} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register renderer metric: %w", err)
		}
	}
	return m, nil
}
