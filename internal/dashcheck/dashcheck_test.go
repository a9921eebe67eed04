package dashcheck

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
)

// scrapeSteps is how many times each target is scraped: enough for rate()
// over $__rate_interval (four scrapes) to have two samples at every step
// after the first.
const scrapeSteps = 5

// bindings are the variable choices every query is evaluated with: the
// dashboards' default (All), and one stream and worker picked.
var bindings = []struct {
	name string
	b    binding
}{
	{"all", binding{"crawl": ".*", "stream": ".*", "instance": ".*"}},
	{"npld worker", binding{"crawl": "fc", "stream": "npld", "instance": "worker-npld-0:9100"}},
}

// crawlKinds are the crawls every query is checked against: a healthy
// one (ordinary pages only, nothing dead-lettered), where every series a
// panel or alert reads must exist already, at zero if nothing happened;
// and one that met bad input (hostile endpoints, a dead-lettered launch).
var crawlKinds = []crawlKind{
	{name: "healthy"},
	{name: "bad input", hostile: true, poison: true},
}

// TestDashboardsAndAlertsAgainstACrawl is the check the package exists
// for; see the package comment.
func TestDashboardsAndAlertsAgainstACrawl(t *testing.T) {
	if testing.Short() {
		t.Skip("crawls the synthetic web")
	}
	qs := dashboardQueries(t, filepath.Join(repoRoot, dashboardDir))
	qs = append(qs, ruleQueries(t, filepath.Join(repoRoot, alertsFile))...)
	for _, kind := range crawlKinds {
		t.Run(kind.name, func(t *testing.T) {
			scrapes, absentAtStart := crawlScrapes(t, scrapeSteps, seriesNames(t, qs), kind)
			if !kind.poison {
				checkNoDLQ(t, scrapes)
			}
			for _, name := range absentAtStart {
				t.Errorf("counter %s is read by a dashboard or alert but not exported from the start (create its series at zero)", name)
			}
			checkQueries(t, qs, scrapes)
		})
	}
}

// checkNoDLQ fails unless the worker's scrapes export the dead-letter
// counter and it stays at zero: the healthy crawl is one with no DLQ
// records, whose panel must read 0, not "No data".
func checkNoDLQ(t *testing.T, scrapes []scrape) {
	t.Helper()
	const dlq = "trawler_kafka_consumer_dlq_records_total"
	checked := map[int]bool{} // the worker targets of a step share one scrape
	for _, s := range scrapes {
		if s.target.job != "trawler-worker" || checked[s.step] {
			continue
		}
		checked[s.step] = true
		if len(missing([]string{dlq}, s.text)) > 0 {
			t.Errorf("step %d: %s has no series in a healthy crawl", s.step, dlq)
		}
		if n := sumMetric(s.text, dlq); n != 0 {
			t.Errorf("step %d: %s = %v, want 0 (nothing was dead-lettered)", s.step, dlq, n)
		}
	}
}

// checkQueries checks every query against the scrapes: it parses, the
// metrics it selects were scraped with the labels it matches on, and it
// evaluates without error.
func checkQueries(t *testing.T, qs []query, scrapes []scrape) {
	t.Helper()
	db, names := load(t, scrapes)
	eng := promql.NewEngine(promql.EngineOpts{
		MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute,
		// Grafana's range queries are aligned to the step; the same here.
		NoStepSubqueryIntervalFn: func(int64) int64 { return scrapeInterval.Milliseconds() },
		Parser:                   newParser(),
	})
	t.Cleanup(func() { _ = eng.Close() })

	p := newParser()
	for _, bd := range bindings {
		for _, q := range qs {
			expr := substitute(q.expr, bd.b)
			e, err := p.ParseExpr(expr)
			if err != nil {
				t.Errorf("%s: %s: does not parse: %v\n%s", bd.name, q.where, err, expr)
				continue
			}
			for _, sel := range selectors(e) {
				if reason := notScraped[baseName(sel.name)]; reason != "" {
					continue
				}
				have, ok := names[sel.name]
				if !ok {
					t.Errorf("%s: %s: metric %s is not exported by any role of the crawl", bd.name, q.where, sel.name)
					continue
				}
				// A label no series of the metric has is a typo: the
				// selector would match nothing, or everything.
				for _, l := range sel.labels {
					if !have[l] {
						t.Errorf("%s: %s: %s has no label %q", bd.name, q.where, sel.name, l)
					}
				}
			}
			n, labelSeen, err := evaluate(eng, db, expr, q.label)
			if err != nil {
				t.Errorf("%s: %s: %v\n%s", bd.name, q.where, err, expr)
				continue
			}
			if q.variable && n > 0 && !labelSeen {
				t.Errorf("%s: %s: no series has the label %q the variable lists", bd.name, q.where, q.label)
			}
			if bd.name == bindings[0].name {
				t.Logf("%4d series  %s\n             %s", n, q.where, oneLine(expr))
			}
		}
	}
}

