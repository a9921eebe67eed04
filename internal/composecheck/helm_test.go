package composecheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

var chartDir = filepath.Join(repoRoot, "helm", "trawler")

// TestChartTemplatesBalanced checks each template's delimiters on its own,
// and that values.yaml parses.
func TestChartTemplatesBalanced(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(chartDir, "templates", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckBraces(filepath.Base(f), string(data)); err != nil {
			t.Error(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatalf("values.yaml: %v", err)
	}
	// The Redis password is referenced from a Secret, never inlined.
	if k := findKey(values, regexp.MustCompile(`(?i)^password$|^redisPassword$`)); k != "" {
		t.Errorf("values.yaml has a password key %s; use redis.existingSecret", k)
	}
}

// findKey returns the dotted path of the first key matching re.
func findKey(v any, re *regexp.Regexp) string {
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	for _, k := range sortedKeys(m) {
		if re.MatchString(k) {
			return k
		}
		if sub := findKey(m[k], re); sub != "" {
			return k + "." + sub
		}
	}
	return ""
}

func loadChart(t *testing.T, dir string) *Chart {
	t.Helper()
	c, err := LoadChart(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// withRequired is overrides over the values the chart cannot default:
// worker.clamdAddr (it deploys no ClamAV; TestChartClamd).
func withRequired(overrides map[string]any) map[string]any {
	return mergeValues(map[string]any{"worker": map[string]any{"clamdAddr": "clamav:3310"}}, overrides)
}

// render renders the chart with overrides (over withRequired) and applies
// CheckManifests, failing on any broken rule.
func render(t *testing.T, c *Chart, overrides map[string]any) []Manifest {
	t.Helper()
	ms, err := c.Render("trawler", "crawl", withRequired(overrides))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range CheckManifests(ms) {
		t.Error(err)
	}
	return ms
}

// find returns the rendered objects of a kind, by name.
func find(ms []Manifest, kind string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, m := range ms {
		if k, name := m.Kind(); k == kind {
			out[name] = m.Object
		}
	}
	return out
}

// container returns the first container of a workload's pod template.
func container(t *testing.T, obj map[string]any, podPath ...string) map[string]any {
	t.Helper()
	cs, _ := dig(obj, append(podPath, "spec", "containers")...).([]any)
	if len(cs) == 0 {
		t.Fatalf("%v has no containers", dig(obj, "metadata", "name"))
	}
	return cs[0].(map[string]any)
}

// envOf returns a container's environment: literal values as strings,
// references as their maps.
func envOf(c map[string]any) map[string]any {
	out := map[string]any{}
	env, _ := c["env"].([]any)
	for _, e := range env {
		name, _ := dig(e, "name").(string)
		if v := dig(e, "value"); v != nil {
			out[name] = v
		} else {
			out[name] = dig(e, "valueFrom")
		}
	}
	return out
}

func TestChartDefaults(t *testing.T) {
	ms := render(t, loadChart(t, chartDir), nil)
	deps := find(ms, "Deployment")
	for name, replicas := range map[string]int{"trawler-worker-npld": 2, "trawler-worker-bypm": 1} {
		d, ok := deps[name]
		if !ok {
			t.Fatalf("no Deployment %s; have %v", name, sortedKeys(deps))
		}
		if got := dig(d, "spec", "replicas"); got != replicas {
			t.Errorf("%s replicas = %v, want %d", name, got, replicas)
		}
		c := container(t, d, "spec", "template")
		if c["image"] != "ghcr.io/trawler-crawl/trawler:0.1.0" {
			t.Errorf("%s image = %v, want the chart's appVersion as tag", name, c["image"])
		}
		if got := c["args"]; !equalStrings(got, "worker") {
			t.Errorf("%s args = %v", name, got)
		}
		env := envOf(c)
		stream := strings.TrimPrefix(name, "trawler-worker-")
		if env["TRAWLER_STREAM"] != stream || env["TRAWLER_CRAWL"] != "fc" || env["TRAWLER_KAFKA"] != "kafka:9092" {
			t.Errorf("%s env = %v", name, env)
		}
		if _, ok := env["TRAWLER_REDIS_PASSWORD"]; ok {
			t.Errorf("%s sets TRAWLER_REDIS_PASSWORD without redis.existingSecret", name)
		}
	}
	if len(deps) != 2 {
		t.Errorf("Deployments = %v, want the two worker streams", sortedKeys(deps))
	}

	// Streams have no feeds by default, so no launcher runs.
	if cjs := find(ms, "CronJob"); len(cjs) != 0 {
		t.Errorf("CronJobs %v rendered for streams without feeds", sortedKeys(cjs))
	}

	sts := find(ms, "StatefulSet")["trawler-cdxwriter"]
	if sts == nil {
		t.Fatal("no cdxwriter StatefulSet")
	}
	if dig(sts, "spec", "replicas") != 1 {
		t.Errorf("cdxwriter replicas = %v, want 1", dig(sts, "spec", "replicas"))
	}
	claims, _ := dig(sts, "spec", "volumeClaimTemplates").([]any)
	if len(claims) != 1 || dig(claims[0], "spec", "resources", "requests", "storage") != "50Gi" {
		t.Errorf("cdxwriter volumeClaimTemplates = %v", claims)
	}
	if _, ok := dig(claims[0], "spec", "storageClassName").(string); ok {
		t.Error("storageClassName set although values leave it empty")
	}
	svc := find(ms, "Service")["trawler-cdxwriter"]
	if ports, _ := dig(svc, "spec", "ports").([]any); len(ports) != 2 || dig(ports[0], "port") != 8081 {
		t.Errorf("cdxwriter Service ports = %v", dig(svc, "spec", "ports"))
	}
}

func equalStrings(v any, want ...string) bool {
	list, _ := v.([]any)
	if len(list) != len(want) {
		return false
	}
	for i := range want {
		if list[i] != want[i] {
			return false
		}
	}
	return true
}

// withFeeds is an override giving the npld stream a feed, so its
// launcher CronJob is rendered.
func withFeeds() map[string]any {
	return map[string]any{"streams": []any{
		map[string]any{"name": "npld", "workers": 2, "feeds": []any{"/feeds/npld.jsonl", "https://w3act.example/api/npld"}},
		map[string]any{"name": "bypm", "workers": 1, "feeds": []any{}},
	}}
}

// withCronLauncher is withFeeds with the launcher as an hourly CronJob.
func withCronLauncher(launcher map[string]any) map[string]any {
	over := withFeeds()
	l := map[string]any{"mode": "cronjob"}
	for k, v := range launcher {
		l[k] = v
	}
	over["launcher"] = l
	return over
}

func TestChartLauncher(t *testing.T) {
	c := loadChart(t, chartDir)
	ms := render(t, c, withCronLauncher(nil))
	cjs := find(ms, "CronJob")
	cj := cjs["trawler-launcher-npld"]
	if cj == nil || len(cjs) != 1 {
		t.Fatalf("CronJobs = %v, want only trawler-launcher-npld", sortedKeys(cjs))
	}
	if dig(cj, "spec", "schedule") != "0 * * * *" || dig(cj, "spec", "concurrencyPolicy") != "Forbid" {
		t.Errorf("launcher schedule/concurrency = %v/%v", dig(cj, "spec", "schedule"), dig(cj, "spec", "concurrencyPolicy"))
	}
	lc := container(t, cj, "spec", "jobTemplate", "spec", "template")
	if got := lc["args"]; !equalStrings(got, "launcher", "run", "--feed=/feeds/npld.jsonl", "--feed=https://w3act.example/api/npld") {
		t.Errorf("launcher args = %v", got)
	}
	if env := envOf(lc); env["TRAWLER_STREAM"] != "npld" || env["TRAWLER_KAFKA"] != "kafka:9092" {
		t.Errorf("launcher env = %v", env)
	}

	over := withCronLauncher(map[string]any{"extraArgs": []any{"--time-zone=UTC"}})
	cj = find(render(t, c, over), "CronJob")["trawler-launcher-npld"]
	if got := container(t, cj, "spec", "jobTemplate", "spec", "template")["args"]; !equalStrings(got, "launcher", "run", "--feed=/feeds/npld.jsonl", "--feed=https://w3act.example/api/npld", "--time-zone=UTC") {
		t.Errorf("launcher args with extraArgs = %v", got)
	}

	over = withCronLauncher(map[string]any{"enabled": false})
	if cjs := find(render(t, c, over), "CronJob"); len(cjs) != 0 {
		t.Errorf("launcher.enabled=false still renders %v", sortedKeys(cjs))
	}

	// The default, serve: a Deployment whose /metrics can be scraped, and
	// no CronJob.
	ms = render(t, c, withFeeds())
	if cjs := find(ms, "CronJob"); len(cjs) != 0 {
		t.Errorf("launcher.mode=serve renders CronJobs %v", sortedKeys(cjs))
	}
	d := find(ms, "Deployment")["trawler-launcher-npld"]
	if d == nil {
		t.Fatalf("no launcher Deployment among %v", sortedKeys(find(ms, "Deployment")))
	}
	lc = container(t, d, "spec", "template")
	if got := lc["args"]; !equalStrings(got, "launcher", "serve", "--feed=/feeds/npld.jsonl", "--feed=https://w3act.example/api/npld") {
		t.Errorf("launcher serve args = %v", got)
	}
	if dig(d, "spec", "template", "metadata", "annotations", "prometheus.io/scrape") != "true" {
		t.Error("launcher Deployment is not scraped")
	}
}

func TestChartOverrides(t *testing.T) {
	c := loadChart(t, chartDir)
	ms := render(t, c, map[string]any{
		"crawl":   "dc",
		"redis":   map[string]any{"existingSecret": "redis-auth", "existingSecretKey": "pw"},
		"streams": []any{map[string]any{"name": "main", "workers": 5, "feeds": []any{"/feeds/dc.jsonl"}}},
		"worker": map[string]any{
			"persistence": map[string]any{"existingClaim": "warcs"},
		},
		"cdxwriter": map[string]any{"persistence": map[string]any{"storageClassName": "fast", "size": "1Ti"}},
		"launcher":  map[string]any{"mode": "cronjob"},
	})
	d := find(ms, "Deployment")["trawler-worker-main"]
	if d == nil || dig(d, "spec", "replicas") != 5 {
		t.Fatalf("worker-main Deployment = %v", d)
	}
	c0 := container(t, d, "spec", "template")
	env := envOf(c0)
	if _, ok := env["TRAWLER_STREAM"]; ok {
		t.Error("domain crawl worker sets TRAWLER_STREAM")
	}
	if env["TRAWLER_CRAWL"] != "dc" {
		t.Errorf("worker TRAWLER_CRAWL = %v, want dc", env["TRAWLER_CRAWL"])
	}
	for _, m := range ms {
		kind, name := m.Kind()
		if kind != "Deployment" && kind != "StatefulSet" && kind != "CronJob" {
			continue
		}
		var pc map[string]any
		if kind == "CronJob" {
			pc = container(t, m.Object, "spec", "jobTemplate", "spec", "template")
		} else {
			pc = container(t, m.Object, "spec", "template")
		}
		ref := dig(envOf(pc)["TRAWLER_REDIS_PASSWORD"], "secretKeyRef")
		if dig(ref, "name") != "redis-auth" || dig(ref, "key") != "pw" {
			t.Errorf("%s/%s TRAWLER_REDIS_PASSWORD = %v, want secretKeyRef redis-auth/pw", kind, name, envOf(pc)["TRAWLER_REDIS_PASSWORD"])
		}
	}
	vols, _ := dig(d, "spec", "template", "spec", "volumes").([]any)
	if len(vols) == 0 || dig(vols[0], "persistentVolumeClaim", "claimName") != "warcs" {
		t.Errorf("worker volumes = %v, want the warcs claim first", vols)
	}
	mounts, _ := c0["volumeMounts"].([]any)
	if len(mounts) == 0 || dig(mounts[0], "subPath") != "dc/main" {
		t.Errorf("worker data mount = %v", mounts)
	}
	cj := find(ms, "CronJob")["trawler-launcher-main"]
	if cj == nil {
		t.Fatal("no launcher for the dc stream")
	}
	if _, ok := envOf(container(t, cj, "spec", "jobTemplate", "spec", "template"))["TRAWLER_STREAM"]; ok {
		t.Error("domain crawl launcher sets TRAWLER_STREAM")
	}
	sts := find(ms, "StatefulSet")["trawler-cdxwriter"]
	claims, _ := dig(sts, "spec", "volumeClaimTemplates").([]any)
	if dig(claims[0], "spec", "storageClassName") != "fast" || dig(claims[0], "spec", "resources", "requests", "storage") != "1Ti" {
		t.Errorf("cdxwriter claim = %v", claims[0])
	}
}

// TestChartReleaseNames checks object names follow the release name.
func TestChartReleaseNames(t *testing.T) {
	ms, err := loadChart(t, chartDir).Render("ukwa", "crawl", withRequired(withFeeds()))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if _, name := m.Kind(); !strings.HasPrefix(name, "ukwa-trawler-") {
			t.Errorf("%s: name %q does not start with the release's full name", m.Template, name)
		}
	}
}

// TestBrokenChart breaks a copy of the chart one way at a time: each must
// fail to load or render, with a message that points at the fault.
func TestBrokenChart(t *testing.T) {
	tests := []struct {
		name, file, old, new, want string
	}{
		// %d in want is the line of old in the original file.
		{"stray open delimiter", "templates/worker-deployment.yaml", "  replicas: {{ $stream.workers }}", "  replicas: {{ $stream.workers }",
			`"{{" inside the action opened at %d:13`},
		// An empty old appends new to the file; %d is then its new last line.
		{"unclosed action", "templates/cdxwriter-service.yaml", "", "      clusterIP: {{ .x\n",
			"templates/cdxwriter-service.yaml:%d:18: action is not closed"},
		{"values.yaml not YAML", "values.yaml", "crawl: fc\n", "crawl: [fc\n",
			"values.yaml: yaml: line"},
		{"Chart.yaml unknown key", "Chart.yaml", "appVersion:", "appversion:",
			"Chart.yaml: yaml: unmarshal errors"},
		{"Chart.yaml version not SemVer", "Chart.yaml", "version: 0.3.0", "version: \"1.0\"",
			`needs apiVersion v2, a name and a SemVer version; have "v2", "trawler", "1.0"`},
		{"unknown function", "templates/cdxwriter-service.yaml", "type: ClusterIP", "type: {{ camelcase \"clusterip\" }}",
			`function "camelcase" not defined`},
		{"missing value", "templates/worker-deployment.yaml", "$stream.workers }}", "$stream.workerz }}",
			`map has no entry for key "workerz"`},
		{"unbalanced block", "templates/cdxwriter-statefulset.yaml", "storageClassName: {{ . }}\n        {{- end }}", "storageClassName: {{ . }}",
			"unexpected EOF"},
		{"rendered YAML broken by indentation", "templates/cdxwriter-statefulset.yaml", "| nindent 4 }}\n    app.kubernetes.io/component: cdxwriter", "| nindent 2 }}\n    app.kubernetes.io/component: cdxwriter",
			"templates/cdxwriter-statefulset.yaml: rendered document 0 is not valid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyTree(t, chartDir)
			want := tt.want
			if strings.Contains(want, "%d") {
				want = fmt.Sprintf(want, lineOf(t, filepath.Join(dir, tt.file), tt.old))
			}
			if tt.old == "" {
				appendTo(t, filepath.Join(dir, tt.file), tt.new)
			} else {
				edit(t, dir, tt.file, tt.old, tt.new)
			}
			c, err := LoadChart(dir)
			if err == nil {
				_, err = c.Render("trawler", "crawl", withRequired(nil))
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error = %v, want it to contain %q", err, want)
			}
		})
	}
}

// lineOf returns the 1-based line where substr starts in file; for an
// empty substr, the line after the file's last.
func lineOf(t *testing.T, file, substr string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if substr == "" {
		return 1 + strings.Count(string(data), "\n")
	}
	i := strings.Index(string(data), substr)
	if i < 0 {
		t.Fatalf("%s does not contain %q", file, substr)
	}
	return 1 + strings.Count(string(data[:i]), "\n")
}

// appendTo appends text to file.
func appendTo(t *testing.T, file, text string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
