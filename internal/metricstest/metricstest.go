// Package metricstest reads metric values back from a Prometheus registry
// in tests.
package metricstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Value returns the value of metric family name in g: of the series whose
// label values are labels (in label-name order), or, with no labels given,
// the sum over all its series. Counters, gauges and untyped metrics give
// their value, histograms and summaries their sample count. A family or
// series that does not exist gives 0.
func Value(t testing.TB, g prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if len(labels) == 0 {
				sum += value(m)
				continue
			}
			if matches(m, labels) {
				return value(m)
			}
		}
	}
	return sum
}

func matches(m *dto.Metric, labels []string) bool {
	lp := m.GetLabel()
	if len(lp) != len(labels) {
		return false
	}
	for i, l := range lp {
		if l.GetValue() != labels[i] {
			return false
		}
	}
	return true
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	case m.Summary != nil:
		return float64(m.GetSummary().GetSampleCount())
	default:
		return m.GetUntyped().GetValue()
	}
}
