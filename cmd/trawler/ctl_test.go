package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/control"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// startAPI serves the worker's admin API over a frontier with one queued
// URI, on a real listener, and returns its base URL and token file.
func startAPI(t *testing.T) (base, tokenFile string, cl *kgo.Client, rdb *redis.Client) {
	t.Helper()
	ctx := context.Background()
	rdb = embeddedtest.Redis(t)
	kc, cl := embeddedtest.Kafka(t, 1)
	p := profile.Default()
	f, err := frontier.New(rdb, "fc-npld", frontier.OptionsFrom(p))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Admit(ctx, []frontier.Candidate{{Launch: messages.Launch{URL: "http://a.example/x", Hop: "L",
		ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:9"}}},
		Policy: frontier.PolicyOf(p)}}); err != nil {
		t.Fatal(err)
	}
	h, closeAPI, err := api.Build(ctx, api.Setup{Profile: p, Redis: rdb, Frontier: f, Kafka: kc, Crawl: "fc",
		Stream: "npld", BaseDir: t.TempDir(), Version: "test", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeAPI)
	adm, err := admin.Listen("127.0.0.1:0", prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = adm.Close() })
	if err := adm.MountAPI(admin.Tokens{Operator: admin.StaticToken("ctl-token")}, h); err != nil {
		t.Fatal(err)
	}
	tokenFile = filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("ctl-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return "http://" + adm.Addr(), tokenFile, cl, rdb
}

func TestCtl(t *testing.T) {
	base, tokenFile, cl, rdb := startAPI(t)
	t.Setenv("TRAWLER_ADMIN_TOKEN_FILE", "")
	flags := []string{"--api", base, "--token-file", tokenFile}
	ctl := func(args ...string) (int, string, string) {
		t.Helper()
		return runCLI(t, append([]string{"ctl"}, args...)...)
	}

	code, out, errOut := ctl(append([]string{"status"}, flags...)...)
	if code != 0 || !strings.Contains(out, "frontier fc-npld") || !strings.Contains(out, "a.example 1") ||
		!strings.Contains(out, "tid:9 1 queued, 0 in flight") {
		t.Fatalf("status: %d\n%s%s", code, out, errOut)
	}
	// Global flags may come before the command too.
	code, out, errOut = ctl(append(flags, "status", "--json")...)
	var st api.Status
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Queued != 1 || st.TargetsTotal != 1 || st.TopHostsAt == nil ||
		st.Targets[0] != (frontier.TargetCount{Source: "tid:9", Queued: 1}) {
		t.Fatalf("status --json: %d %v\n%s%s", code, err, out, errOut)
	}
	code, out, errOut = ctl(append([]string{"explain", "http://a.example/x", "--hops", "L", "--via", "http://a.example/"}, flags...)...)
	if code != 0 || !strings.Contains(out, "surt      http://(example,a,)/x") || !strings.Contains(out, "scope") ||
		!strings.Contains(out, "1 queued") || !strings.Contains(out, "queued in host queue a.example, level 2, position 0") {
		t.Fatalf("explain: %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := ctl(append([]string{"explain", "mailto:x@y"}, flags...)...); code != 1 || !strings.Contains(errOut, "400") {
		t.Fatalf("explain of a bad URL: %d %s", code, errOut)
	}

	ids := map[string]string{}
	want := map[string]messages.Control{}
	for _, tc := range []struct {
		args []string
		want messages.Control
	}{
		{[]string{"resume"}, messages.Control{Command: "resume"}},
		{[]string{"pause", "--target", "src-1"}, messages.Control{Command: "pause", Scope: "target", Source: "src-1"}},
		{[]string{"pause", "--host", "a.example"}, messages.Control{Command: "pause", Scope: "host", Host: "a.example"}},
		{[]string{"terminate", "--stream", "npld"}, messages.Control{Command: "terminate", Scope: "stream", Stream: "npld"}},
		{[]string{"terminate", "--target", "src-2"}, messages.Control{Command: "terminate", Scope: "target", Source: "src-2"}},
		{[]string{"terminate", "--host", "b.example"}, messages.Control{Command: "terminate", Scope: "host", Host: "b.example"}},
		{[]string{"seeds", "http://b.example/", "http://c.example/"}, messages.Control{Command: "seeds", URLs: []string{"http://b.example/", "http://c.example/"}}},
		{[]string{"exclude", "remove", "http://(example,bad,"}, messages.Control{Command: "exclusions", Action: "remove", SURTs: []string{"http://(example,bad,"}}},
		{[]string{"sheets", "http://(example,a,", "noLimit", "fast-2ps"}, messages.Control{Command: "sheets", SURTs: []string{"http://(example,a,"}, Sheets: []string{"noLimit", "fast-2ps"}}},
		{[]string{"delete", "--regex", "^http://a\\.example/x"}, messages.Control{Command: "delete", Regex: "^http://a\\.example/x"}},
	} {
		code, out, errOut := ctl(append(append(tc.args, "--wait", "0s"), flags...)...)
		if code != 0 || !strings.Contains(out, "to fc.control: id ") || !strings.Contains(out, "not acknowledged within") {
			t.Fatalf("%v: %d\n%s%s", tc.args, code, out, errOut)
		}
		id := strings.Fields(out[strings.Index(out, "id ")+3:])[0]
		ids[id] = tc.args[0]
		want[id] = tc.want
	}
	// Every command is on the topic, with its id.
	cons, err := kgo.NewClient(kgo.SeedBrokers(cl.OptValue(kgo.SeedBrokers).([]string)...),
		kgo.ConsumeTopics("fc.control"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for len(ids) > 0 && ctx.Err() == nil {
		cons.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var c messages.Control
			_ = json.Unmarshal(r.Value, &c)
			if ids[c.ID] == "" {
				return
			}
			w := want[c.ID]
			w.ID, w.Timestamp, w.By = c.ID, c.Timestamp, c.By
			if !reflect.DeepEqual(c, w) || string(r.Key) != "*" || !strings.HasPrefix(c.By, "ctl") {
				t.Errorf("record %s: %+v, want %+v", r.Key, c, w)
			}
			delete(ids, c.ID)
		})
	}
	if len(ids) > 0 {
		t.Fatalf("commands not on fc.control: %v", ids)
	}

	// An acknowledgement a worker wrote is shown by ack.
	if code, _, errOut := ctl(append([]string{"ack", "nope-1"}, flags...)...); code != 1 || !strings.Contains(errOut, "not acknowledged") {
		t.Fatalf("ack of an unknown id: %d %s", code, errOut)
	}
	rdb.HSet(context.Background(), control.AckKey("fc", "c-1"), "command", "pause", "worker", "w1", "result", "paused 3 hosts",
		"applied_at", time.Now().UTC().Format(time.RFC3339Nano), "r:fc-npld", "w1: paused 3 hosts")
	if code, out, errOut := ctl(append([]string{"ack", "c-1"}, flags...)...); code != 0 || !strings.Contains(out, "acknowledged: pause applied by w1") ||
		!strings.Contains(out, "fc-npld: w1: paused 3 hosts") {
		t.Fatalf("ack: %d\n%s%s", code, out, errOut)
	}

	// Without a token ctl refuses before asking; with a wrong one the API does.
	if code, _, errOut := ctl("--api", base, "status"); code != 1 || !strings.Contains(errOut, "no admin token") {
		t.Fatalf("no token: %d %s", code, errOut)
	}
	wrong := filepath.Join(t.TempDir(), "wrong")
	_ = os.WriteFile(wrong, []byte("nope"), 0o600)
	if code, _, errOut := ctl("--api", base, "--token-file", wrong, "status"); code != 1 || !strings.Contains(errOut, "401") {
		t.Fatalf("wrong token: %d %s", code, errOut)
	}
	if code, _, _ := ctl(append([]string{"delete", "--surt", "a", "--regex", "b"}, flags...)...); code != 2 {
		t.Fatalf("delete with both: exit %d, want 2", code)
	}
}

// --help exits 0 on ctl and every ctl command.
func TestCtlHelp(t *testing.T) {
	for _, args := range [][]string{{"ctl", "--help"}, {"ctl", "help"}, {"ctl", "status", "--help"},
		{"ctl", "explain", "--help"}, {"ctl", "pause", "--help"}, {"ctl", "resume", "--help"},
		{"ctl", "terminate", "--help"}, {"ctl", "seeds", "--help"}, {"ctl", "exclude", "--help"},
		{"ctl", "exclude", "add", "--help"}, {"ctl", "sheets", "--help"}, {"ctl", "delete", "--help"}, {"ctl", "ack", "--help"}} {
		if code, out, errOut := runCLI(t, args...); code != 0 || !strings.Contains(out+errOut, "-api") && !strings.Contains(out+errOut, "usage") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// The top hosts are printed with how long before the status they were
// read, or as being read.
func TestPrintStatusTopHosts(t *testing.T) {
	at := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { t := at.Add(-d); return &t }
	hosts := []api.HostCount{{Host: "a.example", Queued: 9}, {Host: "b.example", Queued: 2}}
	tests := []struct {
		name  string
		top   []api.HostCount
		topAt *time.Time
		want  []string
	}{
		{"just read", hosts, ago(300 * time.Millisecond), []string{"top hosts  a.example 9\n", "           b.example 2\n"}},
		{"read before", hosts, ago(42 * time.Second), []string{"top hosts (42s before)  a.example 9\n"}},
		{"being read", nil, nil, []string{"top hosts  being read (a scan of every host)\n"}},
		{"an older server, without the time", hosts, nil, []string{"top hosts  a.example 9\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := printStatus(&b, &api.Status{Crawl: "fc", At: at, Queued: 11, TopHosts: tc.top, TopHostsAt: tc.topAt}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in\n%s", w, b.String())
				}
			}
		})
	}
}
