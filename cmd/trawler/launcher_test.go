package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// launcherFeed writes a small crawl feed: two DAILY targets at 09:00 and
// 10:00 (London), a watched one, a NEVERCRAWL one and a bad line.
func launcherFeed(t *testing.T) string {
	t.Helper()
	lines := []string{
		`{"id": 1, "title": "nine", "seeds": ["https://nine.example.org/", "https://nine.example.org/b/"], "schedules": [{"startDate": "2024-01-01 09:00:00", "endDate": "", "frequency": "DAILY"}], "watched": true, "documentUrlScheme": "https://nine.example.org/docs/"}`,
		`{"id": 2, "title": "ten", "seeds": ["https://ten.example.org/"], "scope": "plus1", "schedules": [{"startDate": "2024-01-01 10:00:00", "endDate": "", "frequency": "DAILY"}]}`,
		`{"id": 3, "title": "blocked", "seeds": ["https://blocked.example.org/x/y"], "schedules": [{"startDate": "2024-01-01 00:00:00", "frequency": "NEVERCRAWL"}]}`,
		`{"id": 4, "title": "broken", "seeds": [`,
	}
	path := filepath.Join(t.TempDir(), "feed.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLauncherHelp(t *testing.T) {
	tests := []struct {
		verb string
		want []string
	}{
		{"run", []string{"-feed", "-at", "-dry-run", "-all-active", "-time-zone", `(default "Europe/London")`, "-redis", "-kafka", "-record-ttl"}},
		{"serve", []string{"-admin-addr", `(default ":9100")`, "-catch-up-hours", "-retry-delay", "-redis"}},
		{"bulk", []string{"-input", "-scope-file", "-job", "-restart", "-checkpoint-every", `(default "dc")`}},
		{"export", []string{"-feed", "-watched", "-excluded"}},
	}
	for _, tc := range tests {
		code, _, errOut := runCLI(t, "launcher", tc.verb, "--help")
		if code != 0 {
			t.Fatalf("%s --help: exit %d", tc.verb, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("launcher %s --help lacks %q:\n%s", tc.verb, w, errOut)
			}
		}
	}
}

func TestLauncherBadInput(t *testing.T) {
	feed := launcherFeed(t)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"no verb", nil, []string{"launcher"}, 2, "verbs:"},
		{"unknown verb", nil, []string{"launcher", "launch"}, 1, `unknown verb "launch"`},
		{"run without feed", nil, []string{"launcher", "run", "--dry-run"}, 1, "no feed given (--feed)"},
		{"bad --at", nil, []string{"launcher", "run", "--dry-run", "--feed", feed, "--at", "2024-01-17 09:00"}, 1, `--at "2024-01-17 09:00": want an RFC 3339 time`},
		{"bad zone from env", map[string]string{"TRAWLER_TIME_ZONE": "Mars/Olympus"}, []string{"launcher", "run", "--dry-run", "--feed", feed}, 1, `time zone "Mars/Olympus"`},
		{"bad crawl", nil, []string{"launcher", "run", "--feed", feed, "--crawl", "xx"}, 1, `crawl "xx"`},
		{"negative ttl", nil, []string{"launcher", "run", "--feed", feed, "--record-ttl", "-1h"}, 1, "record TTL is negative"},
		{"bad redis address", nil, []string{"launcher", "run", "--feed", feed, "--redis", "nohost"}, 1, `redis: address "nohost"`},
		{"missing feed file", nil, []string{"launcher", "run", "--dry-run", "--feed", feed + ".missing", "--at", "2024-01-17T09:00:00Z"}, 1, "feed.jsonl.missing"},
		{"bulk without input", nil, []string{"launcher", "bulk"}, 1, "no input given (--input)"},
		{"export without files", nil, []string{"launcher", "export", "--feed", feed}, 1, "nothing to export"},
		{"serve all-active", nil, []string{"launcher", "serve", "--dry-run", "--all-active", "--feed", feed, "--admin-addr", "127.0.0.1:0"}, 1, "hourly rule only"},
		{"undefined flag", nil, []string{"launcher", "run", "--feeds", feed}, 2, "unknown flag --feeds (did you mean --feed?)"},
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

// --dry-run prints the hour's launches, one JSON message per line, and
// the summary on stderr, bad line included.
func TestLauncherRunDryRun(t *testing.T) {
	feed := launcherFeed(t)
	code, out, errOut := runCLI(t, "launcher", "run", "--dry-run", "--feed", feed, "--at", "2024-07-01T09:15:00+01:00", "--log-level", "error")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("stdout:\n%s", out)
	}
	for _, line := range lines {
		l, err := messages.DecodeLaunch([]byte(line))
		if err != nil || l.LaunchTimestamp() != "20240701080000" || l.Source() != "tid:1:https://nine.example.org/" {
			t.Errorf("line %s: %v", line, err)
		}
	}
	for _, want := range []string{"3 targets read", "1 due", "1 launched (2 messages)", "skipped {excluded_frequency=1 not_due=1}", "1 bad lines",
		"bad line " + feed + ":4: invalid JSON"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// A real run against Kafka and Redis: the second run of the hour sends
// nothing; --all-active launches every active target.
func TestLauncherRunIdempotent(t *testing.T) {
	kc, _ := embeddedtest.Kafka(t, 2)
	rdb := embeddedtest.Redis(t)
	feed := launcherFeed(t)
	base := []string{"launcher", "run", "--feed", feed, "--kafka", kc.Brokers[0], "--redis", rdb.Options().Addr, "--log-format", "json"}
	at := []string{"--at", "2024-01-17T10:00:00Z"}
	summaries := []string{"1 launched (1 messages)", "0 launched (0 messages)", "2 launched (3 messages)"}
	for i, extra := range [][]string{at, at, {"--all-active", "--at", "2024-01-18T11:00:00Z"}} {
		code, out, errOut := runCLI(t, append(clone(base), extra...)...)
		if code != 0 || out != "" || !strings.Contains(errOut, summaries[i]) {
			t.Fatalf("run %d: exit %d, stdout %q, stderr:\n%s", i+1, code, out, errOut)
		}
	}
	cl, err := kafka.NewClient(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(context.Background(), "fc.tocrawl.npld")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			t.Errorf("end offset of %s/%d: %v", o.Topic, o.Partition, o.Err)
		}
		total += o.Offset
	})
	if total != 4 {
		t.Errorf("%d records in fc.tocrawl.npld, want 4", total)
	}
}

