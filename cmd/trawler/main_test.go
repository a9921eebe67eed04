package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersionAndUsage(t *testing.T) {
	if code, out, _ := runCLI(t, "version"); code != 0 || !strings.HasPrefix(out, "trawler ") {
		t.Fatalf("version: %d %q", code, out)
	}
	if code, _, errOut := runCLI(t, "nope"); code != 2 || !strings.Contains(errOut, `unknown command "nope"`) {
		t.Fatalf("unknown command: %d %q", code, errOut)
	}
	code, out, _ := runCLI(t, "--help")
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	for name := range commands() {
		if !strings.Contains(out, "  "+name) {
			t.Errorf("usage does not list %s", name)
		}
	}
}

// Every role's --help lists its flags with their defaults and exits 0.
func TestHelpListsFlagsWithDefaults(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"worker", "--help"}, []string{"-kafka", "-redis", "-threads", `(default 32)`, "-admin-addr", "-set"}},
		{[]string{"cdxwriter", "--help"}, []string{"-crawl", `(default "fc")`, "-kafka"}},
		{[]string{"standalone", "--help"}, []string{"-seed", "-feed", "-until-idle", "-data", `(default "./trawler-data")`}},
		{[]string{"demo", "--help"}, []string{"-site-port", "(default 8480)", "-data"}},
		{[]string{"launcher", "run", "--help"}, []string{"-feed", "-dry-run", "-at"}},
		{[]string{"topics", "apply", "--help"}, []string{"-kafka", "-partitions"}},
		{[]string{"config", "show", "--help"}, []string{"-profile", "-set"}},
		{[]string{"renderer", "--help"}, []string{"-admin-addr"}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("help lacks %q:\n%s", w, errOut)
				}
			}
			if !strings.Contains(errOut, "TRAWLER_") {
				t.Error("help does not explain TRAWLER_* variables")
			}
		})
	}
}

// defaults < profile file < TRAWLER_* environment < flags.
func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(prof, []byte("politeness:\n  minDelayMs: 10\n  maxDelayMs: 1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	show := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCLI(t, append([]string{"config", "show"}, args...)...)
		if code != 0 {
			t.Fatalf("config show %v: %d %s", args, code, errOut)
		}
		return out
	}
	if out := show(); !strings.Contains(out, "minDelayMs: 3000") {
		t.Fatalf("default:\n%s", out)
	}
	if out := show("--profile", prof); !strings.Contains(out, "minDelayMs: 10\n") {
		t.Fatalf("profile:\n%s", out)
	}
	t.Setenv("TRAWLER_SET", "politeness.minDelayMs=20")
	if out := show("--profile", prof); !strings.Contains(out, "minDelayMs: 20\n") {
		t.Fatalf("env over profile:\n%s", out)
	}
	if out := show("--profile", prof, "--set", "politeness.minDelayMs=30"); !strings.Contains(out, "minDelayMs: 30\n") {
		t.Fatalf("flag over env:\n%s", out)
	}
	t.Setenv("TRAWLER_PROFILE", prof)
	if out := show(); !strings.Contains(out, "maxDelayMs: 1000") {
		t.Fatalf("TRAWLER_PROFILE not used:\n%s", out)
	}
}

func TestBadConfiguration(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("politeness:\n  minDelay: 10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty-token")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A role's files are checked before it connects: with Redis at a
	// closed port, reaching it would end in a Redis error, not these.
	noRedis := "127.0.0.1:1"
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"unknown profile key", nil, []string{"config", "show", "--profile", bad}, 1, "line 2: politeness.minDelay: no such setting (did you mean politeness.minDelayMs?)"},
		{"missing profile", nil, []string{"config", "show", "--profile", filepath.Join(dir, "none")}, 1, "no such file"},
		{"bad --set", nil, []string{"config", "show", "--set", "nokey"}, 2, "want key=value"},
		{"bad env value", map[string]string{"TRAWLER_THREADS": "many"}, []string{"worker"}, 1, `TRAWLER_THREADS="many"`},
		{"invalid worker config", nil, []string{"worker", "--crawl", "xx", "--threads", "0"}, 1, `crawl "xx"`},
		{"standalone without seeds", nil, []string{"standalone"}, 2, "at least one --seed or --feed"},
		{"invalid renderer config", nil, []string{"renderer", "--tabs", "0", "--renderer-id", "a/b"}, 1, "tabs 0"},
		{"topics without verb", nil, []string{"topics"}, 2, "usage"},
		{"worker token file missing", nil, []string{"worker", "--redis", noRedis, "--admin-token-file", filepath.Join(dir, "none")}, 1, "admin token file: open"},
		{"worker wayback template without {url}", nil, []string{"worker", "--redis", noRedis, "--wayback-url", "http://w/{timestamp}/"}, 1, "has no {url} to replace"},
		{"standalone wayback template not http", nil, []string{"standalone", "--seed", "http://example.com/", "--wayback-url", "ftp://w/{url}"}, 1, "want an absolute http(s) URL"},
		{"cdxwriter token file empty", nil, []string{"cdxwriter", "--redis", noRedis, "--admin-token-file", empty}, 1, "is empty"},
		{"invalid provenance config", nil, []string{"provenance", "--redis", noRedis, "--crawl", "xx"}, 1, "invalid configuration"},
		{"invalid cdxwriter redis", nil, []string{"cdxwriter", "--redis", "nohost"}, 1, `address "nohost"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, _, errOut := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, tc.code, errOut, tc.want)
			}
		})
	}
}

// Every command and every verb of every command group the binary
// registers answers --help with exit 0, so operators (and scripts probing
// flags) can ask any of them without a broker or Redis.
func TestHelpExitsZeroEverywhere(t *testing.T) {
	var cases [][]string
	groups := verbs()
	for name := range commands() {
		cases = append(cases, []string{name, "--help"}, []string{name, "-h"})
		for _, v := range groups[name] {
			cases = append(cases, []string{name, v, "--help"})
		}
	}
	for g := range groups {
		if _, ok := commands()[g]; !ok {
			t.Errorf("verbs() lists %q, which is not a command", g)
		}
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if code, _, errOut := runCLI(t, args...); code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
		})
	}
	// A group with no verb is still a usage error.
	for g := range groups {
		if code, _, _ := runCLI(t, g); code != 2 {
			t.Errorf("%s without a verb: exit %d, want 2", g, code)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		code, out, errOut := runCLI(t, args...)
		if code != 0 || !strings.HasPrefix(out, "trawler "+buildVersion()) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// A misspelt TRAWLER_* variable is a warning naming the real one, not a
// silently ignored setting.
func TestUnknownEnvWarns(t *testing.T) {
	t.Setenv("TRAWLER_CLAMD_ADR", "clamav:3310")
	t.Setenv("TRAWLER_LOG_LEVL", "debug")
	code, _, errOut := runCLI(t, "worker", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"TRAWLER_CLAMD_ADR is not a setting of this command (ignored); did you mean TRAWLER_CLAMD_ADDR?",
		"TRAWLER_LOG_LEVL is not a setting of this command (ignored); did you mean TRAWLER_LOG_LEVEL?",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// Variables that are flags of the command are not warned about.
	t.Setenv("TRAWLER_THREADS", "4")
	if _, _, errOut := runCLI(t, "worker", "--help"); strings.Contains(errOut, "TRAWLER_THREADS is not") {
		t.Errorf("warned about a real variable:\n%s", errOut)
	}
}