// seriesNames are the series names the queries select, but for those
// notScraped excuses.
func seriesNames(t *testing.T, qs []query) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	for _, q := range qs {
		e, err := newParser().ParseExpr(substitute(q.expr, bindings[0].b))
		if err != nil {
			continue // reported by the check itself
		}
		for _, sel := range selectors(e) {
			if notScraped[baseName(sel.name)] == "" && !seen[sel.name] {
				seen[sel.name] = true
				out = append(out, sel.name)
			}
		}
	}
	return out
}

// evaluate runs expr as Grafana does, a range query over every scrape at
// the scrape interval, and returns how many series it returned and
// whether any has the label label.
func evaluate(eng *promql.Engine, db storage.Queryable, expr, label string) (int, bool, error) {
	ctx := context.Background()
	q, err := eng.NewRangeQuery(ctx, db, nil, expr, stepTime(0), stepTime(scrapeSteps-1), scrapeInterval)
	if err != nil {
		return 0, false, err
	}
	defer q.Close()
	res := q.Exec(ctx)
	if res.Err != nil {
		return 0, false, res.Err
	}
	m, err := res.Matrix()
	if err != nil {
		return 0, false, err
	}
	seen := false
	for _, s := range m {
		seen = seen || (label != "" && s.Metric.Get(label) != "")
	}
	return len(m), seen, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestSubstitute: Grafana's variables, in both spellings, longest first.
func TestSubstitute(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`rate(x{stream=~"$stream"}[$__rate_interval])`, `rate(x{stream=~"npld"}[1m])`},
		{`x{stream=~"${stream}"}[$__range]`, `x{stream=~"npld"}[6h]`},
		{`x{a="$unknown"}`, `x{a="$unknown"}`},
	} {
		if got := substitute(tc.in, binding{"stream": "npld"}); got != tc.want {
			t.Errorf("substitute(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSelectors: metric names are found in selectors inside functions and
// aggregations, and in __name__ matchers, with the labels matched on.
func TestSelectors(t *testing.T) {
	e, err := newParser().ParseExpr(`sum(rate(a_total{x="1"}[1m])) / on() max({__name__="b", y=~"."}) unless c`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range selectors(e) {
		got = append(got, s.name+"{"+strings.Join(s.labels, ",")+"}")
	}
	sort.Strings(got)
	if want := "a_total{x} b{y} c{}"; strings.Join(got, " ") != want {
		t.Errorf("selectors = %v, want %s", got, want)
	}
}

// TestDuplicateLabelsetsAreCaught: the evaluation reports the failure the
// old dashboard had, so a passing dashboard test means something.
func TestDuplicateLabelsetsAreCaught(t *testing.T) {
	text := "# TYPE m_total counter\nm_total{status=\"200\"} 1\nm_total{status=\"404\"} 2\n"
	var scrapes []scrape
	for step := range scrapeSteps {
		scrapes = append(scrapes, scrape{target: target{"j", "i:1", "fc", "npld"}, step: step, text: text})
	}
	db, _ := load(t, scrapes)
	eng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1000, Timeout: time.Minute, Parser: newParser()})
	t.Cleanup(func() { _ = eng.Close() })
	_, _, err := evaluate(eng, db, `label_replace(m_total, "status", "", "status", ".*")`, "")
	if err == nil || !strings.Contains(err.Error(), "same labelset") {
		t.Fatalf("err = %v, want a duplicate labelset error", err)
	}
}

// TestChartCopiesAreIdentical: the Helm chart ships copies of the
// dashboards and alerts (a chart cannot read files outside itself).
func TestChartCopiesAreIdentical(t *testing.T) {
	pairs := map[string]string{alertsFile: "helm/trawler/prometheus/alerts.yml"}
	files, err := filepath.Glob(filepath.Join(repoRoot, dashboardDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join(repoRoot, "helm/trawler/templates/grafana-dashboards.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		pairs[filepath.Join(dashboardDir, filepath.Base(f))] = filepath.Join("helm/trawler/grafana", filepath.Base(f))
		short := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "trawler-"), ".json")
		if !strings.Contains(string(tmpl), `"`+short+`"`) {
			t.Errorf("helm/trawler/templates/grafana-dashboards.yaml does not list %q (dashboards are named trawler-<name>.json)", short)
		}
	}
	chartDashboards, _ := filepath.Glob(filepath.Join(repoRoot, "helm/trawler/grafana", "*.json"))
	if len(chartDashboards) != len(files) {
		t.Errorf("helm/trawler/grafana has %d dashboards, %s has %d: cp %s/*.json helm/trawler/grafana/", len(chartDashboards), dashboardDir, len(files), dashboardDir)
	}
	for src, dst := range pairs {
		a, err := os.ReadFile(filepath.Join(repoRoot, src))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(repoRoot, dst))
		if errors.Is(err, os.ErrNotExist) || string(a) != string(b) {
			t.Errorf("%s differs from %s: cp %s %s", dst, src, src, dst)
		}
	}
}