func clone(s []string) []string { return append([]string(nil), s...) }

func TestLauncherBulkAndExport(t *testing.T) {
	kc, _ := embeddedtest.Kafka(t, 2)
	rdb := embeddedtest.Redis(t)
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(seeds, []byte("# seeds\nhttps://www.one.example.uk/a/b\ntwo.example.uk\nftp://bad.example.uk/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	scope := filepath.Join(dir, "scope.txt")
	args := []string{"launcher", "bulk", "--input", seeds, "--scope-file", scope, "--kafka", kc.Brokers[0], "--redis", rdb.Options().Addr}
	code, _, errOut := runCLI(t, args...)
	if code != 0 || !strings.Contains(errOut, "4 lines, 2 seeds sent") || !strings.Contains(errOut, "seeds.txt:4:") {
		t.Fatalf("bulk: exit %d:\n%s", code, errOut)
	}
	if b, _ := os.ReadFile(scope); !strings.HasSuffix(string(b), "+http://(uk,example,one,www,)/a/\n+http://(uk,example,two,\n") {
		t.Errorf("scope file:\n%s", b)
	}
	if code, _, errOut = runCLI(t, args...); code != 0 || !strings.Contains(errOut, "0 seeds sent") || !strings.Contains(errOut, "4 lines resumed past") {
		t.Fatalf("bulk again: exit %d:\n%s", code, errOut)
	}

	watched, excluded := filepath.Join(dir, "watched.jsonl"), filepath.Join(dir, "excluded.txt")
	code, _, errOut = runCLI(t, "launcher", "export", "--feed", launcherFeed(t), "--watched", watched, "--excluded", excluded)
	if code != 0 || !strings.Contains(errOut, "1 watched (2 seeds), 1 NEVERCRAWL (1 SURT prefixes), 1 bad lines") {
		t.Fatalf("export: exit %d:\n%s", code, errOut)
	}
	if b, _ := os.ReadFile(excluded); !strings.HasSuffix(string(b), "\n+http://(org,example,blocked,)/x/\n") {
		t.Errorf("excluded:\n%s", b)
	}
	if b, _ := os.ReadFile(watched); strings.Count(string(b), `"targetId":1,`) != 2 {
		t.Errorf("watched:\n%s", b)
	}
}

// syncWriter is a stderr the test reads while serve writes it.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// serve runs its first hour at once, answers /healthz /readyz /metrics on
// the admin listener, and stops cleanly when its context ends (SIGTERM).
func TestLauncherServe(t *testing.T) {
	kc, _ := embeddedtest.Kafka(t, 2)
	rdb := embeddedtest.Redis(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &syncWriter{}
	done := make(chan error, 1)
	go func() {
		done <- runLauncher(ctx, []string{"serve", "--feed", launcherFeed(t), "--kafka", kc.Brokers[0], "--redis", rdb.Options().Addr,
			"--admin-addr", "127.0.0.1:0", "--log-format", "json"}, io.Discard, stderr)
	}()
	addrRE := regexp.MustCompile(`"admin":"(127\.0\.0\.1:\d+)"`)
	var base string
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := addrRE.FindStringSubmatch(stderr.String()); m != nil && strings.Contains(stderr.String(), "launch run finished") {
			base = "http://" + m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start and run:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
	for path, want := range map[string]string{"/healthz": "ok", "/readyz": "ready", "/metrics": `trawler_launcher_runs_total{result="ok"}`} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %q, want %q", path, resp.StatusCode, body, want)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	if !strings.Contains(stderr.String(), "launcher stopping") {
		t.Errorf("no stop log:\n%s", stderr.String())
	}
}
