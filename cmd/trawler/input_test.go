package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputErrors: bad input is refused before anything starts, with a
// short message naming the key, value or flag and the fix, as the last
// thing printed, and the exit code scripts rely on (2: the command line,
// 1: what it names).
func TestInputErrors(t *testing.T) {
	dir := t.TempDir()
	badType := filepath.Join(dir, "ten.yaml")
	if err := os.WriteFile(badType, []byte("politeness:\n  minDelayMs: ten\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inUse, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inUse.Close() })
	data := filepath.Join(dir, "data")
	// Every standalone run here would otherwise start a crawl: its
	// listeners on free ports, so a failure is the input's alone.
	standalone := func(args ...string) []string {
		return append([]string{"standalone", "--data", data, "--admin-addr", "127.0.0.1:0", "--kafka-listen", "127.0.0.1:0",
			"--cdx-addr", "127.0.0.1:0", "--render", "off"}, args...)
	}
	tests := []struct {
		name string
		args []string
		code int
		last string // the end of stderr
	}{
		{"unknown flag", []string{"standalone", "--seeds", "http://www.example.org/"}, 2,
			"trawler standalone: unknown flag --seeds (did you mean --seed?)\nRun 'trawler standalone --help' for its flags.\n"},
		{"unknown flag, nothing near", []string{"worker", "--frobnicate"}, 2,
			"trawler worker: unknown flag --frobnicate\nRun 'trawler worker --help' for its flags.\n"},
		{"unknown flag of a verb", []string{"launcher", "run", "--feeds", "x.jsonl"}, 2,
			"trawler launcher run: unknown flag --feeds (did you mean --feed?)\nRun 'trawler launcher run --help' for its flags.\n"},
		{"flag value", standalone("--threads", "many"), 2,
			"trawler standalone: invalid value \"many\" for flag -threads: parse error\nRun 'trawler standalone --help' for its flags.\n"},
		{"unknown command", []string{"crawl"}, 2, "trawler: unknown command \"crawl\"\n"},
		{"--set unknown key", standalone("--seed", "http://www.example.org/", "--set", "politeness.minDelayMS=1"), 1,
			"trawler standalone: --set: politeness.minDelayMS: no such setting (did you mean politeness.minDelayMs?)\n"},
		{"--set wrong type", []string{"config", "show", "--set", "politeness.minDelayMs=ten"}, 1,
			"trawler config: --set: politeness.minDelayMs: \"ten\" is not a whole number\n"},
		{"profile wrong type", []string{"profile", "check", badType}, 1,
			"line 2: politeness.minDelayMs: \"ten\" is not a whole number\n"},
		{"profile wrong type in a run", standalone("--seed", "http://www.example.org/", "--profile", badType), 1,
			"ten.yaml: line 2: politeness.minDelayMs: \"ten\" is not a whole number\n"},
		{"seed without a scheme", standalone("--seed", "www.example.org"), 1,
			"trawler standalone: --seed \"www.example.org\": add a scheme: http://www.example.org/\n"},
		{"feed missing", standalone("--feed", filepath.Join(dir, "none.jsonl")), 1, "none.jsonl: no such file or directory\n"},
		{"launcher feed missing", []string{"launcher", "run", "--feed", filepath.Join(dir, "none.jsonl"), "--redis", "127.0.0.1:1"}, 1,
			"trawler launcher: invalid configuration: --feed " + filepath.Join(dir, "none.jsonl") + ": no such file or directory\n"},
		{"CDX port in use", standalone("--seed", "http://www.example.org/", "--cdx-addr", inUse.Addr().String()), 1,
			"trawler standalone: --cdx-addr " + inUse.Addr().String() + ": the port is in use (another crawl on this machine?): " +
				"give --cdx-addr another port, or --ports auto to have free ones chosen\n"},
		{"ports", standalone("--seed", "http://www.example.org/", "--ports", "free"), 1,
			"trawler standalone: --ports \"free\": want fixed or auto\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != tc.code || !strings.HasSuffix(errOut, tc.last) {
				t.Fatalf("exit %d (want %d), stderr:\n%s\nwant it to end with:\n%s", code, tc.code, errOut, tc.last)
			}
			if tc.code == 2 && tc.name != "unknown command" && strings.Contains(errOut, "Usage:") {
				t.Errorf("the usage is printed with the error:\n%s", errOut)
			}
			if strings.Contains(out, "Crawl summary") {
				t.Errorf("a run that never started printed a summary:\n%s", out)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("the data directory was created (stat: %v)", err)
			}
		})
	}
}
