//go:build chaos

// Package chaos_test is the fault-injection suite (issue 25): a crawl of
// the synthetic web by a launcher, three worker processes, a cdxwriter
// process, a real redis-server and the embedded broker, with faults
// injected at points of the crawl's progress drawn from a printed seed,
// and a report of what the faults cost at the end. docs/chaos.md says how
// each figure is computed and how to run the long version.
package chaos_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/internal/testchild"
	"github.com/trawler-crawl/trawler/pkg/clamav/clamdtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/services/launcher"
	"github.com/trawler-crawl/trawler/services/worker"
)

func TestMain(m *testing.M) {
	testchild.Main(childEnv, runChild)
	os.Exit(m.Run())
}

// params are the run's settings, from CHAOS_* variables; the defaults are
// the short run CI makes.
type params struct {
	seed        int64
	hosts       int
	pages       int
	workerKills int
	timeout     time.Duration
	tmpfsMB     int
}

func loadParams(t *testing.T) params {
	t.Helper()
	num := func(name string, def int64) int64 {
		s := os.Getenv(name)
		if s == "" {
			return def
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", name, s, err)
		}
		return n
	}
	p := params{
		seed:        num("CHAOS_SEED", time.Now().UnixNano()%1_000_000_000),
		hosts:       int(num("CHAOS_HOSTS", 24)),
		pages:       int(num("CHAOS_PAGES", 120)),
		workerKills: int(num("CHAOS_WORKER_KILLS", 3)),
		tmpfsMB:     int(num("CHAOS_TMPFS_MB", 256)),
		timeout:     10 * time.Minute,
	}
	if s := os.Getenv("CHAOS_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("CHAOS_TIMEOUT=%q: %v", s, err)
		}
		p.timeout = d
	}
	return p
}

// cluster is the running system under test and the suite's handles on it.
type cluster struct {
	t        *testing.T
	dir      string
	deadline time.Time
	redis    *redisServer
	broker   *broker
	clamd    *stallProxy
	workers  []*proc
	cdx      *proc
	rdb      *redis.Client
	front    *frontier.Frontier
	diskDir  string // worker w2's data directory, a tmpfs
	minFree  int64  // w2's disk-guard threshold
	// idleFaults are the faults that struck when nothing was queued or
	// in flight.
	idleFaults []string
	// unasked are the children that died while running; failedStarts
	// those that gave up starting (a dependency down at that moment).
	unasked, failedStarts []string
}

func (c *cluster) logf(format string, args ...any) {
	c.t.Helper()
	c.t.Logf("chaos: "+format, args...)
}

// poll waits for cond, failing the test after d or at the run's deadline.
func (c *cluster) poll(what string, d time.Duration, cond func() bool) {
	c.t.Helper()
	end := time.Now().Add(d)
	if c.deadline.Before(end) {
		end = c.deadline
	}
	for !cond() {
		if time.Now().After(end) {
			c.t.Fatalf("timed out waiting for %s\n%s", what, c.dump())
		}
		time.Sleep(100 * time.Millisecond) // polling a condition with a deadline
	}
}

// dump is the end of every child's log, for a failure message.
func (c *cluster) dump() string {
	var b strings.Builder
	for _, p := range append(c.workers, c.cdx) {
		if p != nil {
			fmt.Fprintf(&b, "--- %s %s (%s):\n%s\n", p.spec.Role, p.spec.ID, p.log, p.tail(3000))
		}
	}
	return b.String()
}

