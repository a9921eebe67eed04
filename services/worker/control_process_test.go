package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/internal/testchild"
	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/reports"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// childAdmin is what a child with an admin API writes to its AdminFile:
// where the API listens and the identity the worker settled on.
type childAdmin struct {
	Addr string `json:"addr"`
	ID   string `json:"id"`
}

// serveChildAdmin serves a child worker's admin listener on a loopback
// port with the admin API mounted as `trawler worker` mounts it
// (cmd/trawler/roles.go), and writes its address and identity to
// c.AdminFile. The returned function closes both.
func serveChildAdmin(ctx context.Context, c childSpec, w *Worker, p profile.Profile, kc kafka.Config,
	rdb redis.UniversalClient, reg *prometheus.Registry, log *slog.Logger) (func(), error) {
	srv, err := admin.Listen("127.0.0.1:0", reg, log)
	if err != nil {
		return nil, err
	}
	h, closeAPI, err := api.Build(ctx, api.Setup{Profile: p, Redis: rdb, Frontier: w.Frontier(), Kafka: kc,
		Crawl: "fc", Stream: "npld", BaseDir: c.Dir, Version: "t", LimitReached: w.LimitReached, Logger: log})
	if err != nil {
		_ = srv.Close()
		return nil, err
	}
	closeAll := func() {
		closeAPI()
		_ = srv.Close()
	}
	if err := srv.MountAPI(admin.Tokens{Operator: admin.StaticToken(c.Token)}, h); err != nil {
		closeAll()
		return nil, err
	}
	b, _ := json.Marshal(childAdmin{Addr: srv.Addr(), ID: w.ID()})
	if err := os.WriteFile(c.AdminFile+".tmp", b, 0o600); err != nil {
		closeAll()
		return nil, err
	}
	if err := os.Rename(c.AdminFile+".tmp", c.AdminFile); err != nil {
		closeAll()
		return nil, err
	}
	return closeAll, nil
}

// fetchLog records when each request to the slow site began, by host.
type fetchLog struct {
	mu     sync.Mutex
	starts map[string][]time.Time
	open   int
}

// after counts the requests to host that began after t.
func (f *fetchLog) after(host string, t time.Time) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, at := range f.starts[host] {
		if at.After(t) {
			n++
		}
	}
	return n
}

// last is when the latest request to host began.
func (f *fetchLog) last(host string) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var l time.Time
	for _, at := range f.starts[host] {
		if at.After(l) {
			l = at
		}
	}
	return l
}

// processSite serves slow pages on any host: /0 links /1 ... /800, every
// other page links nothing, so each host is one target's and the crawl of
// either lasts well past the test. Requests, robots.txt included, are
// logged by host when they begin.
func processSite(t *testing.T, delay time.Duration) (*fcSite, *fetchLog) {
	f := &fetchLog{starts: map[string][]time.Time{}}
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		f.mu.Lock()
		f.starts[host] = append(f.starts[host], time.Now())
		f.open++
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.open--
			f.mu.Unlock()
		}()
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(delay) // the site is slow on purpose
		var links []string
		if r.URL.Path == "/0" {
			for i := range 800 {
				links = append(links, fmt.Sprintf("/%d", i+1))
			}
		}
		fcHTML(w, fcPage("", links...))
	})
	return site, f
}

// first is when the earliest request to host after t began (zero: none).
func (f *fetchLog) first(host string, t time.Time) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var l time.Time
	for _, at := range f.starts[host] {
		if at.After(t) && (l.IsZero() || at.Before(l)) {
			l = at
		}
	}
	return l
}

// adminClient speaks one child's admin API as an operator's tool would.
type adminClient struct {
	addr, token string
}

