package dashcheck

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/teststorage"
)

// epoch stamps the first scrape; later ones follow every scrapeInterval.
var epoch = time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)

func stepTime(step int) time.Time { return epoch.Add(time.Duration(step) * scrapeInterval) }

// load parses the scrapes' exposition text as Prometheus would ingest it
// (histograms as _bucket/_sum/_count series, the target's labels added,
// an up series per target) into a fresh TSDB, and returns it with the
// label names of each metric name it holds.
func load(t *testing.T, scrapes []scrape) (storage.Storage, map[string]map[string]bool) {
	t.Helper()
	db, err := teststorage.NewWithError()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	names := map[string]map[string]bool{}
	app := db.Appender(context.Background())
	for _, s := range scrapes {
		ts := stepTime(s.step).UnixMilli()
		series, err := parseExposition(s.text)
		if err != nil {
			t.Fatalf("%s step %d: %v", s.target.instance, s.step, err)
		}
		series = append(series, sample{name: "up", value: 1})
		for _, sm := range series {
			b := labels.NewBuilder(labels.EmptyLabels())
			for k, v := range sm.labels {
				b.Set(k, v)
			}
			// Target labels win over exported ones, as with
			// honor_labels: false (an exported clash would be renamed
			// exported_<name>; none does).
			for k, v := range s.target.labels() {
				b.Set(k, v)
			}
			b.Set(model.MetricNameLabel, sm.name)
			ls := b.Labels()
			if _, err := app.Append(0, ls, ts, sm.value); err != nil {
				t.Fatalf("append %s: %v", sm.name, err)
			}
			if names[sm.name] == nil {
				names[sm.name] = map[string]bool{}
			}
			ls.Range(func(l labels.Label) { names[sm.name][l.Name] = true })
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	return db, names
}

// sample is one series' value in one scrape.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// parseExposition turns text exposition into samples, one per series
// Prometheus would store.
func parseExposition(text string) ([]sample, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parse exposition: %w", err)
	}
	var out []sample
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			ls := map[string]string{}
			for _, lp := range m.GetLabel() {
				ls[lp.GetName()] = lp.GetValue()
			}
			with := func(extra, value string) map[string]string {
				c := make(map[string]string, len(ls)+1)
				for k, v := range ls {
					c[k] = v
				}
				c[extra] = value
				return c
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out = append(out, sample{name, ls, m.GetCounter().GetValue()})
			case dto.MetricType_GAUGE:
				out = append(out, sample{name, ls, m.GetGauge().GetValue()})
			case dto.MetricType_UNTYPED:
				out = append(out, sample{name, ls, m.GetUntyped().GetValue()})
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				inf := false
				for _, b := range h.GetBucket() {
					inf = inf || math.IsInf(b.GetUpperBound(), 1)
					out = append(out, sample{name + "_bucket", with("le", formatLe(b.GetUpperBound())), float64(b.GetCumulativeCount())})
				}
				if !inf {
					out = append(out, sample{name + "_bucket", with("le", "+Inf"), float64(h.GetSampleCount())})
				}
				out = append(out, sample{name + "_sum", ls, h.GetSampleSum()}, sample{name + "_count", ls, float64(h.GetSampleCount())})
			case dto.MetricType_SUMMARY:
				sm := m.GetSummary()
				for _, q := range sm.GetQuantile() {
					out = append(out, sample{name, with("quantile", fmt.Sprint(q.GetQuantile())), q.GetValue()})
				}
				out = append(out, sample{name + "_sum", ls, sm.GetSampleSum()}, sample{name + "_count", ls, float64(sm.GetSampleCount())})
			default:
				return nil, fmt.Errorf("%s: metric type %v not handled", name, f.GetType())
			}
		}
	}
	return out, nil
}

// formatLe writes a bucket bound as the text format does.
func formatLe(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return model.SampleValue(v).String()
}