func TestChaos(t *testing.T) {
	p := loadParams(t)
	// The seed comes first, so a run that dies can still be repeated.
	fmt.Printf("chaos: seed %d (CHAOS_SEED=%d CHAOS_HOSTS=%d CHAOS_PAGES=%d CHAOS_WORKER_KILLS=%d CHAOS_TIMEOUT=%v)\n",
		p.seed, p.seed, p.hosts, p.pages, p.workerKills, p.timeout)
	began := time.Now()
	c := startCluster(t, p)
	ctx := context.Background()

	site, err := testweb.Generate(testweb.Config{Seed: p.seed, Hosts: p.hosts, PagesPerHost: p.pages, LargeFileBytes: 64 << 10})
	if err != nil {
		t.Fatalf("site: %v", err)
	}
	srv, err := site.Start(ctx)
	if err != nil {
		t.Fatalf("site: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	hosts := map[string]string{}
	for _, name := range srv.HostNames() {
		ips, err := srv.Resolver().LookupIPAddr(ctx, name)
		if err != nil || len(ips) == 0 {
			t.Fatalf("resolve %s: %v", name, err)
		}
		hosts[name] = ips[0].IP.String()
	}
	// The reachable set places the faults and is the coverage figure;
	// every other figure comes from what the crawl itself left.
	reachable := srv.Reachable(testweb.ReachOptions{MaxHops: 20, ObeyRobots: true, FollowSitemaps: true})
	expected := int64(len(reachable))
	faults := schedule(p.seed, expected, p.workerKills)
	c.logf("site: %d hosts, about %d URIs; %d faults scheduled", len(hosts), expected, len(faults))
	for i, f := range faults {
		c.logf("  fault %d at %d finished URIs: %s", i+1, f.at, f)
	}

	c.startChildren(t, hosts)
	launch(t, c, srv.Seeds())

	var bound int64
	for i, f := range faults {
		c.poll(fmt.Sprintf("%d finished URIs for fault %d (%s)", f.at, i+1, f), time.Until(c.deadline), func() bool {
			c.restartDead()
			tot, err := c.front.Totals(ctx)
			return err == nil && tot.URIs >= f.at
		})
		struck := time.Now()
		n := c.inject(f)
		bound += n
		c.logf("fault %d/%d: %s, %d URIs in flight, recovered in %v", i+1, len(faults), f, n, time.Since(struck).Round(time.Millisecond))
	}
	c.waitIdle()
	crawlTime := time.Since(began)
	for _, w := range c.workers {
		if err := w.stop(90 * time.Second); err != nil {
			t.Errorf("worker %s stop: %v\n%s", w.spec.ID, err, w.tail(3000))
		}
	}
	c.waitIndexed()

	r := c.report(srv.Seeds(), reachable, bound)
	r.unasked, r.failedStarts, r.idleFaults = c.unasked, c.failedStarts, c.idleFaults
	for k, n := range c.evidence() {
		r.evidence[k] = n
	}
	if err := c.cdx.stop(60 * time.Second); err != nil {
		t.Errorf("cdxwriter stop: %v\n%s", err, c.cdx.tail(3000))
	}
	r.print(p.seed, crawlTime, time.Since(began))
	if msg := r.failures(); msg != "" {
		t.Errorf("chaos: %s (seed %d)\n%s", msg, p.seed, r.details())
	}
}

// startCluster starts redis-server, the broker with the project's topics,
// clamd behind its stall proxy and the tmpfs of worker w2; the run's
// deadline starts now.
func startCluster(t *testing.T, p params) *cluster {
	t.Helper()
	// Not t.TempDir: the run directory holds the children's logs, which
	// must outlive a failed run to be read; it is removed on success.
	dir, err := os.MkdirTemp("", "trawler-chaos-")
	if err != nil {
		t.Fatalf("run dir: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chaos: run directory kept: %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	c := &cluster{t: t, dir: dir, deadline: time.Now().Add(p.timeout), minFree: 16 << 20}
	c.redis = &redisServer{dir: filepath.Join(dir, "redis")}
	if err := os.MkdirAll(c.redis.dir, 0o755); err != nil {
		t.Fatalf("redis dir: %v", err)
	}
	c.redis.start(t)
	t.Cleanup(func() { c.redis.kill(t) })
	c.rdb = redis.NewClient(&redis.Options{Addr: c.redis.addr})
	t.Cleanup(func() { _ = c.rdb.Close() })
	c.broker = &broker{dir: filepath.Join(dir, "kafka")}
	c.broker.start(t)
	t.Cleanup(func() { _ = c.broker.k.Close() })
	c.broker.applyTopics(t, 6)
	cd := clamdtest.Start(t, 100<<20)
	c.clamd = startStallProxy(t, cd.Addr)
	c.diskDir = filepath.Join(dir, "w2")
	mountTmpfs(t, c.diskDir, p.tmpfsMB)
	c.front, err = worker.NewFrontier(c.rdb, workerConfig("", "x", 0), crawlProfile(""), nil)
	if err != nil {
		t.Fatalf("frontier: %v", err)
	}
	return c
}

// startChildren starts the cdxwriter and the three workers.
func (c *cluster) startChildren(t *testing.T, hosts map[string]string) {
	t.Helper()
	logs := filepath.Join(c.dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatalf("log dir: %v", err)
	}
	base := childSpec{Redis: c.redis.addr, Brokers: []string{c.broker.addr}, Hosts: hosts, Clamd: c.clamd.addr()}
	cs := base
	cs.Role, cs.ID, cs.Dir, cs.CDXAddr = "cdxwriter", "cdx", filepath.Join(c.dir, "cdx"), freeAddr(t)
	c.cdx = newProc(t, cs, logs)
	c.cdx.start(t)
	for i := range 3 {
		ws := base
		ws.Role, ws.ID, ws.Dir = "worker", fmt.Sprintf("w%d", i), filepath.Join(c.dir, fmt.Sprintf("w%d", i))
		if i == 2 {
			ws.Dir, ws.MinFreeBytes = c.diskDir, c.minFree
		}
		w := newProc(t, ws, logs)
		w.start(t)
		c.workers = append(c.workers, w)
	}
}

// restartDead restarts any child that exited without being asked to, as
// an orchestrator would. A process that dies while running, of a fault it
// should ride out, is a finding of the run. One that gave up starting
// because Redis or the broker was away at that moment (its constructor
// failed: "new worker: ...") is what a Kubernetes restart covers; those
// are reported apart.
func (c *cluster) restartDead() {
	for _, p := range append(c.workers, c.cdx) {
		if p.cmd == nil || p.running() {
			continue
		}
		last := lastLine(p.tail(2000))
		what := fmt.Sprintf("%s %s exited (%v): %s", p.spec.Role, p.spec.ID, p.err, last)
		if strings.Contains(last, ": new "+p.spec.Role+": ") {
			c.failedStarts = append(c.failedStarts, what)
		} else {
			c.unasked = append(c.unasked, what)
		}
		if p.spec.Role == "worker" {
			c.waitIdentityFree(p.spec.ID)
		}
		p.start(c.t)
	}
}

// waitIdle waits for the crawl to end: nothing queued or leased on three
// checks in a row half a second apart.
func (c *cluster) waitIdle() {
	ctx := context.Background()
	stable := 0
	c.poll("the crawl to finish", time.Until(c.deadline), func() bool {
		c.restartDead()
		st, err := c.front.Stats(ctx)
		if err == nil && st.Queued == 0 && st.InFlight == 0 {
			stable++
		} else {
			stable = 0
		}
		if stable < 3 {
			time.Sleep(400 * time.Millisecond) // spacing the checks; poll adds 100 ms
			return false
		}
		return true
	})
}

// launch sends the site's seeds through the launcher's bulk load, as
// `trawler launcher bulk --crawl fc` does.
func launch(t *testing.T, c *cluster, seeds []string) {
	t.Helper()
	input := filepath.Join(c.dir, "seeds.txt")
	if err := os.WriteFile(input, []byte(strings.Join(seeds, "\n")+"\n"), 0o644); err != nil {
		t.Fatalf("seeds: %v", err)
	}
	cl, err := kafka.NewClient(c.broker.config("chaos-launcher"))
	if err != nil {
		t.Fatalf("launcher client: %v", err)
	}
	defer cl.Close()
	bc := launcher.BulkConfig{Input: input, Crawl: "fc", Stream: "npld"}
	sum, err := launcher.Bulk(context.Background(), bc, launcher.BulkDeps{Producer: kafka.NewProducer(cl), KeyFunc: hostkey.ForURL,
		Checkpoints: launcher.NewRedisCheckpoints(c.rdb, "", bc.Topic())})
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	c.logf("launched: %s", sum)
}

// evidence counts the children's log messages that show the faults
// struck: a stall nobody noticed or a full disk the guard never saw would
// test nothing.
func (c *cluster) evidence() map[string]int {
	msgs := map[string]string{
		"clamd unavailable (scan held for a retry)": `msg="clamd unavailable"`,
		"disk guard stopped claims":                 `msg="disk space low`,
		"WARCs left open, closed at restart":        `msg="closed WARC left open by a previous run"`,
		"leases expired while crawling":             `lease expired while crawling`,
	}
	out := map[string]int{}
	for _, p := range append(c.workers, c.cdx) {
		b, err := os.ReadFile(p.log)
		if err != nil {
			continue
		}
		for name, m := range msgs {
			out[name] += strings.Count(string(b), m)
		}
	}
	return out
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
