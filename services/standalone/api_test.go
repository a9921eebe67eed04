package standalone

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/explain"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// apiCall sends one request to the admin API; token "" sends none.
func apiCall(t *testing.T, method, target, token, body string) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// poll retries f until it returns "" or the deadline passes.
func poll(t *testing.T, d time.Duration, f func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		why := f()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s: %s", d, why)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The admin API on a running standalone crawl: every call needs the token;
// status counts the crawl, explain shows a capture's history and deciding
// rule and an exclusion's prefix, control lands on fc.control, and CDX
// writes need the token while reads do not.
func TestStandaloneAdminAPI(t *testing.T) {
	srv := startSite(t, testweb.Config{Seed: 7, Hosts: 2, PagesPerHost: 30})
	dir := t.TempDir()
	const token = "t0ken-for-tests"
	tokenFile := filepath.Join(dir, "admin-token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const readToken = "r3ad-only-for-tests"
	readTokenFile := filepath.Join(dir, "read-token")
	if err := os.WriteFile(readTokenFile, []byte(readToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	seed := srv.Seeds()[0]
	excludedURL := seed + "private/page.html"
	prefix := surt.Heritrix(seed + "private/")
	exclFile := filepath.Join(dir, "excluded.txt")
	if err := os.WriteFile(exclFile, []byte("+"+prefix+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testProfile()
	p.Scope.ExcludedSurtsFile = exclFile
	// Slow enough that the crawl is still going while status is read.
	p.Politeness.MinDelayMs, p.Politeness.MaxDelayMs = 100, 200

	adminAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	cdxAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	kafkaAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
	cfg := Config{DataDir: filepath.Join(dir, "data"), Seeds: srv.Seeds(), AdminAddr: adminAddr, CDXAddr: cdxAddr,
		KafkaListen: kafkaAddr, AdminTokenFile: tokenFile, AdminReadOnlyTokenFile: readTokenFile, Crawl: "fc", Stream: "npld", Threads: 4, Partitions: 2,
		TimeZone: "Europe/London"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := Run(runCtx, cfg, Deps{Profile: p, Resolver: srv.Resolver(),
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: prometheus.NewRegistry(), Version: "test"})
		done <- err
	}()
	defer func() {
		stop()
		if err := <-done; err != nil && runCtx.Err() == nil {
			t.Errorf("standalone run: %v", err)
		}
	}()
	base := "http://" + adminAddr
	poll(t, time.Minute, func() string {
		resp, err := http.Get(base + "/api/v1/status")
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			return fmt.Sprintf("status without token: %d", resp.StatusCode)
		}
		return ""
	})

	// Without the token (or with a wrong one) every call is refused.
	for _, tok := range []string{"", "wrong"} {
		for _, c := range []struct{ method, path, body string }{
			{"GET", "/api/v1/status", ""},
			{"GET", "/api/v1/explain?url=" + url.QueryEscape(seed), ""},
			{"POST", "/api/v1/control", `{"command":"resume"}`},
			{"GET", "/api/v1/nothing", ""},
		} {
			if code, _ := apiCall(t, c.method, base+c.path, tok, c.body); code != http.StatusUnauthorized {
				t.Fatalf("%s %s with token %q: %d, want 401", c.method, c.path, tok, code)
			}
		}
	}
	if code, _ := apiCall(t, "GET", base+"/healthz", "", ""); code != 200 {
		t.Fatalf("healthz without token: %d", code)
	}

	// Status during the crawl.
	var st api.Status
	poll(t, time.Minute, func() string {
		code, b := apiCall(t, "GET", base+"/api/v1/status", token, "")
		if code != 200 {
			return fmt.Sprintf("status %d %s", code, b)
		}
		st = api.Status{}
		if err := json.Unmarshal(b, &st); err != nil {
			return err.Error()
		}
		if st.Totals.URIs == 0 || st.Queued == 0 || len(st.TopHosts) == 0 {
			return fmt.Sprintf("no crawl in progress yet: %s", b)
		}
		// The top hosts are a list read at TopHostsAt, shared by the
		// statuses of the next seconds: not comparable with the total,
		// but recent and in order.
		if st.TopHostsAt == nil || st.TopHostsAt.After(st.At) || st.At.Sub(*st.TopHostsAt) > 10*time.Second {
			return fmt.Sprintf("top hosts read at %v for a status at %v", st.TopHostsAt, st.At)
		}
		for i, h := range st.TopHosts {
			if h.Queued <= 0 || i > 0 && h.Queued > st.TopHosts[i-1].Queued {
				return fmt.Sprintf("top hosts out of order: %+v", st.TopHosts)
			}
		}
		return ""
	})
	if st.Crawl != "fc" || st.Frontier != "fc-npld" || st.Hosts.Total < 2 ||
		st.Limits.ElapsedSeconds <= 0 || st.Limits.Reached != "" {
		t.Fatalf("status: %+v", st)
	}

	// Explain the seed once it is indexed.
	var rep explain.Report
	poll(t, 2*time.Minute, func() string {
		code, b := apiCall(t, "GET", base+"/api/v1/explain?url="+url.QueryEscape(seed), token, "")
		if code != 200 {
			return fmt.Sprintf("explain %d %s", code, b)
		}
		rep = explain.Report{}
		if err := json.Unmarshal(b, &rep); err != nil {
			return err.Error()
		}
		if len(rep.Captures) == 0 || rep.Recent == nil {
			return "seed not indexed yet: " + string(b)
		}
		return ""
	})
	if c := rep.Captures[0]; c.Status != "200" || c.Filename == "" || c.URL != seed {
		t.Fatalf("seed capture: %+v", c)
	}
	if !rep.Scope.Accepted || !strings.HasPrefix(rep.Scope.Decision, "ACCEPT by rule #") || rep.Scope.RuleName == "" ||
		len(rep.Exclusions) != 0 || !rep.Recrawl.HeldBack || rep.Recrawl.DueAt == nil || !rep.Frontier.Known ||
		len(rep.Errors) != 0 {
		t.Fatalf("seed report: %+v", rep)
	}

	var text bytes.Buffer
	_ = rep.WriteText(&text)
	t.Logf("status %+v\n%s", st, text.String())

	// Explain an excluded URL under the seed.
	code, b := apiCall(t, "GET", base+"/api/v1/explain?url="+url.QueryEscape(excludedURL)+"&hops=L&via="+url.QueryEscape(seed), token, "")
	rep = explain.Report{}
	if err := json.Unmarshal(b, &rep); code != 200 || err != nil {
		t.Fatalf("explain excluded: %d %v %s", code, err, b)
	}
	if rep.Scope.Accepted || rep.Scope.RuleName != scope.ExclusionRuleName || len(rep.Exclusions) != 1 ||
		rep.Exclusions[0].Prefix != prefix || !strings.Contains(rep.Verdict, prefix) {
		t.Fatalf("excluded report: %s", b)
	}

	// Bad input is a 400 with a reason.
	for _, c := range []struct{ method, path, body, want string }{
		{"GET", "/api/v1/explain", "", "missing url"},
		{"GET", "/api/v1/explain?url=ftp%3A%2F%2Fx%2F", "", "http or https"},
		{"POST", "/api/v1/control", `{"command":`, "decode control"},
		{"POST", "/api/v1/control", `{"command":"explode"}`, "unknown command"},
	} {
		code, b := apiCall(t, c.method, base+c.path, token, c.body)
		if code != http.StatusBadRequest || !strings.Contains(string(b), c.want) {
			t.Fatalf("%s %s %q: %d %s", c.method, c.path, c.body, code, b)
		}
	}

	// A control command lands on fc.control with its id.
	code, b = apiCall(t, "POST", base+"/api/v1/control", token, `{"command":"resume"}`)
	var acc api.ControlAccepted
	if err := json.Unmarshal(b, &acc); code != http.StatusAccepted || err != nil || acc.ID == "" || acc.Topic != "fc.control" {
		t.Fatalf("control: %d %v %s", code, err, b)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.ConsumeTopics("fc.control"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got *kgo.Record
	for got == nil {
		fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
		fetches := cl.PollFetches(fctx)
		fcancel()
		if fctx.Err() != nil && fetches.NumRecords() == 0 {
			t.Fatal("control command not on fc.control within 30s")
		}
		fetches.EachRecord(func(r *kgo.Record) {
			var c messages.Control
			if json.Unmarshal(r.Value, &c) == nil && c.ID == acc.ID {
				got = r
			}
		})
	}
	var c messages.Control
	if err := json.Unmarshal(got.Value, &c); err != nil || c.Command != "resume" || c.Who() != "admin-api" || string(got.Key) != "*" {
		t.Fatalf("control record %s %s: %+v %v", got.Key, got.Value, c, err)
	}

	// The read-only token reads but cannot act.
	if code, b := apiCall(t, "GET", base+"/api/v1/status", readToken, ""); code != 200 {
		t.Fatalf("status with the read-only token: %d %s", code, b)
	}
	if code, b := apiCall(t, "POST", base+"/api/v1/control", readToken, `{"command":"resume"}`); code != http.StatusForbidden ||
		!strings.Contains(string(b), "operator token") {
		t.Fatalf("control with the read-only token: %d %s", code, b)
	}
	// standalone.json names the token file, for ctl and state backup.
	if e, err := ReadEndpoints(cfg.DataDir); err != nil || e.AdminTokenFile != tokenFile {
		t.Fatalf("standalone.json: %+v %v, want adminTokenFile %s", e, err, tokenFile)
	}

	// CDX writes need the token; reads do not.
	line := "- 20200101000000 http://cdx-auth.example/ text/html 200 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA - - 10 0 f.warc.gz\n"
	for _, p := range []string{"/fc", "/fc/delete", "/api/checkpoint"} {
		if code, _ := apiCall(t, "POST", "http://"+cdxAddr+p, "", line); code != http.StatusUnauthorized {
			t.Fatalf("CDX %s without token: %d", p, code)
		}
		if code, _ := apiCall(t, "POST", "http://"+cdxAddr+p, readToken, line); code != http.StatusForbidden {
			t.Fatalf("CDX %s with the read-only token: %d", p, code)
		}
	}
	if code, b := apiCall(t, "POST", "http://"+cdxAddr+"/fc", token, line); code != 200 || !bytes.Contains(b, []byte("Added 1")) {
		t.Fatalf("CDX ingest with token: %d %s", code, b)
	}
	if code, b := apiCall(t, "GET", "http://"+cdxAddr+"/fc?url="+url.QueryEscape(seed), "", ""); code != 200 || len(b) == 0 {
		t.Fatalf("CDX query without token: %d %s", code, b)
	}
}
