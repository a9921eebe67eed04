// Package qa_test is issue 35's acceptance: crawls of the synthetic web's
// scripted page, replayed from the archive alone in Chromium and scored,
// and a patch crawl of what the replay found missing.
package qa_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/browser"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/embedded"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/mitm"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/qa"
	"github.com/trawler-crawl/trawler/pkg/replay"
	"github.com/trawler-crawl/trawler/pkg/streamname"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/services/standalone"
)

const (
	crawl  = "fc"
	stream = "npld"
)

func needChromium(t *testing.T) {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if _, err := exec.LookPath(name); err == nil {
			return
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true: no Chromium (scripts/install-test-deps.sh installs it)")
	}
	t.Skip("no Chromium installed")
}

// site serves the synthetic web with its scripted pages, and the profile
// that may fetch the site's own address and nothing else of loopback.
func site(t *testing.T) (*testweb.Server, string, profile.Profile, string) {
	t.Helper()
	s, err := testweb.Generate(testweb.Config{Seed: 35, Hosts: 1, PagesPerHost: 5, Scripted: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := s.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ips, err := srv.Resolver().LookupIPAddr(context.Background(), s.HostName(0))
	if err != nil || len(ips) == 0 {
		t.Fatalf("resolve %s: %v", s.HostName(0), err)
	}
	p := profile.Default()
	p.Crawl.Name = crawl
	p.Politeness = profile.Politeness{}
	p.Fetch.AllowAddresses = []string{ips[0].IP.String() + "/32"}
	p.Robots.Policy = profile.RobotsObey
	p.Render.ScrollSteps = 2
	return srv, strings.TrimSuffix(srv.Seeds()[0], "/") + testweb.PathScripted, p, ips[0].IP.String()
}

// crawlOnce runs the standalone on dir until idle.
func crawlOnce(t *testing.T, dir string, seeds []string, render string, p profile.Profile, srv *testweb.Server) *standalone.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sum, err := standalone.Run(ctx, standalone.Config{
		DataDir: dir, Seeds: seeds, UntilIdle: true, KafkaListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0",
		Crawl: crawl, Stream: stream, Threads: 4, Partitions: 2, TimeZone: "Europe/London", Render: render, RenderTabs: 1,
	}, standalone.Deps{Profile: p, Resolver: srv.Resolver(), Logger: slog.New(slog.DiscardHandler),
		Registry: prometheus.NewRegistry(), Version: "test"})
	if err != nil {
		t.Fatalf("crawl: %v", err)
	}
	t.Logf("crawl (render %s): %d URIs, by status %v", render, sum.URIs, sum.ByStatus)
	return sum
}

// checker is QA over the crawl in dir: its index, its WARCs, a browser.
type checker struct {
	t    *testing.T
	pool *browser.Pool
	ca   *mitm.CA
	ua   string
}

func newChecker(t *testing.T, p profile.Profile) *checker {
	t.Helper()
	ca, err := mitm.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	pool, err := browser.New(context.Background(), browser.Config{Tabs: 2, PageTimeout: 60 * time.Second,
		SPKIHashes: []string{ca.SPKIHash()}, NoSandbox: true, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Close() })
	return &checker{t: t, pool: pool, ca: ca, ua: p.UserAgent("test")}
}

// run checks every page of the crawl's logs as `trawler qa --data` does
// (pkg/qa's Job), writes the report into out and returns it, and with
// patch (`--patch`) sends the missing URLs.
func (c *checker) run(sum *standalone.Summary, dir, out string, patch *qa.PatchTarget) (*qa.Report, *qa.Patch) {
	t := c.t
	t.Helper()
	ix, err := cdxindex.Open(sum.CDXPath, cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ix.Close() }()
	// The worker's WARCs and the renderer's, each in a directory of its own.
	warcDirs, _ := filepath.Glob(filepath.Join(dir, "warcs", "*"))
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*", "crawl.log"))
	m, err := qa.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, pt, err := qa.Job{Index: replay.NewCDXIndex(ix, crawl), WARCDirs: warcDirs, LogFiles: logs, Crawl: crawl,
		Browser: c.pool, CA: c.ca, UserAgent: c.ua, ScrollSteps: 2, Workers: 2, OutDir: out, Patch: patch, Metrics: m}.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.BadLines) > 0 {
		t.Errorf("crawl.log lines the crawl wrote could not be read: %v", rep.BadLines)
	}
	return rep, pt
}

// counting listens where the web was, so a connection the replay makes
// to it is counted rather than refused unseen.
type counting struct {
	ln net.Listener
	n  atomic.Int64
}

func listenCounting(t *testing.T, addr string) *counting {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on the site's address %s: %v", addr, err)
	}
	c := &counting{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.n.Add(1)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return c
}

// takeOverWeb stops the synthetic web and listens, counting, on its
// address and its trap's: from here on any connection is the replay
// reaching outside the archive.
func takeOverWeb(t *testing.T, srv *testweb.Server, ip string, page string) []*counting {
	t.Helper()
	port := strings.TrimPrefix(page[strings.LastIndex(page, ":"):], ":")
	port = port[:strings.Index(port, "/")]
	trap := srv.TrapAddr()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	return []*counting{listenCounting(t, net.JoinHostPort(ip, port)), listenCounting(t, trap)}
}

func result(t *testing.T, r *qa.Report, url string) qa.PageResult {
	t.Helper()
	for _, p := range r.Results {
		if p.URL == url {
			return p
		}
	}
	t.Fatalf("no QA result for %s in %s", url, r.Summary())
	return qa.PageResult{}
}

