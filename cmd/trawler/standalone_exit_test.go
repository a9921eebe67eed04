package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A standalone run that archives nothing because its input was refused
// or rejected exits 3 and says why: seeds on loopback without
// fetch.allowPrivateAddresses (each host's refusal logged at WARN once,
// the summary's hint naming the setting), a feed of bad lines. With the
// setting the same seeds are crawled and the run exits 0.
func TestStandaloneNothingArchivedExitStatus(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>" + r.URL.Path + "</body></html>"))
	}))
	t.Cleanup(site.Close)
	feed := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(feed, []byte("not json at all\n{\"id\": \"x\", \"seeds\": \"http://a.example/\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// robots.txt ignored: both seeds are fetched (and refused), so the
	// one WARN line shows the host is logged once.
	seeds := []string{"--seed", site.URL + "/a", "--seed", site.URL + "/b", "--set", "robots.policy=ignore"}
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // substrings
		stderr   []string
		refusals int // "address guard refused" lines in the log
	}{
		{"seeds on loopback", seeds, exitNothingArchived,
			[]string{"hint:", "every seed was refused by the address guard", "127.0.0.1 is loopback", "fetch.allowPrivateAddresses=true"},
			[]string{"trawler standalone: nothing was archived: every seed was refused", "fetch.allowPrivateAddresses: true"}, 1},
		// A local feed is read before anything starts: all of it bad ends
		// the run there, with no summary, and the same status.
		{"every feed line bad", []string{"--feed", feed}, exitNothingArchived,
			nil, []string{"every feed line was rejected: no valid target in 2 bad lines", "bad.jsonl:1: invalid JSON"}, 0},
		{"seeds on loopback allowed", append(seeds, "--set", "fetch.allowPrivateAddresses=true"), 0,
			[]string{"200: 2"}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"standalone", "--until-idle", "--data", t.TempDir(), "--threads", "2",
				"--kafka-listen", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--cdx-addr", "",
				"--set", "politeness.minDelayMs=0", "--set", "politeness.delayFactor=0", "--log-level", "warn"}, tt.args...)
			code, stdout, stderr := runCLI(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tt.code == 0 && strings.Contains(stdout, "hint:") {
				t.Errorf("a hint in the summary of a run that archived:\n%s", stdout)
			}
			if n := strings.Count(stderr, "address guard refused"); n != tt.refusals {
				t.Errorf("%d refusal lines, want %d:\n%s", n, tt.refusals, stderr)
			}
		})
	}
}
