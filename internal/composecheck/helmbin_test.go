package composecheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// helmVersion is the helm scripts/install-test-deps.sh installs into
// .cache/helm/<version>/helm; keep the two equal.
const helmVersion = "v3.22.0"

// helmBinary finds the real helm: $HELM, the one install-test-deps.sh
// installed, or helm on PATH. Without one the tests skip, except in CI
// (CI=true), where a missing helm would silently drop the check.
func helmBinary(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	if h := filepath.Join(repoRoot, ".cache", "helm", helmVersion, "helm"); isFile(h) {
		abs, err := filepath.Abs(h)
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	if h, err := exec.LookPath("helm"); err == nil {
		return h
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("helm is missing: run scripts/install-test-deps.sh (it installs helm %s into .cache/helm)", helmVersion)
	}
	t.Skipf("helm not installed (scripts/install-test-deps.sh installs it; CI=true makes this a failure)")
	return ""
}

// allToggles turns every optional part of the chart on, with feeds for
// both streams, so helm checks every template.
const allToggles = `
reports: {enabled: true, existingClaim: reports, extraArgs: ["--stream=npld"]}
serviceMonitor: {enabled: true, labels: {release: prometheus}}
networkPolicy: {enabled: true, extraEgress: [{to: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: kafka}}}]}]}
podDisruptionBudget: {enabled: true}
topics: {enabled: true, partitions: 3}
redis: {addr: "redis:6379", existingSecret: redis-auth}
adminToken: {existingSecret: trawler-admin, readOnlyKey: view}
cdxwriter: {writesOpen: true}
autoscaling: {enabled: true, prometheusAddress: "http://prometheus:9090"}
renderer: {enabled: true, replicas: 2, shmSizeLimit: 1Gi, api: {enabled: true}}
worker: {clamdAddr: "clamav:3310", persistence: {existingClaim: warcs}}
provenance: {enabled: true, watched: /watched/watched.jsonl, extraArgs: ["--settle=2m"],
  extraVolumes: [{name: watched, configMap: {name: watched}}], extraVolumeMounts: [{name: watched, mountPath: /watched, readOnly: true}]}
streams:
  - {name: npld, workers: 2, warcPrefix: NPLD, feeds: ["https://w3act.example.org/feed/npld"]}
  - {name: bypm, workers: 1, warcPrefix: BYPM, feeds: ["/feeds/bypm.jsonl"]}
`

func runHelm(t *testing.T, helm string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helm, args...)
	// Keep helm's caches and config out of $HOME.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	if err != nil {
		return out.String() + stderr.String(), err
	}
	return out.String(), nil
}