func (a adminClient) do(t *testing.T, method, path string, body []byte, token string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+a.addr+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	cl := &http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// send POSTs c to /api/v1/control and returns its id and when the API
// accepted it.
func (a adminClient) send(t *testing.T, c messages.Control) (string, time.Time) {
	t.Helper()
	c.By = "process-test"
	b, _ := json.Marshal(c)
	code, body := a.do(t, http.MethodPost, "/api/v1/control", b, a.token)
	at := time.Now()
	if code != http.StatusAccepted {
		t.Fatalf("POST %s: %d %s", c.Command, code, body)
	}
	var acc api.ControlAccepted
	if err := json.Unmarshal(body, &acc); err != nil || acc.ID == "" {
		t.Fatalf("POST %s: %s (%v)", c.Command, body, err)
	}
	return acc.ID, at
}

// acked polls GET /api/v1/control/<id> until the command is acknowledged
// and returns the acknowledgement and when the poll saw it.
func (a adminClient) acked(t *testing.T, id string) (api.Ack, time.Time) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, body := a.do(t, http.MethodGet, "/api/v1/control/"+id, nil, a.token)
		switch code {
		case http.StatusOK:
			at := time.Now()
			var ack api.Ack
			if err := json.Unmarshal(body, &ack); err != nil {
				t.Fatal(err)
			}
			if ack.Error != "" || ack.By != "process-test" {
				t.Fatalf("ack of %s: %+v", id, ack)
			}
			return ack, at
		case http.StatusNotFound:
		default:
			t.Fatalf("GET ack %s: %d %s", id, code, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("command %s not acknowledged within 15 s", id)
		}
		time.Sleep(20 * time.Millisecond) // polling the acknowledgement with a deadline
	}
}

// procChild is one worker process of the fleet.
type procChild struct {
	spec   childSpec
	cmd    *testchild.Child
	stderr *testlog.Buffer
	id     string
	api    adminClient
}

// startProc starts a child with an admin API and waits for its address
// and identity.
func startProc(t *testing.T, spec childSpec) *procChild {
	t.Helper()
	spec.AdminFile = filepath.Join(t.TempDir(), "admin.json")
	cmd, stderr := startChild(t, spec)
	return &procChild{spec: spec, cmd: cmd, stderr: stderr}
}

// ready waits for the child's admin file.
func (c *procChild) ready(t *testing.T, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		b, err := os.ReadFile(c.spec.AdminFile)
		if err == nil {
			var a childAdmin
			if err := json.Unmarshal(b, &a); err != nil {
				t.Fatal(err)
			}
			c.id, c.api = a.ID, adminClient{addr: a.Addr, token: c.spec.Token}
			return
		}
		if c.cmd.ProcessState != nil || time.Now().After(deadline) {
			t.Fatalf("child not serving its admin API within %v; stderr:\n%s", within, c.stderr)
		}
		time.Sleep(20 * time.Millisecond) // polling the child's admin file with a deadline
	}
}

// logLinesOf counts the lines of id's crawl.log in dir, in the layout of a
// leased (shared directory) or unleased worker.
func logLinesOf(dir, id string, leased bool) int {
	if leased {
		return logLines(dir, id)
	}
	b, err := os.ReadFile(filepath.Join(dir, "logs", "fc-npld", crawllog.DefaultName))
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

// crawlLogLines returns the lines of id's crawl.log (see logLinesOf),
// split into fields.
func crawlLogLines(dir, id string, leased bool) [][]string {
	p := filepath.Join(dir, "logs", "fc-npld", crawllog.DefaultName)
	if leased {
		p = filepath.Join(dir, "logs", "fc-npld", id, crawllog.DefaultName)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	var out [][]string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 3 {
			out = append(out, f)
		}
	}
	return out
}

// logHostLines counts the lines of id's crawl.log whose URI is on host.
func logHostLines(dir, id string, leased bool, host string) int {
	n := 0
	for _, f := range crawlLogLines(dir, id, leased) {
		if strings.Contains(f[3], "://"+host+":") {
			n++
		}
	}
	return n
}

// logCaptures counts the lines of id's crawl.log with an HTTP status:
// fetches whose records are in a WARC.
func logCaptures(dir, id string, leased bool) int {
	n := 0
	for _, f := range crawlLogLines(dir, id, leased) {
		if status, err := strconv.Atoi(f[1]); err == nil && status > 0 && !strings.HasPrefix(f[3], "dns:") {
			n++
		}
	}
	return n
}

// recordIDs returns the WARC-Record-IDs of the records of path.
func recordIDs(t *testing.T, path string) []string {
	t.Helper()
	r, err := warcwriter.OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	var ids []string
	for {
		rec, _, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			return ids
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ids = append(ids, rec.WarcHeader().Get(gowarc.WarcRecordID))
		_ = rec.Close()
	}
}

// Issue 21's acceptance with worker processes: three `worker.New` + Run
// processes (TestMain's child mode) on one Redis and one broker, each
// with the admin API an operator steers them through. First each has a
// data directory of its own (identities named, unleased), then two share
// one (leased slots, the third on its own). In each: a pause of target A
// through one child's API stops every fetch of A's site within 2 s of its
// acknowledgement while B's goes on; a resume through another brings A
// back; an exclusion of A's site through the third stops it again within
// 2 s; one child killed with SIGKILL leaves .open WARCs that its
// identity's next start closes; a terminate ends every process with exit
// status 0 and nothing in flight. Then every WARC file is one identity's
// (the one its directory may hold), no WARC-Record-ID occurs twice, and
// the six reports are built from the crawled topic as `trawler reports`
// builds them for a cluster (a worker writes none itself).
func TestControlThreeWorkerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes, a broker and Redis")
	}
	t.Run("own data directories", func(t *testing.T) { runProcessFleet(t, false) })
	t.Run("two share a data directory", func(t *testing.T) { runProcessFleet(t, true) })
}

