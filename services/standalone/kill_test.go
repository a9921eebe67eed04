package standalone

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/internal/testchild"
	"github.com/trawler-crawl/trawler/pkg/embedded"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// childEnv carries a childSpec to a re-executed test binary, which then
// runs one standalone crawl and exits.
const childEnv = "TRAWLER_STANDALONE_CHILD"

// childSpec is what a child standalone process crawls.
type childSpec struct {
	DataDir   string
	AdminAddr string
	Site      testweb.Config
	Threads   int
}

func TestMain(m *testing.M) {
	testchild.Main(childEnv, runChild)
	os.Exit(m.Run())
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
	p := testProfile()
	// Slow enough that the parent can kill the crawl half way.
	p.Politeness.MinDelayMs, p.Politeness.MaxDelayMs = 40, 40
	_, err = Run(ctx, Config{DataDir: c.DataDir, Seeds: srv.Seeds(), UntilIdle: true, KafkaListen: "127.0.0.1:0",
		AdminAddr: c.AdminAddr, Crawl: "fc", Stream: "npld", Threads: c.Threads, Partitions: 2, TimeZone: "UTC"},
		Deps{Profile: p, Resolver: srv.Resolver(), Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Registry: prometheus.NewRegistry(), Version: "test"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "standalone:", err)
		return 1
	}
	return 0
}

func freePort(t *testing.T, host string) int {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startChild starts a standalone crawl in a new process; the test kills
// it if it still runs at the end.
func startChild(t *testing.T, spec childSpec) *testchild.Child {
	t.Helper()
	return testchild.Start(t, childEnv, spec, os.Stderr)
}

// finished reads the child's count of finished URIs from its /metrics;
// -1 while it does not answer.
func finished(addr string) int {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "trawler_worker_uris_finished_total{") {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			n += int(v)
		}
	}
	return n
}

// killAt SIGKILLs the child once it has finished at least n URIs, and waits
// until its embedded redis-server (told to stop by the kernel when its
// parent dies) has exited.
func killAt(t *testing.T, cmd *testchild.Child, spec childSpec, n int) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	got := 0
	for got < n {
		if time.Now().After(deadline) {
			t.Fatalf("child finished %d URIs before the deadline, want %d", got, n)
		}
		time.Sleep(20 * time.Millisecond) // polling the child's progress
		got = finished(spec.AdminAddr)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	pidFile := filepath.Join(spec.DataDir, "redis", "redis-server.pid")
	for deadline := time.Now().Add(time.Minute); ; {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			break
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid <= 0 || syscall.Kill(pid, 0) != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server %d outlived its parent", pid)
		}
		time.Sleep(20 * time.Millisecond) // polling for the orphan's exit
	}
	return got
}

