package worker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/crawllog"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// sharedEnv is a broker, a Redis, a site and one data directory that
// several workers share.
type sharedEnv struct {
	*env
	site  *testweb.Site
	dir   string
	hosts map[string]string
}

func newSharedEnv(t *testing.T, pages int) *sharedEnv {
	t.Helper()
	rdb := embeddedtest.Redis(t)
	kc, cl := embeddedtest.Kafka(t, 2)
	site, err := testweb.Generate(testweb.Config{Seed: 11, Hosts: 4, PagesPerHost: pages})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	hosts := map[string]string{}
	for i := range site.Config().Hosts {
		name := site.HostName(i)
		ips, err := srv.Resolver().LookupIPAddr(context.Background(), name)
		if err != nil || len(ips) == 0 {
			t.Fatalf("resolve %s: %v", name, err)
		}
		hosts[name] = ips[0].IP.String()
	}
	return &sharedEnv{env: &env{kc: kc, rdb: rdb, srv: srv, cl: cl}, site: site, dir: t.TempDir(), hosts: hosts}
}

// launchSeeds puts the site's seeds on the tocrawl topic.
func (e *sharedEnv) launchSeeds(t *testing.T) {
	t.Helper()
	for _, s := range e.srv.Seeds() {
		b, _ := json.Marshal(messages.Launch{URL: s, IsSeed: true, ParentURL: s,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:" + s}}})
		if err := e.cl.ProduceSync(context.Background(), &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte(s), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// testSessionTimeout is the consumer group session and rebalance timeout
// of the workers these tests kill and of their survivors: with franz-go's
// defaults (45 s, 60 s) a survivor's shutdown waits that long for the
// killed member's session to expire, or for it to rejoin a rebalance it
// was killed in, before the group settles.
const testSessionTimeout = 6 * time.Second

// spec is a child worker on this environment.
func (e *sharedEnv) spec(id string) childSpec {
	return childSpec{Redis: e.rdb.Options().Addr, Brokers: e.kc.Brokers, Dir: e.dir, ID: id, Lease: time.Second, Hosts: e.hosts}
}

// running is an in-process worker started by start.
type running struct {
	w    *Worker
	stop context.CancelFunc
	done chan error
}

func (e *sharedEnv) start(t *testing.T, id string) *running {
	t.Helper()
	kc := e.kc
	// A killed sibling leaves the group sooner, also mid-rebalance.
	kc.SessionTimeout, kc.RebalanceTimeout = testSessionTimeout, testSessionTimeout
	w, err := New(identityConfig(e.dir, id), Deps{Profile: identityProfile(), Kafka: kc, Redis: e.rdb,
		Resolver: e.srv.Resolver(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Registerer: prometheus.NewRegistry(), Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{w: w, stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// halt stops r and fails on a Run error.
func (r *running) halt(t *testing.T) {
	t.Helper()
	r.stop()
	if err := <-r.done; err != nil {
		t.Fatalf("Run %s: %v", r.w.cfg.ID, err)
	}
	r.done <- nil // for the cleanup's receive
}

// warcFiles lists the WARC files (closed and open) of both WARC
// directories of dir.
func warcFiles(dir string, suffix string) []string {
	var out []string
	for _, d := range []string{"warcs", "warcs-viral"} {
		ps, _ := filepath.Glob(filepath.Join(dir, d, "fc-npld", "*"+suffix))
		out = append(out, ps...)
	}
	return out
}

// hostFiles lists the files of suffix whose {host} part is host.
func hostFiles(dir, host, suffix string) []string {
	var out []string
	for _, p := range warcFiles(dir, suffix) {
		if h, ok := warcwriter.HostFromName(filepath.Base(p)); ok && h == host {
			out = append(out, p)
		}
	}
	return out
}

// logLines counts the lines of identity id's crawl.log.
func logLines(dir, id string) int {
	b, err := os.ReadFile(filepath.Join(dir, "logs", "fc-npld", id, crawllog.DefaultName))
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// checkFileIdentity checks that path is one writer's: one warcinfo record,
// first, naming the identity of the file name, and every record readable.
func checkFileIdentity(t *testing.T, path string) string {
	t.Helper()
	host, ok := warcwriter.HostFromName(filepath.Base(path))
	if !ok {
		t.Fatalf("%s: not a WARC name with a host part", path)
	}
	r, err := warcwriter.OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	infos := 0
	for i := 0; ; i++ {
		rec, _, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: record %d: %v", path, i, err)
		}
		if rec.Type() == gowarc.Warcinfo {
			infos++
			raw, err := rec.Block().RawBytes()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(raw)
			if i != 0 || !strings.Contains(string(b), "hostname: "+host+"\r\n") {
				t.Fatalf("%s: warcinfo at record %d does not name %s:\n%s", path, i, host, b)
			}
		}
		_ = rec.Close()
	}
	if infos != 1 {
		t.Fatalf("%s: %d warcinfo records, want 1 (one writer per file)", path, infos)
	}
	return host
}

// checkCapturesLogged checks that every capture in id's WARC files has a
// line in id's own crawl.log, and returns how many captures there are. A
// recovery writes the missing lines just after it closes the files, so the
// check polls, with a deadline, until no line is missing.
func checkCapturesLogged(t *testing.T, dir, id string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		missing, total := unloggedCaptures(t, dir, id)
		if len(missing) == 0 {
			return total
		}
		if time.Now().After(deadline) {
			for _, m := range missing {
				t.Errorf("%s: %s", id, m)
			}
			return total
		}
		time.Sleep(20 * time.Millisecond) // polling the files with a deadline
	}
}

// unloggedCaptures lists the captures in id's WARC files that lack a line
// in id's crawl.log, and counts the captures.
func unloggedCaptures(t *testing.T, dir, id string) ([]string, int) {
	t.Helper()
	want := map[string]int{}
	total := 0
	for _, p := range hostFiles(dir, id, ".warc.gz") {
		caps, err := readCaptures(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range caps {
			want[crawllog.CaptureKey(c.url, c.date)]++
			total++
		}
	}
	have := map[string]int{}
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "fc-npld", id, crawllog.DefaultName+"*"))
	for _, p := range logs {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if k, ok := crawllog.LineKey(sc.Bytes()); ok {
				have[k]++
			}
		}
		_ = f.Close()
	}
	var missing []string
	for k, n := range want {
		if have[k] < n {
			missing = append(missing, fmt.Sprintf("capture %s has %d crawl.log lines, want %d", k, have[k], n))
		}
	}
	return missing, total
}

// Two workers sharing one data directory crawl a site together: each
// takes a slot of its own, every WARC file is one identity's (its name and
// its one warcinfo agree), each has its own crawl.log with a line for every
// capture of its files, and nothing is left open.
func TestSharedDataDirWorkers(t *testing.T) {
	e := newSharedEnv(t, 10)
	a, b := e.start(t, ""), e.start(t, "")
	if a.w.cfg.ID != "w0" || b.w.cfg.ID != "w1" {
		t.Fatalf("identities %s, %s; want w0, w1", a.w.cfg.ID, b.w.cfg.ID)
	}
	e.launchSeeds(t)
	ctx := context.Background()
	deadline := time.Now().Add(90 * time.Second)
	for drained := 0; drained < 2; {
		tot, err := a.w.Totals(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err := a.w.Frontier().Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if tot.URIs >= 40 && st.Queued == 0 && st.InFlight == 0 {
			drained++
		} else {
			drained = 0
		}
		if time.Now().After(deadline) {
			t.Fatalf("not drained: %+v, %d finished", st, tot.URIs)
		}
		time.Sleep(100 * time.Millisecond) // polling the frontier with a deadline
	}
	a.halt(t)
	b.halt(t)

	if open := warcFiles(e.dir, ".open"); len(open) > 0 {
		t.Fatalf("files left open: %v", open)
	}
	byHost := map[string]int{}
	for _, p := range warcFiles(e.dir, ".warc.gz") {
		byHost[checkFileIdentity(t, p)]++
	}
	if len(byHost) != 2 || byHost["w0"] == 0 || byHost["w1"] == 0 {
		t.Fatalf("WARC files by identity: %v, want files of w0 and w1 only", byHost)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "logs", "fc-npld", crawllog.DefaultName)); err == nil {
		t.Error("a shared crawl.log was written beside the identities' own")
	}
	for _, id := range []string{"w0", "w1"} {
		n := checkCapturesLogged(t, e.dir, id)
		t.Logf("%s: %d files, %d captures, %d crawl.log lines", id, byHost[id], n, logLines(e.dir, id))
		if _, err := os.Stat(filepath.Join(e.dir, "spool", id)); err != nil {
			t.Errorf("spool of %s: %v", id, err)
		}
	}
	if keys, _ := e.rdb.Keys(ctx, "trawler:identity:*").Result(); len(keys) != 0 {
		t.Fatalf("identity leases left after clean stops: %v", keys)
	}
}

// killWhenWriting SIGKILLs a child worker once it has an open WARC file
// and a few crawl.log lines, and returns the open files it left.
func killWhenWriting(t *testing.T, e *sharedEnv, cmd interface {
	Signal(os.Signal) error
}, wait func() error, id string, stderr *testlog.Buffer) []string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for len(hostFiles(e.dir, id, ".open")) == 0 || logLines(e.dir, id) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("child %s wrote no WARC before the deadline; stderr:\n%s", id, stderr)
		}
		time.Sleep(20 * time.Millisecond) // polling the child's files with a deadline
	}
	if err := cmd.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = wait()
	open := hostFiles(e.dir, id, ".open")
	if len(open) == 0 {
		t.Fatalf("child %s closed its files before it died", id)
	}
	return open
}

// waitRecovered waits until the open files are closed under their final
// names.
func waitRecovered(t *testing.T, open []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, p := range open {
		for {
			_, errOpen := os.Stat(p)
			_, errFinal := os.Stat(strings.TrimSuffix(p, ".open"))
			if errors.Is(errOpen, os.ErrNotExist) && errFinal == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not recovered within %v", filepath.Base(p), within)
			}
			time.Sleep(20 * time.Millisecond) // polling the directory with a deadline
		}
	}
}

// A worker killed with SIGKILL beside a live one: the survivor's janitor
// recovers its open WARCs once its lease expires, announces them in its
// name and writes its missing crawl.log lines; a process started with the
// survivor's identity refuses to start.
func TestJanitorRecoversKilledWorker(t *testing.T) {
	t0 := time.Now()
	e := newSharedEnv(t, 60)
	s := e.start(t, "")
	if s.w.cfg.ID != "w0" {
		t.Fatalf("survivor is %s, want w0", s.w.cfg.ID)
	}
	e.launchSeeds(t)
	child, stderr := startChild(t, e.spec(""))
	open := killWhenWriting(t, e, child.Process, child.Wait, "w1", stderr)
	t.Logf("killed w1 with %d open files after %v", len(open), time.Since(t0))
	stale, keep := plantStaleSpool(t, filepath.Join(e.dir, "spool", "w1"))

	dup, dupErr := startChild(t, e.spec("w0"))
	if err := waitExit(t, dup, 30*time.Second); !isExitError(err) || !strings.Contains(dupErr.String(), "refusing to start") {
		t.Fatalf("second process with identity w0: %v; stderr:\n%s", err, dupErr)
	}
	t.Logf("duplicate identity: %s", strings.TrimSpace(dupErr.String()))

	// Lease (1s) + janitor period (200ms) + recovery, with room for a
	// loaded machine.
	t.Logf("duplicate refused after %v", time.Since(t0))
	waitRecovered(t, open, 30*time.Second)
	t.Logf("recovered after %v", time.Since(t0))
	waitStaleGone(t, stale, keep, 30*time.Second)
	n := checkCapturesLogged(t, e.dir, "w1")
	t.Logf("w1: %d captures in its recovered and closed files", n)
	for _, p := range open {
		checkFileIdentity(t, strings.TrimSuffix(p, ".open"))
	}
	s.halt(t)
	t.Logf("halted after %v", time.Since(t0))
	if left := warcFiles(e.dir, ".open"); len(left) > 0 {
		t.Fatalf("files left open: %v", left)
	}
	notices := map[string]string{}
	for _, r := range readTopic(t, e.env, "fc.warcs") {
		var n messages.WarcNotice
		if err := json.Unmarshal(r.Value, &n); err != nil {
			t.Fatal(err)
		}
		notices[n.Filename] = n.Host
	}
	for _, p := range open {
		name := filepath.Base(strings.TrimSuffix(p, ".open"))
		if notices[name] != "w1" {
			t.Errorf("%s: notice host %q, want w1", name, notices[name])
		}
	}
}

// A worker killed with SIGKILL and started again with its identity (once
// the dead run's lease expired) recovers its own open files at start.
func TestRestartRecoversOwnIdentity(t *testing.T) {
	e := newSharedEnv(t, 60)
	e.launchSeeds(t)
	child, stderr := startChild(t, e.spec("wx"))
	open := killWhenWriting(t, e, child.Process, child.Wait, "wx", stderr)
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := e.rdb.Exists(ctx, identityKey("fc-npld", "wx")).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed worker's lease did not expire")
		}
		time.Sleep(20 * time.Millisecond) // polling the lease with a deadline
	}
	stale, keep := plantStaleSpool(t, filepath.Join(e.dir, "spool", "wx"))
	r := e.start(t, "wx")
	waitStaleGone(t, stale, keep, time.Second) // removed before New returns
	waitRecovered(t, open, 20*time.Second)
	checkCapturesLogged(t, e.dir, "wx")
	r.halt(t)
	if left := warcFiles(e.dir, ".open"); len(left) > 0 {
		t.Fatalf("files left open: %v", left)
	}
}

// A worker whose identity lease is taken over (it expired while Redis was
// out of reach and another process took it) stops with ErrIdentityLost
// rather than write on beside the new holder.
func TestLostIdentityStopsWorker(t *testing.T) {
	e := newSharedEnv(t, 2)
	r := e.start(t, "")
	if r.w.ID() != "w0" {
		t.Fatalf("identity %s, want w0", r.w.ID())
	}
	if err := e.rdb.Set(context.Background(), identityKey("fc-npld", "w0"), "worker elsewhere 1 x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		if !errors.Is(err, ErrIdentityLost) {
			t.Fatalf("Run: %v, want ErrIdentityLost", err)
		}
		r.done <- nil // for the cleanup's receive
	case <-time.After(30 * time.Second):
		t.Fatal("worker still running after losing its identity")
	}
	if v, _ := e.rdb.Get(context.Background(), identityKey("fc-npld", "w0")).Result(); v != "worker elsewhere 1 x" {
		t.Fatalf("the stopped worker touched the new holder's lease: %q", v)
	}
}

// plantStaleSpool puts into dir what a killed worker leaves in its spool
// directory (a spilled response, a gowarc record buffer) and a file that
// is neither, which must stay.
func plantStaleSpool(t *testing.T, dir string) (stale []string, keep string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"trawler-spool-123456", warcwriter.BufferFilePrefix + "654321", "operator-notes.txt"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, 4096), 0o644); err != nil {
			t.Fatal(err)
		}
		stale = append(stale, p)
	}
	return stale[:2], stale[2]
}

// waitStaleGone waits until the stale files are removed, and checks keep
// was not.
func waitStaleGone(t *testing.T, stale []string, keep string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for _, p := range stale {
		for {
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("stale spool file %s not removed within %v", p, d)
			}
			time.Sleep(20 * time.Millisecond) // polling the janitor with a deadline
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("%s, not a spool file, was removed: %v", keep, err)
	}
}
