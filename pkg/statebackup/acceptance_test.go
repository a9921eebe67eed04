package statebackup_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/trawler-crawl/trawler/internal/testchild"
	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/rdbsync"
	"github.com/trawler-crawl/trawler/pkg/statebackup"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/services/standalone"
)

// childEnv carries a childSpec to a re-executed test binary, which then
// runs one standalone crawl of the synthetic web and exits.
const childEnv = "TRAWLER_STATEBACKUP_CHILD"

// childSpec is what a child standalone process crawls, and where it listens.
type childSpec struct {
	DataDir   string
	AdminAddr string
	KafkaAddr string
	CDXAddr   string
	Site      testweb.Config
	Threads   int
	// SlowPort serves slow.test: a chain of slowPages pages, each
	// answering after slowDelay, so that a fetch is in flight when the
	// backup pauses the claims.
	SlowPort int
}

// The slow host: its pages take long enough that a backup finds one in
// flight and its drain times out first.
const (
	slowHost  = "slow.test"
	slowPages = 12
	slowDelay = 400 * time.Millisecond
)

// slowURLs are the slow host's pages.
func slowURLs(port int) []string {
	var out []string
	for i := range slowPages {
		out = append(out, fmt.Sprintf("http://%s:%d/p%d.html", slowHost, port, i))
	}
	return out
}

// serveSlow serves the slow host's chain of pages on 127.0.0.1:port.
func serveSlow(port int) (*http.Server, error) {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/p%d.html", &n); err != nil || n < 0 || n >= slowPages {
			http.NotFound(w, r)
			return
		}
		time.Sleep(slowDelay) // the slowness is the point
		w.Header().Set("Content-Type", "text/html")
		next := ""
		if n+1 < slowPages {
			next = fmt.Sprintf(`<a href="/p%d.html">next</a>`, n+1)
		}
		fmt.Fprintf(w, "<html><body>page %d %s</body></html>", n, next)
	})}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}

// slowResolver answers slow.test with loopback and asks the synthetic
// web's resolver for the rest.
type slowResolver struct{ next fetch.Resolver }

// LookupIPAddr implements fetch.Resolver.
func (r slowResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	if host == slowHost {
		return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
	}
	return r.next.LookupIPAddr(ctx, host)
}

func TestMain(m *testing.M) {
	testchild.Main(childEnv, runChild)
	os.Exit(m.Run())
}

// crawlProfile is the standalone tests' profile, slow enough (40 ms
// between a host's fetches) that a backup lands in the middle.
func crawlProfile() profile.Profile {
	p := profile.Default()
	p.Crawl.Name = "test"
	p.Politeness = profile.Politeness{DelayFactor: 0, MinDelayMs: 40, MaxDelayMs: 40}
	p.Fetch.AllowPrivateAddresses = true
	p.Fetch.ConnectTimeoutSeconds, p.Fetch.ReadTimeoutSeconds, p.Fetch.TotalTimeoutSeconds = 5, 10, 30
	p.Robots.Policy, p.Extract.Sitemaps = profile.RobotsIgnore, false
	return p
}

// runChild serves the synthetic web and crawls it until idle.
func runChild(c childSpec) int {
	ctx := context.Background()
	site, err := testweb.Generate(c.Site)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv, err := site.Start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	slow, err := serveSlow(c.SlowPort)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer slow.Close()
	seeds := append(srv.Seeds(), slowURLs(c.SlowPort)[0])
	_, err = standalone.Run(ctx, standalone.Config{DataDir: c.DataDir, Seeds: seeds, UntilIdle: true,
		KafkaListen: c.KafkaAddr, AdminAddr: c.AdminAddr, CDXAddr: c.CDXAddr, Crawl: "fc", Stream: "npld",
		Threads: c.Threads, Partitions: 2, TimeZone: "UTC"},
		standalone.Deps{Profile: crawlProfile(), Resolver: slowResolver{srv.Resolver()}, Version: "test", Registry: prometheus.NewRegistry(),
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		fmt.Fprintln(os.Stderr, "standalone:", err)
		return 1
	}
	return 0
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startChild starts a standalone crawl in a new process; the test kills it
// if it is still running at the end.
func startChild(t *testing.T, spec childSpec) (cmd *exec.Cmd, done <-chan struct{}, wait func() error) {
	t.Helper()
	cmd, err := testchild.Command(childEnv, spec)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// done is closed when the child has exited; *waitErr is then its
	// exit status. A closed channel can be waited on by the test and by
	// the cleanup alike.
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	wait = func() error { <-exited; return waitErr }
	done = exited
	return cmd, done, wait
}

// finished reads the child's count of finished URIs; -1 while it does not
// answer.
func finished(addr string) int {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "trawler_worker_uris_finished_total{") {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += int(v)
		}
	}
	return n
}

