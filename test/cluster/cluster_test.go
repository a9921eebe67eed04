// Package cluster_test crawls the synthetic web with three worker
// processes sharing a frontier and recently-crawled DB on a real
// three-master Redis Cluster, the frontier split into shards spread over
// every master, and restarts the master holding the most shards in the
// middle of the crawl (docs/frontier.md, Shards and Sizing).
package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/internal/testchild"
	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/redisconn"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/services/worker"
)

// childEnv carries a childSpec to a copy of the test binary that runs one
// worker until SIGTERM.
const childEnv = "TRAWLER_CLUSTER_TEST_CHILD"

// childSpec is what a worker process needs.
type childSpec struct {
	Redis   string            `json:"redis"` // comma-separated cluster nodes
	Brokers []string          `json:"brokers"`
	Dir     string            `json:"dir"`
	ID      string            `json:"id"`
	Hosts   map[string]string `json:"hosts"`
}

func TestMain(m *testing.M) {
	testchild.Main(childEnv, runChild)
	os.Exit(m.Run())
}

// staticHosts resolves the site's names to the addresses the parent found.
type staticHosts map[string]string

func (h staticHosts) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ip, ok := h[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.ParseIP(ip)}}, nil
}

// clusterShards is frontier.shards for the test: CRC16 puts the hash tags
// {fc-npld:0} … {fc-npld:11} 3, 3 and 6 to the slot ranges redis-cli
// --cluster create gives three masters, so every master holds some.
const clusterShards = 12

// crawlProfile crawls slowly enough (300 ms between fetches of a host, so
// about ten seconds for the site) that the restart falls in the middle of
// the crawl.
func crawlProfile() profile.Profile {
	p := profile.Default()
	p.Politeness = profile.Politeness{MinDelayMs: 300, MaxDelayMs: 300}
	p.Fetch.AllowPrivateAddresses = true
	p.Frontier.Shards = clusterShards
	return p
}

func workerConfig(dir, id string) worker.Config {
	return worker.Config{Crawl: "fc", Stream: "npld", ID: id, Threads: 4, DataDir: dir, Lease: 5 * time.Second,
		IdentityLease: 30 * time.Second, JanitorPeriod: time.Hour}
}

// runChild runs one worker on the cluster through redisconn, as the
// worker role does, until SIGTERM.
func runChild(c childSpec) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	rdb, err := redisconn.OpenUniversal(ctx, redisconn.Config{Addr: c.Redis})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child redis:", err)
		return 1
	}
	defer func() { _ = rdb.Close() }()
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		fmt.Fprintf(os.Stderr, "child redis: %T, want a cluster client\n", rdb)
		return 1
	}
	kc := kafka.Config{Brokers: c.Brokers, ClientID: "child-" + c.ID, SessionTimeout: 6 * time.Second, RebalanceTimeout: 6 * time.Second}
	w, err := worker.New(workerConfig(c.Dir, c.ID), worker.Deps{Profile: crawlProfile(), Kafka: kc, Redis: rdb,
		Resolver: staticHosts(c.Hosts), Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Registerer: prometheus.NewRegistry(), Version: "t"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child worker:", err)
		return 1
	}
	if err := w.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "child run:", err)
		return 1
	}
	return 0
}

// child is a running worker process.
type child struct {
	id     string
	cmd    *testchild.Child
	stderr *testlog.Buffer
}

func startChild(t *testing.T, spec childSpec) *child {
	t.Helper()
	c := &child{id: spec.ID, stderr: &testlog.Buffer{}}
	c.cmd = testchild.Start(t, childEnv, spec, c.stderr)
	return c
}

// stop asks the worker to shut down in order and waits for it.
func (c *child) stop(t *testing.T) {
	t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("worker %s: %v\n%s", c.id, err, c.stderr)
		}
	case <-time.After(90 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
		t.Errorf("worker %s did not stop within 90 s\n%s", c.id, c.stderr)
	}
}

