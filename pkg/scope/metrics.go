package scope

import (
	"errors"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the engine's Prometheus series. With a nil Registerer they
// are built but not exported, so the code path is the same.
type metrics struct {
	decisions *prometheus.CounterVec
	reloads   *prometheus.CounterVec
	prefixes  *prometheus.GaugeVec
	logDrops  prometheus.Counter
	// byRule[i][result] caches the decision counters of rule i (0: none),
	// so counting a decision is an index, not a label lookup.
	byRule [][3]prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, ruleNames []string) *metrics {
	m := &metrics{
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_scope_decisions_total",
			Help: "Scope decisions by result and deciding rule (number and class, 1-based as in scopeDecision).",
		}, []string{"decision", "rule"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "trawler_scope_surt_reloads_total",
			Help: "Reloads of watched SURT-prefix files by result (ok, error, skipped).",
		}, []string{"file", "result"}),
		prefixes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "trawler_scope_surt_prefixes",
			Help: "SURT prefixes currently loaded from each watched file.",
		}, []string{"file"}),
		logDrops: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "trawler_scope_log_dropped_total",
			Help: "Scope log lines dropped because the writer fell behind.",
		}),
	}
	if reg != nil {
		m.decisions = register(reg, m.decisions)
		m.reloads = register(reg, m.reloads)
		m.prefixes = register(reg, m.prefixes)
		m.logDrops = register(reg, m.logDrops)
	}
	m.byRule = make([][3]prometheus.Counter, len(ruleNames)+1)
	for i := range m.byRule {
		label := "none"
		if i > 0 {
			label = strconv.Itoa(i) + " " + ruleNames[i-1]
		}
		for _, r := range []Result{Pass, Accept, Reject} {
			m.byRule[i][r] = m.decisions.WithLabelValues(r.String(), label)
		}
	}
	return m
}

// register registers c, or returns the collector already registered under
// the same name (a second engine in one process, e.g. after a reload).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}

func (m *metrics) decided(d Decision) {
	if d.Rule < len(m.byRule) {
		m.byRule[d.Rule][d.Result].Inc()
	}
}
