package composecheck

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
)

// repoRoot is the repository root, two levels above this package.
const repoRoot = "../.."

// TestRepositoryCompose is the check that matters: the repository's own
// docker-compose.yml and deploy/ files obey every rule.
func TestRepositoryCompose(t *testing.T) {
	for _, err := range CheckCompose(context.Background(), repoRoot, filepath.Join(repoRoot, "docker-compose.yml")) {
		t.Error(err)
	}
}

// TestRepositoryComposeServices pins what the brief asks of the stack, so
// a service cannot disappear while every rule still holds.
func TestRepositoryComposeServices(t *testing.T) {
	p, err := LoadCompose(context.Background(), filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"topics-init": true, "launcher": true, "worker-npld": true, "worker-bypm": true, "cdxwriter": true,
		"renderer-npld": true, "provenance": true}
	got := trawlerServices(p, root)
	if len(got) != len(want) {
		t.Errorf("Trawler services = %v, want %v", got, sortedKeys(want))
	}
	for _, name := range got {
		if !want[name] {
			t.Errorf("unexpected Trawler service %q", name)
		}
	}
	for _, name := range []string{"kafka", "redis", "clamav", "prometheus", "grafana"} {
		if _, ok := p.Services[name]; !ok {
			t.Errorf("service %q is missing", name)
		}
	}
	if c := p.Services["launcher"].DependsOn["topics-init"].Condition; c != "service_completed_successfully" {
		t.Errorf("launcher waits for topics-init with condition %q, want service_completed_successfully", c)
	}
}