func runProcessFleet(t *testing.T, shared bool) {
	t0 := time.Now()
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	kc, cl := embeddedtest.Kafka(t, 2)
	site, fetches := processSite(t, 80*time.Millisecond)
	hosts := map[string]string{"a.test": "127.0.0.1", "b.test": "127.0.0.1"}
	const token = "process-test-token"

	// Data directories and identities: own directories with named,
	// unleased identities; or a shared directory for children 0 and 1
	// (and one of its own for child 2) with leased slots.
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	ids := []string{"w1", "w2", "w3"}
	var lease time.Duration
	if shared {
		dirs[1] = dirs[0]
		ids = []string{"", "", ""}
		// A live child keeps its slot only while its renewals get through
		// (pkg/identity: it gives the slot up after five sixths of the
		// lease without one). Three race-built workers, Redis and a broker
		// on a loaded machine stall renewals for more than the two thirds
		// of a second that a 1 s lease allowed: a live child's slot came
		// free, and the killed child's restart took it. The kill below
		// waits for the lease to run out: five seconds at most.
		lease = 5 * time.Second
	}
	children := make([]*procChild, 3)
	for i := range children {
		children[i] = startProc(t, childSpec{Redis: rdb.Options().Addr, Brokers: kc.Brokers, Dir: dirs[i], ID: ids[i],
			Lease: lease, Hosts: hosts, Threads: 2, Token: token})
	}
	for _, c := range children {
		c.ready(t, 60*time.Second)
	}
	var got []string
	for _, c := range children {
		got = append(got, c.id)
	}
	if len(slices.Compact(slices.Sorted(slices.Values(got)))) != 3 {
		t.Fatalf("identities %v: want three distinct", got)
	}
	t.Logf("children %v serving after %v", got, time.Since(t0).Round(time.Millisecond))

	// The API refuses a request without the token and answers with it.
	if code, _ := children[0].api.do(t, http.MethodGet, "/api/v1/status", nil, ""); code != http.StatusUnauthorized {
		t.Fatalf("status without the token: %d, want 401", code)
	}
	if code, body := children[0].api.do(t, http.MethodGet, "/api/v1/status", nil, token); code != http.StatusOK {
		t.Fatalf("status with the token: %d %s", code, body)
	}

	launch := func(u, source string) {
		b, _ := json.Marshal(messages.Launch{URL: u, IsSeed: true, ParentURL: u,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: source}}})
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte(u), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	launch(site.url("a.test", "/0"), "tid:A")
	launch(site.url("b.test", "/0"), "tid:B")
	poll := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !ok() {
			if time.Now().After(deadline) {
				for _, c := range children {
					t.Logf("child %s stderr:\n%s", c.id, c.stderr)
				}
				t.Fatalf("%s: not within %v", what, d)
			}
			time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
		}
	}
	start := time.Now()
	poll("both sites fetched", 60*time.Second, func() bool {
		return fetches.after("a.test", start) >= 3 && fetches.after("b.test", start) >= 3
	})

	// SIGKILL a child that is writing (in the shared directory when there
	// is one), then start its identity again: the .open WARCs the kill left
	// are closed by that start.
	candidates := children
	if shared {
		candidates = children[:2]
	}
	var victim *procChild
	var open []string
	poll("a child with an open WARC and crawl.log lines", 30*time.Second, func() bool {
		for _, c := range candidates {
			if len(hostFiles(c.spec.Dir, c.id, ".open")) > 0 && logLinesOf(c.spec.Dir, c.id, shared) >= 2 {
				victim = c
				return true
			}
		}
		return false
	})
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = victim.cmd.Wait()
	if open = hostFiles(victim.spec.Dir, victim.id, ".open"); len(open) == 0 {
		t.Fatalf("%s closed its files before it died", victim.id)
	}
	killedAt := time.Now()
	if shared {
		// A slot comes back once the dead process's lease expires.
		poll("the killed worker's identity lease expiring", lease+10*time.Second, func() bool {
			n, err := rdb.Exists(ctx, identityKey("fc-npld", victim.id)).Result()
			return err == nil && n == 0
		})
	}
	again := startProc(t, victim.spec) // the same spec: a named identity, or the lowest free slot
	again.ready(t, 60*time.Second)
	if again.id != victim.id {
		// A lower slot was free: its live holder's lease lapsed (its
		// stderr says so).
		for _, c := range children {
			t.Logf("child %s stderr:\n%s", c.id, c.stderr)
		}
		t.Fatalf("restart of %s took identity %s", victim.id, again.id)
	}
	waitRecovered(t, open, 30*time.Second)
	t.Logf("killed %s with %d open WARCs; its next start closed them %v after the kill",
		victim.id, len(open), time.Since(killedAt).Round(time.Millisecond))
	for i, c := range children {
		if c == victim {
			children[i] = again
		}
	}

	// A command is measured against a site being fetched right then.
	busy := func(host string) {
		t.Helper()
		poll(host+" being fetched", 30*time.Second, func() bool { return fetches.after(host, time.Now().Add(-time.Second)) >= 2 })
	}

	// Pause target A through child 0's API.
	busy("a.test")
	id, sent := children[0].api.send(t, messages.Control{Command: messages.CommandPause, Scope: messages.ScopeTarget, Source: "tid:A"})
	_, ackAt := children[0].api.acked(t, id)
	poll("b.test fetched on after the pause", 30*time.Second, func() bool { return fetches.after("b.test", ackAt.Add(2*time.Second)) >= 5 })
	if n := fetches.after("a.test", ackAt.Add(2*time.Second)); n > 0 {
		t.Errorf("paused target A fetched %d times more than 2 s after the pause's acknowledgement", n)
	}
	lastA := fetches.last("a.test")
	t.Logf("pause: acknowledged %v after sending; last fetch of A began %v after the ack (%v after sending)",
		ackAt.Sub(sent).Round(time.Millisecond), lastA.Sub(ackAt).Round(time.Millisecond), lastA.Sub(sent).Round(time.Millisecond))

	// Resume through child 1's API.
	id, sent = children[1].api.send(t, messages.Control{Command: messages.CommandResume, Scope: messages.ScopeTarget, Source: "tid:A"})
	_, ackAt = children[1].api.acked(t, id)
	poll("a.test fetched again after the resume", 20*time.Second, func() bool { return fetches.after("a.test", sent) >= 2 })
	t.Logf("resume: acknowledged %v after sending; A fetched again %v after sending",
		ackAt.Sub(sent).Round(time.Millisecond), fetches.first("a.test", sent).Sub(sent).Round(time.Millisecond))

	// Exclude A's site through child 2's API.
	busy("a.test")
	id, sent = children[2].api.send(t, messages.Control{Command: messages.CommandExclusions, URLs: []string{site.url("a.test", "/")}})
	_, ackAt = children[2].api.acked(t, id)
	poll("b.test fetched on after the exclusion", 30*time.Second, func() bool { return fetches.after("b.test", ackAt.Add(2*time.Second)) >= 5 })
	if n := fetches.after("a.test", ackAt.Add(2*time.Second)); n > 0 {
		t.Errorf("excluded site a.test fetched %d times more than 2 s after the exclusion's acknowledgement", n)
	}
	lastA = fetches.last("a.test")
	t.Logf("exclusion: acknowledged %v after sending; last fetch of a.test began %v after the ack (%v after sending)",
		ackAt.Sub(sent).Round(time.Millisecond), lastA.Sub(ackAt).Round(time.Millisecond), lastA.Sub(sent).Round(time.Millisecond))

	// Terminate through child 0's API: every process ends, status 0. Its
	// API may be gone before the acknowledgement could be asked for
	// there, so it is read from Redis, where every API reads it.
	id, sent = children[0].api.send(t, messages.Control{Command: messages.CommandTerminate})
	for _, c := range children {
		if err := waitExit(t, c.cmd, 45*time.Second); err != nil {
			t.Errorf("child %s: %v; stderr:\n%s", c.id, err, c.stderr)
		}
	}
	ack, err := api.RedisAcks(rdb, "fc")(ctx, id)
	if err != nil || ack == nil || ack.Error != "" || ack.By != "process-test" {
		t.Fatalf("acknowledgement of the terminate: %+v, %v", ack, err)
	}
	t.Logf("terminate: all three exited %v after sending (%s)", time.Since(sent).Round(time.Millisecond), ack.Result)
	fetches.mu.Lock()
	inFlight := fetches.open
	fetches.mu.Unlock()
	if inFlight != 0 {
		t.Errorf("%d requests open after every worker exited", inFlight)
	}

	// Every WARC file is closed and one identity's, the one its directory
	// may hold; every identity wrote some; no record is in two files.
	allowed := map[string][]string{}
	for _, c := range children {
		allowed[c.spec.Dir] = append(allowed[c.spec.Dir], c.id)
	}
	seen := map[string]string{} // WARC-Record-ID -> file
	files := map[string]int{}   // identity -> files
	records := 0
	for dir, ids := range allowed {
		if left := warcFiles(dir, ".open"); len(left) > 0 {
			t.Errorf("files left open: %v", left)
		}
		for _, p := range warcFiles(dir, ".warc.gz") {
			who := checkFileIdentity(t, p)
			if !slices.Contains(ids, who) {
				t.Errorf("%s: written by %s in a directory of %v", filepath.Base(p), who, ids)
			}
			files[who]++
			for _, rid := range recordIDs(t, p) {
				if rid == "" {
					t.Errorf("%s: a record without WARC-Record-ID", filepath.Base(p))
				} else if other, dup := seen[rid]; dup {
					t.Errorf("record %s in %s and %s", rid, other, filepath.Base(p))
				}
				seen[rid] = filepath.Base(p)
				records++
			}
		}
	}
	for _, c := range children {
		// A claim goes to whichever worker asks first once a host is due, and
		// one that is finishing a fetch asks sooner than an idle one: a
		// worker may win none of a run's (1 run in 12 here), or only URIs
		// that the exclusion then refused. One that captured anything wrote
		// it, and the work did not all go to one.
		if n := logCaptures(c.spec.Dir, c.id, shared); files[c.id] == 0 && n > 0 {
			t.Errorf("%s logged %d captures but wrote no WARC file; its stderr:\n%s", c.id, n, c.stderr)
		}
		t.Logf("%s: crawl.log lines for a.test %d, b.test %d", c.id, logHostLines(c.spec.Dir, c.id, shared, "a.test"),
			logHostLines(c.spec.Dir, c.id, shared, "b.test"))
		if shared {
			checkCapturesLogged(t, c.spec.Dir, c.id)
		}
	}
	if len(files) < 2 {
		t.Errorf("WARC files by identity %v: want at least two identities writing", files)
	}
	t.Logf("WARC files by identity %v, %d records, all WARC-Record-IDs distinct", files, records)

	// The reports, from the crawled topic as `trawler reports` writes them.
	out := t.TempDir()
	j := NewJournal(kc, Config{Crawl: "fc"}, "", slog.New(slog.DiscardHandler))
	sum, err := reports.Build(ctx, j.Events, reports.Filter{}, reports.Options{CrawlName: "process-test"},
		reports.RunInfo{Status: "Finished - Ended by operator"}, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{reports.CrawlReport, reports.SeedsReport, reports.HostsReport, reports.SourceReport,
		reports.MimetypeReport, reports.ResponseCodeReport} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || len(b) == 0 {
			t.Errorf("report %s: %d bytes, %v", name, len(b), err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, reports.HostsReport)); !strings.Contains(string(b), "a.test") || !strings.Contains(string(b), "b.test") {
		t.Errorf("hosts report lacks a site:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(out, reports.SourceReport)); !strings.Contains(string(b), "tid:A") || !strings.Contains(string(b), "tid:B") {
		t.Errorf("source report lacks a target:\n%s", b)
	}
	t.Logf("reports of %d crawled events written; whole run %v", sum.Matched, time.Since(t0).Round(time.Millisecond))
}
