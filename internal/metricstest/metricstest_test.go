package metricstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestValue(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c_total", Help: "c"}, []string{"a", "b"})
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h_seconds", Help: "h"})
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "g", Help: "g"})
	reg.MustRegister(c, h, g)
	c.WithLabelValues("x", "1").Add(2)
	c.WithLabelValues("y", "1").Add(3)
	h.Observe(1)
	h.Observe(2)
	g.Set(7)
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"c_total", []string{"x", "1"}, 2},
		{"c_total", []string{"y", "1"}, 3},
		{"c_total", nil, 5},
		{"c_total", []string{"z", "1"}, 0},
		{"h_seconds", nil, 2},
		{"g", nil, 7},
		{"absent", nil, 0},
	} {
		if got := Value(t, reg, tc.name, tc.labels...); got != tc.want {
			t.Errorf("Value(%s, %v) = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}
