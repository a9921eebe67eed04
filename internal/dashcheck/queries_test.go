package dashcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// repoRoot is the repository root, from this package's directory.
const repoRoot = "../.."

const (
	dashboardDir = "deploy/grafana/dashboards"
	alertsFile   = "deploy/prometheus/alerts.yml"
)

// notScraped are metric names a query may use although no role in the
// test crawl exports them, each with the reason.
var notScraped = map[string]string{
	"trawler_renderer_renders_total":           "exported by the renderer, which the test crawl does not run",
	"trawler_renderer_render_duration_seconds": "exported by the renderer, which the test crawl does not run",
	"trawler_renderer_browser_restarts_total":  "exported by the renderer, which the test crawl does not run",
	"trawler_renderer_proxy_refusals_total":    "exported by the renderer, which the test crawl does not run",
	"kubelet_volume_stats_available_bytes":     "disk space: exported by the kubelet, not by a role",
	"kubelet_volume_stats_capacity_bytes":      "disk space: exported by the kubelet, not by a role",
	"node_filesystem_avail_bytes":              "disk space: exported by node_exporter, not by a role",
	"node_filesystem_size_bytes":               "disk space: exported by node_exporter, not by a role",
}

// query is one PromQL expression from a dashboard or a rules file.
type query struct {
	where string // file, panel and refId, or rule name
	expr  string // as written, with dashboard variables
	// variable is true for a template variable's label_values() selector.
	variable bool
	label    string // the label a variable's values come from
}

// grafanaPanel is the part of a panel the test reads; rows nest panels.
type grafanaPanel struct {
	Title   string `json:"title"`
	Type    string `json:"type"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"`
}

type grafanaDashboard struct {
	UID        string         `json:"uid"`
	Panels     []grafanaPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// labelValues matches a Grafana label_values(selector, label) variable query.
var labelValues = regexp.MustCompile(`^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// dashboardQueries reads every panel target and query variable of every
// dashboard in dir.
func dashboardQueries(t *testing.T, dir string) []query {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in %s (%v)", dir, err)
	}
	var qs []query
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d grafanaDashboard
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		base := filepath.Base(f)
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			m := labelValues.FindStringSubmatch(v.Definition)
			if m == nil {
				t.Errorf("%s: variable %s: %q is not label_values(selector, label)", base, v.Name, v.Definition)
				continue
			}
			qs = append(qs, query{where: fmt.Sprintf("%s variable $%s", base, v.Name), expr: m[1], variable: true, label: m[2]})
		}
		var walk func([]grafanaPanel)
		walk = func(ps []grafanaPanel) {
			for _, p := range ps {
				for _, tg := range p.Targets {
					if strings.TrimSpace(tg.Expr) == "" {
						t.Errorf("%s: panel %q target %s has no expr", base, p.Title, tg.RefID)
						continue
					}
					qs = append(qs, query{where: fmt.Sprintf("%s %q %s", base, p.Title, tg.RefID), expr: tg.Expr})
				}
				walk(p.Panels)
			}
		}
		walk(d.Panels)
	}
	return qs
}

// ruleQueries parses a rules file with Prometheus's own rule parser, which
// also checks each expression and annotation template, and returns the
// rules' expressions.
func ruleQueries(t *testing.T, file string) []query {
	t.Helper()
	groups, errs := rulefmt.ParseFile(file, false, model.UTF8Validation, newParser(), nil)
	for _, err := range errs {
		t.Errorf("rules: %v", err)
	}
	if groups == nil {
		t.FailNow()
	}
	var qs []query
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			name := r.Alert
			if name == "" {
				name = r.Record
			}
			qs = append(qs, query{where: fmt.Sprintf("%s %s/%s", filepath.Base(file), g.Name, name), expr: r.Expr})
		}
	}
	return qs
}

// newParser is PromQL as a Prometheus server parses it by default: no
// experimental functions, which a dashboard cannot rely on.
func newParser() parser.Parser { return parser.NewParser(parser.Options{}) }

// binding is one choice of the dashboards' variables.
type binding map[string]string

// grafanaVars are Grafana's own variables, as it sets them for a 15 s
// scrape interval (rate interval: four scrapes).
var grafanaVars = binding{"__rate_interval": "1m", "__interval": "15s", "__range": "6h", "datasource": "prometheus"}

// substitute replaces $name and ${name} of b and of grafanaVars in expr.
// A variable it does not know is left, so the parser reports it.
func substitute(expr string, b binding) string {
	names := make([]string, 0, len(b)+len(grafanaVars))
	all := binding{}
	for k, v := range grafanaVars {
		all[k] = v
	}
	for k, v := range b {
		all[k] = v
	}
	for k := range all {
		names = append(names, k)
	}
	// Longest first, so $__range never eats the start of $__rate_interval.
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, n := range names {
		expr = strings.ReplaceAll(expr, "${"+n+"}", all[n])
		expr = strings.ReplaceAll(expr, "$"+n, all[n])
	}
	return expr
}

// selector is a metric selected by name, and the labels it matches on.
type selector struct {
	name   string
	labels []string
}

// selectors lists the selectors of an expression that name a metric
// (by name or with a __name__ equality matcher).
func selectors(e parser.Expr) []selector {
	var out []selector
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		sel := selector{name: vs.Name}
		for _, m := range vs.LabelMatchers {
			switch {
			case m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual:
				sel.name = m.Value
			case m.Name != model.MetricNameLabel:
				sel.labels = append(sel.labels, m.Name)
			}
		}
		if sel.name != "" {
			out = append(out, sel)
		}
		return nil
	})
	return out
}

// baseName is a histogram's or summary's name without the suffix of its
// series.
func baseName(name string) string {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if b, ok := strings.CutSuffix(name, s); ok {
			return b
		}
	}
	return name
}