// TestRealHelm lints the chart strictly (values.schema.json included) and
// renders it with the longest legal release name (53 characters) and
// every toggle on: every object name must fit Kubernetes' 63 characters
// (52 for CronJobs, whose Jobs get a suffix), and the rendered objects
// must obey CheckManifests, as the built-in renderer's output does.
func TestRealHelm(t *testing.T) {
	helm := helmBinary(t)
	values := filepath.Join(t.TempDir(), "all.yaml")
	if err := os.WriteFile(values, []byte(allToggles), 0o644); err != nil {
		t.Fatal(err)
	}
	release := strings.Repeat("r", 53)
	for _, args := range [][]string{
		{"lint", "--strict", chartDir},
		{"lint", "--strict", chartDir, "-f", values},
		{"lint", "--strict", chartDir, "--set", "crawl=dc", "--set", "streams[0].name=main", "--set", "streams[0].workers=1"},
	} {
		if out, err := runHelm(t, helm, args...); err != nil {
			t.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	out, err := runHelm(t, helm, "template", release, chartDir, "-f", values, "--kube-version", "1.30.0", "--namespace", "crawl")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	ms, err := splitManifests("helm template", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, m := range ms {
		kind, name := m.Kind()
		kinds[kind]++
		limit := 63
		if kind == "CronJob" {
			limit = 52
		}
		if len(name) > limit {
			t.Errorf("%s %s: name is %d characters, over %d", kind, name, len(name), limit)
		}
	}
	for _, kind := range []string{"Deployment", "StatefulSet", "Service", "ConfigMap", "CronJob", "Job",
		"PodDisruptionBudget", "NetworkPolicy", "ServiceMonitor"} {
		if kinds[kind] == 0 {
			t.Errorf("every toggle on renders no %s (have %v)", kind, kinds)
		}
	}
	for _, err := range CheckManifests(ms) {
		t.Error(err)
	}
	var renderers []string
	for _, m := range ms {
		if kind, name := m.Kind(); kind == "Deployment" && dig(m.Object, "metadata", "labels", "app.kubernetes.io/component") == "renderer" {
			renderers = append(renderers, name)
		}
	}
	if len(renderers) != 2 {
		t.Errorf("every toggle on renders renderer Deployments %v, want one per stream", renderers)
	}
	var provenance []string
	for _, m := range ms {
		if kind, name := m.Kind(); kind == "Deployment" && dig(m.Object, "metadata", "labels", "app.kubernetes.io/component") == "provenance" {
			provenance = append(provenance, name)
			// until and int under the real helm (values are float64 there).
			args, _ := container(t, m.Object, "spec", "template")["args"].([]any)
			if len(args) < 2 || args[1] != "--crawl-log-dir=/data/logs/fc-npld/w0" {
				t.Errorf("provenance args = %v", args)
			}
		}
	}
	if len(provenance) != 1 {
		t.Errorf("every toggle on renders provenance Deployments %v, want one", provenance)
	}
}

// TestBuiltinRendererAllToggles renders allToggles with the built-in
// renderer too, so the two renderers agree on the chart with every
// optional part on (and a template the real helm accepts but the
// built-in one cannot render fails here, not only under helm).
func TestBuiltinRendererAllToggles(t *testing.T) {
	var over map[string]any
	if err := yaml.Unmarshal([]byte(allToggles), &over); err != nil {
		t.Fatal(err)
	}
	ms, err := loadChart(t, chartDir).Render(strings.Repeat("r", 53), "crawl", over)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range CheckManifests(ms) {
		t.Error(err)
	}
	kinds := map[string]int{}
	for _, m := range ms {
		kind, name := m.Kind()
		kinds[kind]++
		if len(name) > 63 {
			t.Errorf("%s %s: name is %d characters, over 63", kind, name, len(name))
		}
	}
	// Two streams: a worker and a renderer Deployment each, plus two
	// launchers (serve) and the provenance role; PDBs and NetworkPolicies
	// for workers and renderers.
	for kind, want := range map[string]int{"Deployment": 7, "PodDisruptionBudget": 4, "NetworkPolicy": 2} {
		if kinds[kind] != want {
			t.Errorf("every toggle on renders %d %s, want %d (have %v)", kinds[kind], kind, want, kinds)
		}
	}
}

// TestRealHelmSchema: values.schema.json refuses a stream name that would
// overflow object names, and a misspelt top-level key.
func TestRealHelmSchema(t *testing.T) {
	helm := helmBinary(t)
	for _, set := range []string{"streams[0].name=a-very-long-stream", "reprots.enabled=true", "crawl=xc",
		"renderer.tabs=0", "renderer.pageTimeout=60", "renderer.enabeld=true",
		"provenance.slots=0", "provenance.enabeld=true"} {
		if out, err := runHelm(t, helm, "lint", "--strict", chartDir, "--set", set); err == nil {
			t.Errorf("helm lint --set %s passed:\n%s", set, out)
		}
	}
	// provenance without the workers' shared claim is refused.
	out, err := runHelm(t, helm, "template", "trawler", chartDir, "--kube-version", "1.30.0", "--set", "worker.clamdAddr=clamav:3310",
		"--set", "provenance.enabled=true", "--set", "worker.persistence.emptyDir=true")
	if err == nil || !strings.Contains(out, "provenance.enabled needs the workers' shared claim") {
		t.Errorf("helm template with provenance and no claim: err %v\n%s", err, out)
	}
	// The chart deploys no ClamAV, so it must be told where one is (or
	// that there is none): the defaults alone fail, saying so.
	out, err = runHelm(t, helm, "template", "trawler", chartDir, "--kube-version", "1.30.0")
	if err == nil || !strings.Contains(out, "worker.clamdAddr is required") {
		t.Errorf("helm template without worker.clamdAddr: err %v\n%s", err, out)
	}
}

// TestChartProfilesAreShipped: the chart's profiles/ are copies of the
// repository's (helm cannot read files outside the chart).
func TestChartProfilesAreShipped(t *testing.T) {
	for _, name := range []string{"frequent.yaml", "domain.yaml"} {
		chart, err := os.ReadFile(filepath.Join(chartDir, "profiles", name))
		if err != nil {
			t.Fatal(err)
		}
		repo, err := os.ReadFile(filepath.Join(repoRoot, "profiles", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(chart, repo) {
			t.Errorf("helm/trawler/profiles/%s differs from profiles/%s: cp profiles/%s helm/trawler/profiles/", name, name, name)
		}
	}
}