// patchTarget is the crawl's tocrawl topic on the broker kept in dir, as
// `trawler qa --patch` reaches it on a running crawl; the broker stops at
// the test's end or when the returned function is called.
func patchTarget(t *testing.T, dir string) (*qa.PatchTarget, func()) {
	t.Helper()
	k, err := embedded.StartKafka(context.Background(), embedded.KafkaOptions{DataDir: filepath.Join(dir, "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kafka.NewClient(kafka.Config{Brokers: k.Brokers(), ClientID: "qa-test"})
	if err != nil {
		_ = k.Close()
		t.Fatal(err)
	}
	return &qa.PatchTarget{Client: cl, Topic: streamname.Topic(crawl, stream, "tocrawl")}, func() {
		cl.Close()
		_ = k.Close()
	}
}

// logLine is the crawl.log line of url in dir's logs, as fields.
func logLine(t *testing.T, dir, url string) []string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*", "crawl.log"))
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if fs := strings.Fields(l); len(fs) > 5 && fs[3] == url {
				return fs
			}
		}
	}
	return nil
}

// The scripted page crawled without rendering and without speculative
// extraction from scripts (a crawl that runs no script and reads none)
// lacks what its script asks for; QA finds it, the patch crawl fetches
// it, and a second QA scores higher with fewer URLs missing. The replay
// never reaches the web.
func TestPatchCrawlImprovesReplay(t *testing.T) {
	needChromium(t)
	srv, page, p, ip := site(t)
	p.Extract.Javascript = false
	dir := t.TempDir()
	sum := crawlOnce(t, dir, []string{page}, "off", p, srv)

	c := newChecker(t, p)
	target, stopBroker := patchTarget(t, dir)
	first, pt := c.run(sum, dir, filepath.Join(dir, "qa-1"), target)
	stopBroker()
	t.Logf("QA 1 (plain crawl): %s", first.Summary())
	r1 := result(t, first, page)
	t.Logf("QA 1 %s: score %.3f %s, outcomes %v, missing %v", page, r1.Score, r1.Severity, r1.Outcomes, r1.Missing)
	host := strings.TrimSuffix(page, testweb.PathScripted)
	if !slices.Contains(r1.Missing, host+testweb.PathScriptData) {
		t.Errorf("QA 1: %s is not listed missing (the fetch() data a plain crawl cannot find): %v", testweb.PathScriptData, r1.Missing)
	}

	t.Logf("patch: %d launches, %d dropped", len(pt.Launches), pt.Dropped)
	sum = crawlOnce(t, dir, nil, "off", p, srv)
	// The worker crawled it as an embed the page discovered.
	if l := logLine(t, dir, host+testweb.PathScriptData); l == nil || l[1] != "200" || l[4] != "E" || l[5] != page {
		t.Errorf("patch crawl's crawl.log line of %s: %v; want 200, hop E, via the page", testweb.PathScriptData, l)
	}

	webs := takeOverWeb(t, srv, ip, page)
	second, _ := c.run(sum, dir, filepath.Join(dir, "qa-2"), nil)
	t.Logf("QA 2 (after the patch crawl): %s", second.Summary())
	r2 := result(t, second, page)
	t.Logf("QA 2 %s: score %.3f %s, outcomes %v, missing %v", page, r2.Score, r2.Severity, r2.Outcomes, r2.Missing)
	if !(r2.Score > r1.Score) || len(r2.Missing) >= len(r1.Missing) {
		t.Errorf("after the patch crawl the page scores %.3f with %d missing, before %.3f with %d: want higher and fewer",
			r2.Score, len(r2.Missing), r1.Score, len(r1.Missing))
	}
	if !(second.MeanScore > first.MeanScore) || second.Missing >= first.Missing {
		t.Errorf("report: mean %.3f, %d missing after; %.3f, %d before: want higher and fewer",
			second.MeanScore, second.Missing, first.MeanScore, first.Missing)
	}
	for i, w := range webs {
		if n := w.n.Load(); n != 0 {
			t.Errorf("listener %d (%s) where the web was got %d connections during replay, want 0", i, w.ln.Addr(), n)
		}
	}
}

// A page crawled with rendering replays complete: every resource it asks
// for that the crawl could have had is answered, and its screenshot and
// text match those taken at capture time.
func TestRenderedPageReplaysComplete(t *testing.T) {
	needChromium(t)
	srv, page, p, ip := site(t)
	p.Render.HandOff = true
	dir := t.TempDir()
	sum := crawlOnce(t, dir, []string{page}, "on", p, srv)
	webs := takeOverWeb(t, srv, ip, page)
	rep, _ := newChecker(t, p).run(sum, dir, t.TempDir(), nil)
	t.Logf("QA (rendered crawl): %s", rep.Summary())
	r := result(t, rep, page)
	t.Logf("QA %s: score %.3f %s, resources %v screenshot %v text %v (%s), outcomes %v, missing %v, other %+v, notes %v",
		page, r.Score, r.Severity, val(r.Resources), val(r.Screenshot), val(r.Text), r.TextHow, r.Outcomes, r.Missing, r.Other, r.Notes)
	if r.Severity != qa.Good || r.Screenshot == nil || r.Text == nil || len(r.Missing) != 0 {
		t.Errorf("rendered page: %s (score %.3f), screenshot %v, text %v, missing %v: want good with both matches and nothing missing",
			r.Severity, r.Score, val(r.Screenshot), val(r.Text), r.Missing)
	}
	for i, w := range webs {
		if n := w.n.Load(); n != 0 {
			t.Errorf("listener %d (%s) where the web was got %d connections during replay, want 0", i, w.ln.Addr(), n)
		}
	}
}

func val(f *float64) any {
	if f == nil {
		return "none"
	}
	return *f
}