// Three worker processes crawl the synthetic web on a three-master Redis
// Cluster with the frontier in 12 shards over all three masters; the
// master holding the most shards is killed and restarted (same port,
// nodes.conf and append-only file) when a third of the site is crawled.
// Every URL of the site ends with one capture event (2xx, 3xx or 4xx);
// URLs captured twice are reported, and must be no more than the URIs in
// flight at the restart and the leases that expired.
func TestClusterCrawlSurvivesMasterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster, a broker and three worker processes")
	}
	nodes := startCluster(t)
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.addr)
	}
	ctx := context.Background()
	rdb, err := redisconn.OpenUniversal(ctx, redisconn.Config{Addr: strings.Join(addrs, ",")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	cc := rdb.(*redis.ClusterClient)

	kc, cl := embeddedtest.Kafka(t, 3)
	// 24 hosts, so that hosts (spread over shards by a hash of their
	// name) reach the shards of every master.
	site, err := testweb.Generate(testweb.Config{Seed: 5, Hosts: 24, PagesPerHost: 10})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(ctx)
	if err != nil {
		t.Fatal(err)
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
	// The default profile obeys robots.txt (the private pages end -9998,
	// not captured) and follows sitemaps.
	want := srv.Reachable(testweb.ReachOptions{MaxHops: 20, ObeyRobots: true, FollowSitemaps: true})
	t.Logf("site: %d URLs over %d hosts", len(want), len(hosts))

	front, err := worker.NewFrontier(rdb, workerConfig("", "x"), crawlProfile(), nil)
	if err != nil {
		t.Fatal(err)
	}
	shards := shardsPerMaster(t, cc)
	var victim *node
	for _, n := range nodes {
		if shards[n.addr] == 0 {
			t.Fatalf("master %s holds no frontier shard (shards per master: %v)", n.addr, shards)
		}
		if victim == nil || shards[n.addr] > shards[victim.addr] {
			victim = n
		}
	}
	t.Logf("frontier shards per master: %v", shards)

	var children []*child
	for i := range 3 {
		id := fmt.Sprintf("w%d", i)
		children = append(children, startChild(t, childSpec{Redis: strings.Join(addrs, ","), Brokers: kc.Brokers,
			Dir: filepath.Join(t.TempDir(), id), ID: id, Hosts: hosts}))
	}
	dump := func() string {
		var b strings.Builder
		for _, c := range children {
			fmt.Fprintf(&b, "--- worker %s:\n%s\n", c.id, tail(c.stderr.String(), 4000))
		}
		fmt.Fprintf(&b, "--- redis %s:\n%s\n", victim.addr, victim.logTail())
		return b.String()
	}
	for _, s := range srv.Seeds() {
		b, _ := json.Marshal(messages.Launch{URL: s, IsSeed: true, ParentURL: s,
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "tid:1:" + s}}})
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte(s), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	// The restart: once a third of the site is finished, SIGKILL the
	// frontier's master while URIs are in flight and start it again at
	// once.
	var inFlight int64
	deadline := time.Now().Add(3 * time.Minute)
	for {
		tot, err := front.Totals(ctx)
		// Fetches on loopback are short beside the politeness delay, so
		// the kill waits for a moment with URIs in flight.
		if err == nil && tot.URIs >= int64(len(want)/3) {
			if st, err := front.Stats(ctx); err == nil && st.InFlight > 0 {
				inFlight = st.InFlight
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no moment with URIs in flight once a third of the site was crawled (%+v, %v)\n%s", tot, err, dump())
		}
		time.Sleep(20 * time.Millisecond) // polling the frontier with a deadline
	}
	restartAt := time.Now()
	victim.kill(t)
	victim.start(t)
	waitClusterOK(t, victim.addr)
	t.Logf("master %s (%d frontier shards) restarted in %v with %d URIs in flight", victim.addr, shards[victim.addr],
		time.Since(restartAt).Round(time.Millisecond), inFlight)

	// Done: nothing queued or in flight, every URL finished, twice in a
	// row. Drained for 10 s with URLs unfinished, the crawl will not
	// finish them: the capture check below names them.
	deadline = time.Now().Add(4 * time.Minute)
	for stable, drained := 0, 0; stable < 2; {
		tot, err1 := front.Totals(ctx)
		st, err2 := front.Stats(ctx)
		idle := err1 == nil && err2 == nil && st.Queued == 0 && st.InFlight == 0
		switch {
		case idle && tot.URIs >= int64(len(want)):
			stable++
		case idle:
			stable, drained = 0, drained+1
		default:
			stable, drained = 0, 0
		}
		if drained == 20 {
			t.Errorf("crawl drained with %d finished of %d\n%s", tot.URIs, len(want), dump())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("crawl not finished: %+v, %d finished of %d\n%s", st, tot.URIs, len(want), dump())
		}
		time.Sleep(500 * time.Millisecond) // polling the frontier with a deadline
	}
	for _, c := range children {
		c.stop(t)
	}

	// A capture is a 2xx, 3xx or 4xx event of an http(s) URL: robots.txt
	// (a prerequisite, fetched once per host through the shared cache) is
	// one of the site's URLs; DNS lookups are not.
	captures := map[string]int{}
	var dns, others int
	for _, r := range readTopic(t, kc, cl, "fc.crawled") {
		ev, err := messages.DecodeCrawled(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasPrefix(ev.URL, "dns:"):
			dns++
		case ev.StatusCode >= 200 && ev.StatusCode < 500:
			captures[ev.URL]++
		default:
			others++
		}
	}
	var missing, dups []string
	for _, u := range want {
		switch n := captures[u]; {
		case n == 0:
			missing = append(missing, u)
		case n > 1:
			dups = append(dups, fmt.Sprintf("%s ×%d", u, n))
		}
		delete(captures, u)
	}
	extra := make([]string, 0, len(captures))
	for u := range captures {
		extra = append(extra, u)
	}
	sort.Strings(extra)
	// A URI whose lease ran out while the master was away is crawled again
	// (its first attempt's result is dropped): the worker logs each.
	expired := 0
	for _, c := range children {
		expired += strings.Count(c.stderr.String(), "lease expired while crawling")
	}
	for _, c := range children {
		t.Logf("worker %s logged: %v", c.id, logMessages(c.stderr.String()))
	}
	t.Logf("%d URLs captured once, %d DNS events, %d other events (robots.txt exclusions), %d captured more than once "+
		"(%d in flight at the restart, %d leases expired while crawling): %v",
		len(want)-len(missing)-len(dups), dns, others, len(dups), inFlight, expired, dups)
	if len(missing) > 0 || len(extra) > 0 {
		t.Fatalf("missing captures: %v; captures of URLs outside the site: %v\n%s\n%s", missing, extra,
			whereMissing(t, kc, cl, front, missing), dump())
	}
	if int64(len(dups)) > inFlight+int64(expired) {
		t.Fatalf("%d URLs captured twice, more than the %d in flight at the restart and %d expired leases: %v",
			len(dups), inFlight, expired, dups)
	}
	// The recently-crawled DB (its keys spread over the masters by URL) was
	// read for every fetch through the cluster client; the workers wrote
	// the outlinks of every page they parsed (capture entries are the
	// cdxwriter's, not run here). Every seed is a page.
	rec, err := recentdb.New(rdb, recentdb.Options{Crawl: "fc", Stream: "npld"})
	if err != nil {
		t.Fatal(err)
	}
	lists := 0
	for _, u := range want {
		o, err := rec.Outlinks(ctx, u)
		if err != nil {
			t.Fatalf("outlinks of %s: %v", u, err)
		}
		if o != nil {
			lists++
		}
	}
	for _, s := range srv.Seeds() {
		if o, err := rec.Outlinks(ctx, s); err != nil || o == nil || len(o.Links) == 0 {
			t.Errorf("recently-crawled DB has no outlinks of seed %s (%v)", s, err)
		}
	}
	var mu sync.Mutex // ForEachMaster calls in parallel
	perMaster := map[string]int64{}
	err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		n, err := c.DBSize(ctx).Result()
		mu.Lock()
		defer mu.Unlock()
		perMaster[c.Options().Addr] = n
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("outlink lists in the recently-crawled DB: %d; keys per master: %v", lists, perMaster)
	for _, c := range children {
		if s := c.stderr.String(); strings.Contains(s, "CROSSSLOT") {
			t.Fatalf("worker %s hit CROSSSLOT:\n%s", c.id, tail(s, 4000))
		}
	}
	checkFrontierSpread(t, cc)
}

// readTopic returns every record in topic.
func readTopic(t *testing.T, kc kafka.Config, cl *kgo.Client, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	rc, err := kafka.NewClient(kc, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out []*kgo.Record
	for int64(len(out)) < want {
		fs := rc.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %s: got %d of %d records", topic, len(out), want)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// logMessages counts a text log's messages (with their error's first
// words), to show what the workers went through.
func logMessages(log string) map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(log, "\n") {
		_, rest, ok := strings.Cut(line, `msg="`)
		if !ok {
			continue
		}
		msg, rest, _ := strings.Cut(rest, `"`)
		if _, e, ok := strings.Cut(rest, `err="`); ok {
			msg += ": " + tail(strings.SplitN(e, `"`, 2)[0], 60)
		}
		out[msg]++
	}
	return out
}