// childRedis finds the address of the child's embedded redis-server (the
// standalone picks a free port) in the standalone.json it writes, and the
// server's pid in its pid file.
func childRedis(t *testing.T, dataDir string) (addr string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) { // polling for the child's server
		e, err := standalone.ReadEndpoints(dataDir) // what `state backup --standalone` reads
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dataDir, "redis", "redis-server.pid"))
		if err != nil {
			continue
		}
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return e.Redis, pid
	}
	t.Fatalf("no running standalone with a redis-server on %s", dataDir)
	return "", 0
}

// captures counts the index's captures per URL (dns: left out).
func captures(t *testing.T, dir string) (map[string]int, []cdx.Line) {
	t.Helper()
	ix, err := cdxindex.Open(dir, cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	out := map[string]int{}
	var lines []cdx.Line
	err = ix.Each(context.Background(), "fc", func(l cdx.Line) error {
		lines = append(lines, l)
		if !strings.HasPrefix(l.Original, "dns:") {
			out[l.Original]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, lines
}

// The acceptance test of issue 25 item 3: a standalone crawl is backed up
// while it runs and killed right after; the backup is restored into a
// fresh data directory and the crawl continues there on other ports, and
// completes: every reachable URL is captured, and the only URLs captured
// twice are those in flight at the backup. The crawl includes a slow host
// whose pages take 400 ms. Once with two URIs held in flight by the test
// (the drain times out; the restore must queue them again), once with a
// drain shorter than a slow fetch, so that the crawl's own fetch is in
// flight at the snapshot and may finish before the checkpoint.
func TestBackupWhileCrawlingRestoreElsewhere(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two standalone crawls")
	}
	t.Run("held leases", func(t *testing.T) { backupWhileCrawling(t, 2, 2*time.Second) })
	t.Run("slow fetch in flight", func(t *testing.T) { backupWhileCrawling(t, 0, 100*time.Millisecond) })
}

func backupWhileCrawling(t *testing.T, hold int, drain time.Duration) {
	ctx := context.Background()
	cfg := testweb.Config{Seed: 21, Hosts: 3, PagesPerHost: 20}
	site, err := testweb.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slowPort, _ := strconv.Atoi(strings.TrimPrefix(freeAddr(t), "127.0.0.1:"))
	want := append(srv.Reachable(testweb.ReachOptions{MaxHops: 20}), slowURLs(slowPort)...)
	u, _ := url.Parse(srv.Seeds()[0])
	cfg.Port, _ = strconv.Atoi(u.Port())
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}

	a := childSpec{DataDir: filepath.Join(t.TempDir(), "a"), AdminAddr: freeAddr(t), KafkaAddr: freeAddr(t), CDXAddr: freeAddr(t), Site: cfg, Threads: 4, SlowPort: slowPort}
	cmdA, _, waitA := startChild(t, a)
	for deadline := time.Now().Add(2 * time.Minute); finished(a.AdminAddr) < len(want)/3; time.Sleep(20 * time.Millisecond) { // polling the crawl's progress
		if time.Now().After(deadline) {
			t.Fatalf("the first crawl did not reach %d URIs", len(want)/3)
		}
	}
	redisAddr, redisPID := childRedis(t, a.DataDir)
	// The checkpoint is a write: it needs the token the standalone generated.
	token, err := admin.LoadToken(filepath.Join(a.DataDir, standalone.AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() { _ = rdb.Close() })
	f, err := frontier.New(rdb, "fc-npld", frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := kafka.NewClient(kafka.Config{Brokers: []string{a.KafkaAddr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kc.Close)
	// Two URIs are claimed here and held, as by a worker whose fetches
	// hang: the drain cannot wait them out, so they are in flight at the
	// snapshot, and the restore must queue them again.
	var stuck []*frontier.Claim
	for deadline := time.Now().Add(time.Minute); len(stuck) < hold; time.Sleep(5 * time.Millisecond) { // polling for a ready host
		cl, _, err := f.Claim(ctx, hold-len(stuck), time.Hour)
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("claim: %d, %v", len(stuck), err)
		}
		stuck = append(stuck, cl...)
	}
	out := filepath.Join(t.TempDir(), "backup")
	before := finished(a.AdminAddr)
	m, err := statebackup.Backup(ctx, statebackup.BackupOptions{Out: out, Masters: []rdbsync.Options{{Addr: redisAddr}},
		Redis: rdb, Frontiers: []*frontier.Frontier{f}, Kafka: kadm.NewClient(kc),
		Groups: []statebackup.GroupTopic{{Group: "trawler-worker-fc-npld", Topic: "fc.tocrawl.npld"},
			{Group: "trawler-cdxwriter-fc", Topic: "fc.crawled", Index: true}},
		DrainTimeout: drain, CDXURL: "http://" + a.CDXAddr, CDXToken: token, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	after := finished(a.AdminAddr)
	// The crawl ran on during the snapshots' transfer; stop it at once,
	// as a lost machine would.
	_ = cmdA.Process.Signal(syscall.SIGKILL)
	_ = waitA()
	for deadline := time.Now().Add(time.Minute); syscall.Kill(redisPID, 0) == nil; time.Sleep(20 * time.Millisecond) { // polling for the orphan's exit
		if time.Now().After(deadline) {
			t.Fatalf("redis-server %d outlived its parent", redisPID)
		}
	}
	var size int64
	for _, fl := range m.Files {
		size += fl.Size
	}
	t.Logf("backup after %d of %d URIs finished (%d when it ended): %d files, %d bytes, %.3fs; claims paused %.3fs, drain %.3fs; quiesce %+v",
		before, len(want), after, len(m.Files), size, m.TookSeconds, m.Quiesce.PausedSecs, m.Quiesce.DrainSecs, m.Quiesce)

	b := childSpec{DataDir: filepath.Join(t.TempDir(), "b"), AdminAddr: freeAddr(t), KafkaAddr: freeAddr(t), CDXAddr: freeAddr(t), Site: cfg, Threads: 4, SlowPort: slowPort}
	rep, err := statebackup.Restore(ctx, statebackup.RestoreOptions{From: out, DataDir: b.DataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restored in %s: %d keys, %d URIs in flight put back, index %v", rep.Took.Round(time.Millisecond), rep.Keys, rep.Released, rep.CDXCounts)
	if hold > 0 && (m.Quiesce.Drained || m.Quiesce.InFlight < int64(hold) || rep.Released < int64(hold)) {
		t.Fatalf("%d URIs held at the backup: quiesce %+v, %d released by the restore", len(stuck), m.Quiesce, rep.Released)
	}
	_, doneB, waitB := startChild(t, b)
	select {
	case <-doneB:
		if err := waitB(); err != nil {
			t.Fatalf("the restored crawl: %v", err)
		}
	case <-time.After(3 * time.Minute):
		t.Fatal("the restored crawl did not finish")
	}

	got, lines := captures(t, filepath.Join(b.DataDir, "cdx", "index"))
	var missing, extra, twice []string
	for _, w := range want {
		switch got[w] {
		case 0:
			missing = append(missing, w)
		case 1:
		default:
			twice = append(twice, w)
		}
		delete(got, w)
	}
	for u := range got {
		extra = append(extra, u)
	}
	if len(missing)+len(extra) > 0 {
		t.Fatalf("after backup and restore: missing %v, extra %v", missing, extra)
	}
	t.Logf("%d URLs captured once, %d twice (%d in flight at the backup): %v", len(want)-len(twice), len(twice), m.Quiesce.InFlight, twice)
	if int64(len(twice)) > m.Quiesce.InFlight {
		t.Fatalf("%d URLs captured twice, more than the %d in flight at the backup", len(twice), m.Quiesce.InFlight)
	}
	// Every capture the restored index lists is in a WARC file of one of
	// the two machines: the first's (up to the backup, the one being
	// written at the kill still .open) or the second's.
	for _, l := range lines {
		var found bool
		for _, dir := range []string{a.DataDir, b.DataDir} {
			for _, suffix := range []string{"", ".open"} {
				if _, err := os.Stat(filepath.Join(dir, "warcs", "fc-npld", l.Filename+suffix)); err == nil {
					found = true
				}
			}
		}
		if !found {
			t.Fatalf("capture of %s in %s: no such WARC file on either machine", l.Original, l.Filename)
		}
	}
}