// TestComposeRenderer pins the renderer service: its own image (the
// Dockerfile's renderer stage, with Chromium), the npld workers' volume
// (so its WARCs land beside theirs), a fixed identity that cannot be
// scaled into a duplicate, and resource limits.
func TestComposeRenderer(t *testing.T) {
	p, err := LoadCompose(context.Background(), filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	r, ok := p.Services["renderer-npld"]
	if !ok {
		t.Fatal("no renderer-npld service")
	}
	w := p.Services["worker-npld"]
	if got := []string(r.Command); len(got) != 1 || got[0] != "renderer" {
		t.Errorf("renderer-npld command = %v, want [renderer]", got)
	}
	if r.Build == nil || r.Build.Target != "renderer" {
		t.Errorf("renderer-npld build = %+v, want target renderer", r.Build)
	}
	if r.Image == "" || r.Image == w.Image {
		t.Errorf("renderer-npld image %q: want an image of its own, not the workers' %q", r.Image, w.Image)
	}
	env := func(s types.ServiceConfig, k string) string {
		if v := s.Environment[k]; v != nil {
			return *v
		}
		return ""
	}
	for k, want := range map[string]string{"TRAWLER_STREAM": "npld", "TRAWLER_CRAWL": "fc", "TRAWLER_DATA": "/data",
		"TRAWLER_RENDERER_ID": "r0", "TRAWLER_CLAMD_ADDR": env(w, "TRAWLER_CLAMD_ADDR")} {
		if got := env(r, k); got != want {
			t.Errorf("renderer-npld %s = %q, want %q", k, got, want)
		}
	}
	if r.ContainerName == "" {
		t.Error("renderer-npld has no container_name: `--scale` would start a second r0 on the same volume")
	}
	volumeAt := func(s types.ServiceConfig, target string) string {
		for _, v := range s.Volumes {
			if v.Target == target {
				return v.Type + ":" + v.Source
			}
		}
		return ""
	}
	if got, want := volumeAt(r, "/data"), volumeAt(w, "/data"); got == "" || got != want {
		t.Errorf("renderer-npld /data is %q, want the npld workers' %q", got, want)
	}
	if r.MemLimit == 0 || r.CPUS == 0 {
		t.Errorf("renderer-npld mem_limit %d, cpus %v: want limits", r.MemLimit, r.CPUS)
	}
}

// TestComposeProvenance pins the provenance service: one container (it
// cannot be scaled into a second sealing loop), the npld workers' volume
// read-write at their /data (its metadata WARCs go beside theirs and its
// notices' paths mean what theirs do), the bypm workers' volume read-only,
// every worker slot's crawl.log directory of both streams and the
// renderer's, and a fixed host name for the metadata WARC names.
func TestComposeProvenance(t *testing.T) {
	p, err := LoadCompose(context.Background(), filepath.Join(repoRoot, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := p.Services["provenance"]
	if !ok {
		t.Fatal("no provenance service")
	}
	args := []string(s.Command)
	if len(args) == 0 || args[0] != "provenance" {
		t.Fatalf("provenance command = %v, want provenance first", args)
	}
	if s.ContainerName == "" {
		t.Error("provenance has no container_name: `--scale` would start a second sealing loop")
	}
	env := func(k string) string {
		if v := s.Environment[k]; v != nil {
			return *v
		}
		return ""
	}
	for k, want := range map[string]string{"TRAWLER_CRAWL": "fc", "TRAWLER_STREAM": "npld", "TRAWLER_DATA": "/data",
		"TRAWLER_KAFKA": "kafka:9092", "TRAWLER_REDIS": "redis:6379"} {
		if got := env(k); got != want {
			t.Errorf("provenance %s = %q, want %q", k, got, want)
		}
	}
	if env("TRAWLER_HOSTNAME") == "" {
		t.Error("provenance sets no TRAWLER_HOSTNAME: metadata WARC names would change with the container id")
	}
	if _, ok := s.Environment["TRAWLER_CRAWL_LOG_DIR"]; ok {
		t.Error("TRAWLER_CRAWL_LOG_DIR holds one directory; pass the directories as --crawl-log-dir flags")
	}
	mounts := map[string]types.ServiceVolumeConfig{}
	for _, v := range s.Volumes {
		mounts[v.Target] = v
	}
	volumeAt := func(name, target string) string {
		for _, v := range p.Services[name].Volumes {
			if v.Target == target {
				return v.Source
			}
		}
		return ""
	}
	if m, ok := mounts["/data"]; !ok || m.Source != volumeAt("worker-npld", "/data") || m.ReadOnly {
		t.Errorf("provenance /data = %+v, want the npld workers' volume %q read-write", m, volumeAt("worker-npld", "/data"))
	}
	if m, ok := mounts["/streams/bypm"]; !ok || m.Source != volumeAt("worker-bypm", "/data") || !m.ReadOnly {
		t.Errorf("provenance /streams/bypm = %+v, want the bypm workers' volume %q read-only", m, volumeAt("worker-bypm", "/data"))
	}
	dirs := map[string]bool{}
	for _, a := range args[1:] {
		if d, ok := strings.CutPrefix(a, "--crawl-log-dir="); ok {
			dirs[d] = true
		}
	}
	for _, want := range []string{"/data/logs/fc-npld/w0", "/data/logs/fc-npld/w1", "/data/logs/fc-npld-render-r0",
		"/streams/bypm/logs/fc-bypm/w0", "/streams/bypm/logs/fc-bypm/w1"} {
		if !dirs[want] {
			t.Errorf("provenance does not read %s (has %v)", want, sortedKeys(dirs))
		}
	}
	if r := p.Services["renderer-npld"]; env("TRAWLER_STREAM") != "npld" || r.Environment["TRAWLER_RENDERER_ID"] == nil ||
		*r.Environment["TRAWLER_RENDERER_ID"] != "r0" {
		t.Error("renderer-npld's identity changed: update provenance's --crawl-log-dir for its crawl.log")
	}
}

// copyTree copies the directory src into a new temporary directory and
// returns the copy's path.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	copyTreeTo(t, src, dst)
	return dst
}

// copyTreeTo copies the directory src to dst.
func copyTreeTo(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, r), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, r), data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// edit replaces the one occurrence of old in dir/file with new, failing
// the test if old is not there exactly once (so fixtures cannot drift
// away from the edits made to them).
func edit(t *testing.T, dir, file, old, new string) {
	t.Helper()
	path := filepath.Join(dir, file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), old); n != 1 {
		t.Fatalf("%s: %q occurs %d times, want 1", file, old, n)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantError fails unless some error in errs contains want.
func wantError(t *testing.T, errs []error, want string) {
	t.Helper()
	for _, err := range errs {
		if strings.Contains(err.Error(), want) {
			return
		}
	}
	t.Errorf("no error contains %q; got %d:", want, len(errs))
	for _, err := range errs {
		t.Errorf("  %v", err)
	}
}

func TestFixtureStackPasses(t *testing.T) {
	dir := copyTree(t, "testdata/stack")
	for _, err := range CheckCompose(context.Background(), dir, filepath.Join(dir, "docker-compose.yml")) {
		t.Error(err)
	}
}

// TestBrokenComposeFixtures loads each compose file in testdata/broken in
// place of the fixture stack's. Each one's first line says which message
// it must be rejected with.
func TestBrokenComposeFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/broken/*.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want := fixtureWant(t, f)
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dir := copyTree(t, "testdata/stack")
			compose := filepath.Join(dir, "docker-compose.yml")
			if err := os.WriteFile(compose, data, 0o644); err != nil {
				t.Fatal(err)
			}
			errs := CheckCompose(context.Background(), dir, compose)
			if len(errs) != 1 {
				t.Fatalf("want the load error alone, got %d errors: %v", len(errs), errs)
			}
			wantError(t, errs, want)
			wantError(t, errs, "load compose file")
		})
	}
}

// fixtureWant reads the "# want: ..." first line of a fixture.
func fixtureWant(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		t.Fatalf("%s is empty", file)
	}
	want, ok := strings.CutPrefix(sc.Text(), "# want: ")
	if !ok || want == "" {
		t.Fatalf("%s: first line must be \"# want: <message>\"", file)
	}
	return want
}

// breakage is one edit to the fixture stack and the error it must cause.
type breakage struct {
	name      string
	file      string // relative to the stack; created if old is empty
	old, new  string
	wantError string
}

func TestFixtureStackBreakages(t *testing.T) {
	tests := []breakage{
		{"missing Dockerfile", "docker-compose.yml", "      context: .\n", "      context: .\n      dockerfile: Missing.Dockerfile\n",
			"Dockerfile Missing.Dockerfile does not exist"},
		{"build context outside repo", "docker-compose.yml", "      context: .\n", "      context: ..\n",
			"is outside the repository"},
		{"bind mount missing", "docker-compose.yml", "./deploy/grafana/dashboards:", "./deploy/grafana/boards:",
			"bind mount source deploy/grafana/boards does not exist"},
		{"bind mount outside repo", "docker-compose.yml", "      - worker-data:/data\n", "      - worker-data:/data\n      - /etc/hostname:/etc/hostname:ro\n",
			"bind mount source /etc/hostname is outside the repository"},
		{"host port twice", "docker-compose.yml", `"3000:3000"`, `"9090:3000"`,
			`services "grafana" and "prometheus" both publish host port`},
		{"host port ranges overlap", "docker-compose.yml", `"3000:3000"`, `"9088-9091:3000-3003"`,
			"both publish host port 127.0.0.1:9090/tcp"},
		{"root user by name", "docker-compose.yml", `user: "10001"`, `user: "root"`,
			`service "worker": user "root" is root`},
		{"root user by uid", "docker-compose.yml", `user: "10001:10001"`, `user: "0:0"`,
			`service "init": user "0:0" is uid 0`},
		{"user missing", "docker-compose.yml", "    user: \"10001\"\n", "",
			`service "worker": user is not set`},
		{"restart missing", "docker-compose.yml", "    restart: unless-stopped\n", "",
			`service "worker": no restart policy`},
		{"health gate without healthcheck", "docker-compose.yml", "    healthcheck:\n      test: [\"CMD\", \"true\"]\n", "",
			`service "worker" waits for "kafka" to be healthy, but "kafka" has no healthcheck`},
		{"admin port moved in compose", "docker-compose.yml", "    command: [\"worker\"]\n", "    command: [\"worker\"]\n    environment:\n      TRAWLER_ADMIN_ADDR: \":9200\"\n",
			`Trawler service "worker" is not scraped on its admin port (want target worker:9200)`},
		{"admin port moved in Dockerfile", "Dockerfile", `":9100"`, `":9300"`,
			"(want target worker:9300)"},
		{"admin address without port", "Dockerfile", `":9100"`, `"9100"`,
			`service "worker": TRAWLER_ADMIN_ADDR "9100"`},
		{"target not scraped", "deploy/prometheus/prometheus.yml", `"worker:9100"`, `"worker:9101"`,
			`Trawler service "worker" is not scraped`},
		{"scrape of unknown service", "deploy/prometheus/prometheus.yml", `["worker:9100"]`, `["worker:9100", "wroker:9100"]`,
			`job "worker" scrapes wroker:9100, but there is no compose service "wroker"`},
		{"scrape target without port", "deploy/prometheus/prometheus.yml", `["worker:9100"]`, `["worker"]`,
			`static target "worker"`},
		{"metrics path", "deploy/prometheus/prometheus.yml", "  - job_name: worker\n", "  - job_name: worker\n    metrics_path: /stats\n",
			"but Trawler serves /metrics"},
		{"prometheus key misspelt", "deploy/prometheus/prometheus.yml", "scrape_configs:", "scrape_config:",
			"field scrape_config not found"},
		{"dns discovery without port", "deploy/prometheus/prometheus.yml", "    static_configs:\n      - targets: [\"worker:9100\"]\n", "    dns_sd_configs:\n      - names: [worker]\n        type: A\n",
			"type A needs a port"},
		{"rule file missing", "deploy/prometheus/prometheus.yml", "  - rules/*.yml", "  - rules/*.yaml",
			"rule file rules/*.yaml (deploy/prometheus/rules/*.yaml on the host) does not exist"},
		{"rule file not mounted", "deploy/prometheus/prometheus.yml", "  - rules/*.yml", "  - /opt/rules.yml",
			`rule file /opt/rules.yml is not bind-mounted into service "prometheus"`},
		{"rule without expr", "deploy/prometheus/rules/trawler.yml", "expr: up == 0", `expr: ""`,
			`rule file deploy/prometheus/rules/trawler.yml: group "fixture" rule 0: expr is empty`},
		{"rule file bad YAML", "deploy/prometheus/rules/trawler.yml", "  - name: fixture\n", "  - name: fixture\n   oops: [\n",
			"rule file deploy/prometheus/rules/trawler.yml: yaml: line"},
		{"datasource on unknown host", "deploy/grafana/provisioning/datasources/prometheus.yml", "http://prometheus:9090", "http://prom:9090",
			`url "http://prom:9090": no compose service "prom"`},
		{"two default datasources", "deploy/grafana/provisioning/datasources/prometheus.yml", "    isDefault: true\n", "    isDefault: true\n  - name: Other\n    type: prometheus\n    url: http://prometheus:9090\n    isDefault: true\n",
			"2 datasources are marked isDefault"},
		{"provider path not mounted", "deploy/grafana/provisioning/dashboards/provider.yml", "/var/lib/grafana/dashboards", "/etc/dashboards",
			`options.path "/etc/dashboards" is not bind-mounted into service "grafana"`},
		{"dashboard bad JSON", "deploy/grafana/dashboards/fixture.json", `"title": "Fixture",`, `"title": "Fixture"`,
			"fixture.json: line 4 column 3"},
		{"dashboard without uid", "deploy/grafana/dashboards/fixture.json", `"uid": "fixture",`, ``,
			"fixture.json: uid and title are required"},
		{"dashboard on unknown datasource", "deploy/grafana/dashboards/fixture.json", `{"uid": "prom"}`, `{"uid": "loki"}`,
			`panel "Nested" uses datasource uid "loki", which is not provisioned`},
		{"file under deploy not mounted", "deploy/grafana/stale.yml", "", "apiVersion: 1\n",
			"deploy/grafana/stale.yml: no service mounts it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := copyTree(t, "testdata/stack")
			if tt.old == "" {
				if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.new), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				edit(t, dir, tt.file, tt.old, tt.new)
			}
			wantError(t, CheckCompose(context.Background(), dir, filepath.Join(dir, "docker-compose.yml")), tt.wantError)
		})
	}
}

// TestRepositoryComposeBreakages makes the edits a later change is likely
// to make to the real files, and checks the rules catch them.
func TestRepositoryComposeBreakages(t *testing.T) {
	tests := []breakage{
		{"stream dropped from scraping", "deploy/prometheus/prometheus.yml", "      - names: [\"worker-bypm\"]\n        type: A\n        port: 9100\n", "",
			`Trawler service "worker-bypm" is not scraped on its admin port (want target worker-bypm:9100)`},
		{"new role not scraped", "docker-compose.yml", "  cdxwriter:\n", "  renderer:\n    <<: *trawler\n    command: [\"renderer\"]\n\n  cdxwriter:\n",
			`Trawler service "renderer" is not scraped`},
		{"worker as root", "docker-compose.yml", "  worker-npld:\n    <<: *trawler\n", "  worker-npld:\n    <<: *trawler\n    user: root\n",
			`service "worker-npld": user "root" is root`},
		{"alerts file renamed", "docker-compose.yml", "./deploy/prometheus/alerts.yml:", "./deploy/prometheus/alerting.yml:",
			"bind mount source deploy/prometheus/alerting.yml does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"docker-compose.yml", "Dockerfile"} {
				data, err := os.ReadFile(filepath.Join(repoRoot, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			copyTreeTo(t, filepath.Join(repoRoot, "deploy"), filepath.Join(dir, "deploy"))
			edit(t, dir, tt.file, tt.old, tt.new)
			wantError(t, CheckCompose(context.Background(), dir, filepath.Join(dir, "docker-compose.yml")), tt.wantError)
		})
	}
}
