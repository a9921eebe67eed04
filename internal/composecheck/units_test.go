package composecheck

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
)

func TestCheckBraces(t *testing.T) {
	tests := []struct {
		name, src, wantErr string
	}{
		{"plain text", "a: b\n", ""},
		{"actions", "a: {{ .x }}\n{{- if .y }}b{{ end -}}\n", ""},
		{"braces in strings", `{{ printf "}}{{" }} {{ "a\"}}" }} {{ ` + "`}}`" + ` }} {{ '}' }}`, ""},
		{"comment holding braces", "{{/* {{ }} */}}\n{{- /* x */ -}}", ""},
		{"unclosed action", "a: 1\nb: {{ .x\n", "t.yaml:2:4: action is not closed"},
		{"stray close", "a: 1\n  b: x }}\n", `t.yaml:2:8: "}}" closes no action`},
		{"nested open", "{{ if .a }}\n{{ .b {{ .c }}\n", `t.yaml:2:7: "{{" inside the action opened at 2:1`},
		{"unclosed string", "{{ printf \"abc }}\n", "t.yaml:1:11: string literal"},
		{"unclosed comment", "{{/* never ends\n", "t.yaml:1:3: comment is not closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckBraces("t.yaml", tt.src)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckBraces: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckBraces error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestHostPorts(t *testing.T) {
	tests := []struct {
		name    string
		pc      types.ServicePortConfig
		want    []portKey
		wantErr bool
	}{
		{"unpublished", types.ServicePortConfig{Target: 80}, nil, false},
		{"all interfaces", types.ServicePortConfig{Published: "80", HostIP: "0.0.0.0"}, []portKey{{"", 80, "tcp"}}, false},
		{"loopback udp", types.ServicePortConfig{Published: "53", HostIP: "127.0.0.1", Protocol: "udp"}, []portKey{{"127.0.0.1", 53, "udp"}}, false},
		{"range", types.ServicePortConfig{Published: "8000-8002"}, []portKey{{"", 8000, "tcp"}, {"", 8001, "tcp"}, {"", 8002, "tcp"}}, false},
		{"not a number", types.ServicePortConfig{Published: "http"}, nil, true},
		{"reversed range", types.ServicePortConfig{Published: "9-1"}, nil, true},
		{"out of range", types.ServicePortConfig{Published: "70000"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := hostPorts(tt.pc)
			if (err != nil) != tt.wantErr {
				t.Fatalf("hostPorts error = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("hostPorts = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPortConflicts(t *testing.T) {
	tests := []struct {
		a, b portKey
		want bool
	}{
		{portKey{"", 80, "tcp"}, portKey{"127.0.0.1", 80, "tcp"}, true},
		{portKey{"127.0.0.1", 80, "tcp"}, portKey{"127.0.0.2", 80, "tcp"}, false},
		{portKey{"", 80, "tcp"}, portKey{"", 80, "udp"}, false},
		{portKey{"", 80, "tcp"}, portKey{"", 81, "tcp"}, false},
	}
	for _, tt := range tests {
		if got := tt.a.conflicts(tt.b); got != tt.want {
			t.Errorf("%v conflicts with %v = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestNonRootUser(t *testing.T) {
	for _, ok := range []string{"10001", "10001:10001", "trawler", "nobody:nogroup", "1:0"} {
		if err := nonRootUser(ok); err != nil {
			t.Errorf("nonRootUser(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "root", "root:trawler", "0", "0:10001", "00"} {
		if err := nonRootUser(bad); err == nil {
			t.Errorf("nonRootUser(%q) = nil, want an error", bad)
		}
	}
}

func TestReadDockerfileEnv(t *testing.T) {
	tests := []struct {
		name, src string
		want      map[string]string
		wantErr   string
	}{
		{"forms", "FROM x\nENV A=1 B=\"two\"\nenv C three words\nENV D=4 \\\n    E=':5'\nRUN echo ENV=no\n",
			map[string]string{"A": "1", "B": "two", "C": "three words", "D": "4", "E": ":5"}, ""},
		{"none", "FROM x\n", map[string]string{}, ""},
		{"legacy without value", "FROM x\nENV ALONE\n", nil, "ENV instruction 2: \"ALONE\" has no value"},
		{"empty key", "FROM x\nENV A=1 =2\n", nil, "ENV instruction 2: \"=2\" is not KEY=VALUE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "Dockerfile")
			if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadDockerfileEnv(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("env = %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := ReadDockerfileEnv(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing Dockerfile: want an error")
	}
}

// TestRepositoryDockerfile pins the image contract the compose file, the
// chart and the admin-port rule rely on.
func TestRepositoryDockerfile(t *testing.T) {
	env, err := ReadDockerfileEnv(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if env["TRAWLER_ADMIN_ADDR"] != ":9100" || env["TRAWLER_DATA"] != "/data" {
		t.Errorf("Dockerfile ENV = %v, want TRAWLER_ADMIN_ADDR=:9100 and TRAWLER_DATA=/data", env)
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"FROM golang:${GO_VERSION}-bookworm AS build", "CGO_ENABLED=0", "-trimpath", "-X main.version=${VERSION}",
		"FROM debian:bookworm-slim", "USER 10001:10001", `ENTRYPOINT ["trawler"]`, "EXPOSE 9100 8081", "./cmd/trawler",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}

// TestRepositoryDockerfileRenderer pins the renderer image: a stage named
// renderer, built on the runtime stage, installing Chromium and fonts as
// root and then running as 10001 again; and a last stage (the default
// target, which the other roles build) without Chromium.
func TestRepositoryDockerfileRenderer(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// Split into stages at each FROM, following line continuations.
	var stages []string
	for _, line := range strings.Split(strings.ReplaceAll(string(data), "\\\n", " "), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.EqualFold(f[0], "FROM") {
			stages = append(stages, "")
		}
		if len(stages) > 0 && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			stages[len(stages)-1] += line + "\n"
		}
	}
	var renderer string
	for _, st := range stages {
		if strings.HasPrefix(st, "FROM runtime AS renderer\n") {
			renderer = st
		}
	}
	if renderer == "" {
		t.Fatalf("no stage \"FROM runtime AS renderer\" among %d stages", len(stages))
	}
	for _, want := range []string{"chromium", "fonts-liberation", "fonts-dejavu-core", "fonts-noto-color-emoji", "rm -rf /var/lib/apt/lists/*"} {
		if !strings.Contains(renderer, want) {
			t.Errorf("renderer stage does not install %q", want)
		}
	}
	users := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindAllStringSubmatch(renderer, -1)
	if len(users) == 0 || users[len(users)-1][1] != "10001:10001" {
		t.Errorf("renderer stage's last USER is %v, want 10001:10001", users)
	}
	last := stages[len(stages)-1]
	if !strings.HasPrefix(last, "FROM runtime\n") || strings.Contains(last, "chromium") {
		t.Errorf("last stage (the default target) = %q, want the plain runtime", last)
	}
}

func TestHelmFuncs(t *testing.T) {
	if got := quote("a", nil, 3); got != `"a" "3"` {
		t.Errorf("quote = %s", got)
	}
	if got := defaultValue("d", ""); got != "d" {
		t.Errorf("default of empty = %v", got)
	}
	if got := defaultValue("d", 0); got != "d" {
		t.Errorf("default of 0 = %v", got)
	}
	if got := defaultValue("d", "x"); got != "x" {
		t.Errorf("default of x = %v", got)
	}
	if got := defaultValue("d"); got != "d" {
		t.Errorf("default of nothing = %v", got)
	}
	if _, err := required("need x", nil); err == nil || err.Error() != "need x" {
		t.Errorf("required(nil) error = %v", err)
	}
	if v, err := required("need x", "x"); err != nil || v != "x" {
		t.Errorf("required(x) = %v, %v", v, err)
	}
	if got := trunc(3, "abcdef"); got != "abc" {
		t.Errorf("trunc = %q", got)
	}
	if got := indent(2, "a\nb"); got != "  a\n  b" {
		t.Errorf("indent = %q", got)
	}
	got, err := toYAML(map[string]any{"b": []any{"x"}, "a": map[string]any{"c": true}})
	if err != nil || got != "a:\n  c: true\nb:\n  - x" {
		t.Errorf("toYaml = %q, %v", got, err)
	}
	for _, v := range []any{nil, "", 0, false, map[string]any{}, []any{}} {
		if !isEmpty(v) {
			t.Errorf("isEmpty(%#v) = false", v)
		}
	}
	for _, v := range []any{"a", 1, true, map[string]any{"a": 1}, []any{1}} {
		if isEmpty(v) {
			t.Errorf("isEmpty(%#v) = true", v)
		}
	}
}

func TestMergeValues(t *testing.T) {
	base := map[string]any{"a": map[string]any{"x": 1, "y": 2}, "b": 1}
	got := mergeValues(base, map[string]any{"a": map[string]any{"y": 3}, "c": 4})
	want := map[string]any{"a": map[string]any{"x": 1, "y": 3}, "b": 1, "c": 4}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merge = %v, want %v", got, want)
	}
	if base["a"].(map[string]any)["y"] != 2 {
		t.Fatal("merge changed its input")
	}
}

func TestHelmNumbers(t *testing.T) {
	got := helmNumbers(map[string]any{"a": 1, "b": []any{2, "x"}, "c": map[string]any{"d": 1.5}})
	want := map[string]any{"a": 1.0, "b": []any{2.0, "x"}, "c": map[string]any{"d": 1.5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("helmNumbers = %v, want %v", got, want)
	}
}