// crawledEvents reads every crawled event the runs on dir published, from
// the embedded broker's data.
func crawledEvents(t *testing.T, dir string) map[string]int {
	t.Helper()
	ctx := context.Background()
	k, err := embedded.StartKafka(ctx, embedded.KafkaOptions{DataDir: filepath.Join(dir, "kafka"), Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	cl, err := kafka.NewClient(kafka.Config{Brokers: k.Brokers()}, kgo.ConsumeTopics("fc.crawled"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, "fc.crawled")
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	out := map[string]int{}
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for got := int64(0); got < want; {
		fs := cl.PollFetches(rctx)
		if rctx.Err() != nil {
			t.Fatalf("read %d of %d crawled events", got, want)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got++
			ev, err := messages.DecodeCrawled(r.Value)
			if err != nil {
				t.Errorf("crawled event %s: %v", r.Value, err)
				return
			}
			out[ev.URL]++
		})
	}
	return out
}

// A standalone crawl killed with SIGKILL twice and restarted on the same
// data directory finishes with nothing lost and nothing crawled twice
// beyond what was in flight at each kill: first with the embedded
// redis-server's own state, then after its data is lost, from the Kafka
// journal (frontier rebuild).
func TestStandaloneKillRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three standalone processes")
	}
	// The site is generated here only to learn its seeds and reachable
	// set; the child serves it on the same port.
	cfg := testweb.Config{Seed: 21, Hosts: 3, PagesPerHost: 20}
	srv := startSite(t, cfg)
	want := srv.Reachable(testweb.ReachOptions{MaxHops: 20})
	u, _ := url.Parse(srv.Seeds()[0])
	cfg.Port, _ = strconv.Atoi(u.Port())
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	const threads = 4
	spec := childSpec{DataDir: t.TempDir(), Site: cfg, Threads: threads}
	run := func() (*testchild.Child, childSpec) {
		s := spec
		s.AdminAddr = fmt.Sprintf("127.0.0.1:%d", freePort(t, "127.0.0.1"))
		return startChild(t, s), s
	}

	cmd, s := run()
	first := killAt(t, cmd, s, len(want)/4)
	cmd, s = run()
	second := killAt(t, cmd, s, len(want)/4) // counted afresh by the new process
	if err := os.RemoveAll(filepath.Join(spec.DataDir, "redis")); err != nil {
		t.Fatal(err)
	}
	cmd, _ = run()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("final run: %v", err)
	}
	t.Logf("killed after %d and %d URIs of %d", first, second, len(want))

	events := crawledEvents(t, spec.DataDir)
	dups := 0
	for u, n := range events {
		dups += n - 1
		if n > 1 {
			t.Logf("crawled %d times (in flight at a kill): %s", n, u)
		}
	}
	missing, _, extra := diffCrawl(want, events)
	if len(missing)+len(extra) > 0 {
		t.Fatalf("after kills and restarts:\nmissing %v\nextra %v", missing, extra)
	}
	// At a kill at most 2 x threads claims are outstanding (being crawled
	// or buffered), and only those can have published their event
	// without completing.
	t.Logf("%d URIs crawled more than once", dups)
	if dups > 2*2*threads {
		t.Fatalf("%d URIs crawled again, more than were in flight at the two kills", dups)
	}
	if open, _ := filepath.Glob(filepath.Join(spec.DataDir, "warcs", "fc-npld", "*.open")); len(open) > 0 {
		t.Fatalf("WARC files left open: %v", open)
	}
	// The files the kills cut short were closed at the next start with
	// their partial last record cut away: every record of every file reads
	// back whole, with valid digests, and every captured URL has a record.
	files, _ := filepath.Glob(filepath.Join(spec.DataDir, "warcs", "fc-npld", "*.warc.gz"))
	records := validateWARCs(t, files)
	if missing, _, _ := diffCrawl(want, records); len(missing) > 0 {
		t.Fatalf("URLs with an event but no complete record: %v", missing)
	}
	checkLogMatchesCaptures(t, spec.DataDir)
}

// checkLogMatchesCaptures checks that crawl.log, after the kills, holds
// exactly one line per capture in the WARCs (response, revisit and
// resource records, dns: included), matched by URL and fetch start to the
// second (the WARC-Date): every line of a status above 0 is a capture.
func checkLogMatchesCaptures(t *testing.T, dataDir string) {
	t.Helper()
	captures := map[string]int{}
	for _, dir := range []string{"warcs", "warcs-viral"} {
		files, _ := filepath.Glob(filepath.Join(dataDir, dir, "fc-npld", "*.warc.gz"))
		for _, name := range files {
			eachRecord(t, name, func(rec gowarc.WarcRecord) {
				switch rec.Type() {
				case gowarc.Response, gowarc.Revisit, gowarc.Resource:
					h := rec.WarcHeader()
					date, err := time.Parse(time.RFC3339Nano, h.Get(gowarc.WarcDate))
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					captures[strings.Trim(h.Get(gowarc.WarcTargetURI), "<>")+" "+date.UTC().Format("20060102150405")]++
				}
			})
		}
	}
	lines := map[string]int{}
	logs, _ := filepath.Glob(filepath.Join(dataDir, "logs", "fc-npld", "crawl.log*"))
	for _, name := range logs {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			f := strings.Fields(line)
			if len(f) != 12 || !strings.HasPrefix(f[7], "#") {
				t.Fatalf("%s: line not in Heritrix's 12 columns: %q", name, line)
			}
			if status, _ := strconv.Atoi(f[1]); status > 0 {
				lines[f[3]+" "+f[8][:min(14, len(f[8]))]]++
			}
		}
	}
	var missing, extra []string
	total := 0
	for k, n := range captures {
		total += n
		for range n - lines[k] {
			missing = append(missing, k)
		}
	}
	for k, n := range lines {
		for range n - captures[k] {
			extra = append(extra, k)
		}
	}
	t.Logf("%d captures in the WARCs", total)
	if len(missing)+len(extra) > 0 {
		sort.Strings(missing)
		sort.Strings(extra)
		t.Fatalf("crawl.log does not match the WARCs one to one:\n%d captures without a line: %v\n%d lines without a capture: %v",
			len(missing), missing, len(extra), extra)
	}
}
