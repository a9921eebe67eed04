package standalone

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/testweb"
)

func testProfile() profile.Profile {
	p := profile.Default()
	p.Crawl.Name = "test"
	p.Politeness = profile.Politeness{DelayFactor: 0, MinDelayMs: 0, MaxDelayMs: 10}
	p.Fetch.AllowPrivateAddresses = true
	p.Fetch.ConnectTimeoutSeconds, p.Fetch.ReadTimeoutSeconds, p.Fetch.TotalTimeoutSeconds = 5, 10, 30
	// Most tests compare with the plain link graph; the robots.txt and
	// sitemap paths are checked by TestStandaloneCrawlsSyntheticWebOnce.
	p.Robots.Policy, p.Extract.Sitemaps = profile.RobotsIgnore, false
	return p
}

// archivalProfile obeys robots.txt and follows sitemaps, as a real crawl
// does.
func archivalProfile() profile.Profile {
	p := testProfile()
	p.Robots.Policy, p.Extract.Sitemaps = profile.RobotsObey, true
	return p
}

// runCrawl runs standalone until idle against the synthetic web, with
// loopback listeners on ephemeral ports.
func runCrawl(t *testing.T, cfg Config, srv *testweb.Server) *Summary {
	t.Helper()
	return runCrawlProfile(t, cfg, srv, testProfile())
}

func runCrawlProfile(t *testing.T, cfg Config, srv *testweb.Server, p profile.Profile) *Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg.UntilIdle, cfg.KafkaListen, cfg.AdminAddr = true, "127.0.0.1:0", "127.0.0.1:0"
	cfg.Crawl, cfg.Stream, cfg.Threads, cfg.Partitions, cfg.TimeZone = "fc", "npld", 8, 2, "Europe/London"
	sum, err := Run(ctx, cfg, Deps{Profile: p, Resolver: srv.Resolver(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: prometheus.NewRegistry(), Version: "test"})
	if err != nil {
		t.Fatalf("standalone run: %v", err)
	}
	return sum
}

func sha1Base32(b []byte) string {
	sum := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// validateWARCs reads every record back with gowarc (syntax errors fatal)
// and checks the block digest of every record and the payload digest of
// every response independently: the payload digest is over the de-chunked
// entity (WARC 1.1), which gowarc's own check does not de-chunk. It returns
// the target URIs of response and revisit records, by count.
func validateWARCs(t *testing.T, files []string) map[string]int {
	t.Helper()
	responses := map[string]int{}
	for _, name := range files {
		r, err := gowarc.NewWarcFileReader(name, 0, gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail),
			gowarc.WithSpecViolationPolicy(gowarc.ErrWarn), gowarc.WithUnknownRecordTypePolicy(gowarc.ErrFail))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			rec, _, _, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s record %d: %v", name, i, err)
			}
			if i == 0 && rec.Type() != gowarc.Warcinfo {
				t.Fatalf("%s: first record is %v, want warcinfo", name, rec.Type())
			}
			raw, err := rec.Block().RawBytes()
			if err != nil {
				t.Fatal(err)
			}
			block, err := io.ReadAll(raw)
			if err != nil {
				t.Fatal(err)
			}
			h := rec.WarcHeader()
			if got := sha1Base32(block); !strings.EqualFold(got, h.Get(gowarc.WarcBlockDigest)) {
				t.Fatalf("%s record %d: block digest %s, header %s", name, i, got, h.Get(gowarc.WarcBlockDigest))
			}
			if rec.Type() == gowarc.Response && h.Get(gowarc.ContentType) == "text/dns" {
				target := h.Get(gowarc.WarcTargetURI)
				if !strings.HasPrefix(target, "dns:") || len(block) < 15 || block[14] != '\n' {
					t.Fatalf("%s: dns record for %q: block %q", name, target, block)
				}
				responses[target]++
			} else if rec.Type() == gowarc.Response {
				target := h.Get(gowarc.WarcTargetURI)
				resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(block)), nil)
				if err != nil {
					t.Fatalf("%s: response for %s: %v", name, target, err)
				}
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatalf("%s: body of %s: %v", name, target, err)
				}
				if got := sha1Base32(body); !strings.EqualFold(got, h.Get(gowarc.WarcPayloadDigest)) {
					t.Fatalf("%s: payload digest of %s is %s, header %s", name, target, got, h.Get(gowarc.WarcPayloadDigest))
				}
				responses[target]++
			} else if rec.Type() == gowarc.Revisit {
				// A capture too: of an unchanged page, or of a payload
				// another URL holds (cross-URL dedup: the same style sheet
				// on two hosts, a ?ref= variant).
				responses[h.Get(gowarc.WarcTargetURI)]++
			}
			_ = rec.Close()
		}
		_ = r.Close()
	}
	return responses
}

// startSite serves a synthetic web until the test ends.
func startSite(t *testing.T, cfg testweb.Config) *testweb.Server {
	t.Helper()
	site, err := testweb.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// diffCrawl compares what was captured (URL -> response records) with the
// site's reachable set and reports missing, duplicated and extra URLs. dns:
// lookups are left out: they are prerequisites, checked by dnsLookups.
func diffCrawl(want []string, got map[string]int) (missing, twice, extra []string) {
	got = maps.Clone(got)
	maps.DeleteFunc(got, func(u string, _ int) bool { return strings.HasPrefix(u, "dns:") })
	for _, u := range want {
		switch got[u] {
		case 0:
			missing = append(missing, u)
		case 1:
		default:
			twice = append(twice, u)
		}
		delete(got, u)
	}
	for u := range got {
		extra = append(extra, u)
	}
	sort.Strings(extra)
	return missing, twice, extra
}

func TestStandaloneCrawlsSyntheticWebOnce(t *testing.T) {
	srv := startSite(t, testweb.Config{Seed: 7, Hosts: 3, PagesPerHost: 20})
	dir := t.TempDir()

	cfg := Config{DataDir: dir, Seeds: srv.Seeds()}
	sum := runCrawlProfile(t, cfg, srv, archivalProfile())
	want := srv.Reachable(testweb.ReachOptions{MaxHops: 20, ObeyRobots: true, FollowSitemaps: true})
	if len(sum.WARCFiles) == 0 {
		t.Fatal("no WARC files")
	}
	if open, _ := filepath.Glob(filepath.Join(sum.WARCDir, "*.open")); len(open) > 0 {
		t.Fatalf("WARC files left open: %v", open)
	}
	responses := validateWARCs(t, sum.WARCFiles)
	if missing, twice, extra := diffCrawl(want, responses); len(missing)+len(twice)+len(extra) > 0 {
		t.Fatalf("crawl differs from the site's reachable set (%d URLs):\nmissing %v\ntwice %v\nextra %v",
			len(want), missing, twice, extra)
	}
	// Every host was looked up once, and recorded as a dns: capture.
	for _, u := range want {
		host, _ := url.Parse(u)
		if n := responses["dns:"+host.Hostname()]; n != 1 {
			t.Errorf("dns:%s recorded %d times, want once", host.Hostname(), n)
		}
	}
	// URIs the frontier finished: what was fetched (robots.txt are
	// prerequisites, outside the frontier) plus the robots-excluded.
	excluded := int(sum.ByStatus[-9998])
	if robots := countSuffix(want, "/robots.txt"); sum.URIs != int64(len(want)-robots+excluded) || excluded == 0 ||
		sum.EndedBy != endedIdle || sum.Queued != 0 {
		t.Errorf("summary says %d URIs (%d robots-excluded), ended %q, %d queued; want %d + excluded, idle, 0",
			sum.URIs, excluded, sum.EndedBy, sum.Queued, len(want)-robots)
	}

	checkLogAndReports(t, dir, sum, len(responses))

	// A second run on the same data directory continues the same crawl:
	// everything is already seen, so nothing is fetched again.
	again := runCrawlProfile(t, cfg, srv, archivalProfile())
	if again.URIs != sum.URIs || len(validateWARCs(t, again.WARCFiles)) != len(responses) {
		t.Fatalf("second run recrawled: URIs %d -> %d", sum.URIs, again.URIs)
	}
}

// checkLogAndReports checks crawl.log has one line per finished URI and
// prerequisite (captures plus the robots-excluded), in Heritrix's columns,
// and that the six end-of-crawl reports agree with the summary.
func checkLogAndReports(t *testing.T, dir string, sum *Summary, captures int) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "fc-npld", "crawl.log*"))
	lines := 0
	for _, name := range logs {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if f := strings.Fields(line); len(f) < 12 || !strings.HasPrefix(f[7], "#") {
				t.Fatalf("%s: crawl.log line not in Heritrix's columns: %q", name, line)
			}
			lines++
		}
	}
	if want := captures + int(sum.ByStatus[-9998]); lines != want {
		t.Errorf("crawl.log has %d lines, want %d (captures and robots-excluded URIs)", lines, want)
	}
	for _, name := range []string{"crawl-report.txt", "seeds-report.txt", "hosts-report.txt", "mimetype-report.txt",
		"responsecode-report.txt", "source-report.txt"} {
		b, err := os.ReadFile(filepath.Join(sum.ReportsDir, name))
		if err != nil || len(b) == 0 {
			t.Fatalf("report %s: %v (%d bytes)", name, err, len(b))
		}
	}
	codes, _ := os.ReadFile(filepath.Join(sum.ReportsDir, "responsecode-report.txt"))
	if want := fmt.Sprintf("%d 200\n", sum.ByStatus[200]+int64(countPrerequisites(t, dir, "200"))); !strings.Contains(string(codes), want) {
		t.Errorf("responsecode-report.txt lacks %q:\n%s", want, codes)
	}
	seeds, _ := os.ReadFile(filepath.Join(sum.ReportsDir, "seeds-report.txt"))
	if n := strings.Count(string(seeds), " CRAWLED "); n != 3 {
		t.Errorf("seeds-report.txt has %d crawled seeds, want 3:\n%s", n, seeds)
	}
}

// countPrerequisites counts crawl.log lines of prerequisites (hop path
// ending in P) with the given status.
func countPrerequisites(t *testing.T, dir, status string) int {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "logs", "fc-npld", "crawl.log*"))
	n := 0
	for _, name := range logs {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 4 && f[1] == status && strings.HasSuffix(f[4], "P") {
				n++
			}
		}
	}
	return n
}

func countSuffix(urls []string, suffix string) int {
	n := 0
	for _, u := range urls {
		if strings.HasSuffix(u, suffix) {
			n++
		}
	}
	return n
}

// maxDocumentsDownload ends the run gracefully: what was in flight
// finishes, the rest stays queued, the summary names the limit, and a
// later run without the limit crawls the rest, nothing twice.
func TestStandaloneCrawlLimit(t *testing.T) {
	srv := startSite(t, testweb.Config{Seed: 5, Hosts: 2, PagesPerHost: 15})
	dir := t.TempDir()
	p := testProfile()
	p.Politeness.MinDelayMs, p.Politeness.MaxDelayMs = 20, 20
	p.Limits.MaxDocumentsDownload = 10
	sum := runCrawlProfile(t, Config{DataDir: dir, Seeds: srv.Seeds()}, srv, p)
	want := srv.Reachable(testweb.ReachOptions{MaxHops: 20})
	if sum.EndedBy != "maxDocumentsDownload" || sum.URIs < 10 || sum.URIs >= int64(len(want)) || sum.Queued == 0 || sum.InFlight != 0 {
		t.Fatalf("limited run: ended %q after %d of %d URIs, %d queued, %d in flight", sum.EndedBy, sum.URIs, len(want), sum.Queued, sum.InFlight)
	}
	downloaded := int64(0)
	for code, n := range sum.ByStatus {
		if code > 0 {
			downloaded += n
		}
	}
	if downloaded != 10 {
		t.Fatalf("%d documents downloaded under a limit of 10 (by status %v)", downloaded, sum.ByStatus)
	}
	var out bytes.Buffer
	sum.Print(&out)
	if !strings.Contains(out.String(), "crawl limit maxDocumentsDownload reached") {
		t.Fatalf("summary does not say which limit ended the crawl:\n%s", out.String())
	}

	rest := runCrawlProfile(t, Config{DataDir: dir, Seeds: srv.Seeds()}, srv, testProfile())
	if missing, twice, extra := diffCrawl(want, validateWARCs(t, rest.WARCFiles)); len(missing)+len(twice)+len(extra) > 0 {
		t.Fatalf("after the limit:\nmissing %v\ntwice %v\nextra %v", missing, twice, extra)
	}
	if rest.EndedBy != endedIdle || rest.URIs != int64(len(want)) {
		t.Fatalf("second run: ended %q with %d URIs, want idle with %d", rest.EndedBy, rest.URIs, len(want))
	}
}

func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unlock() })
	if _, err := lockDataDir(dir); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second lock: %v", err)
	}
}

// A feed mixing good targets with the bad lines of crawl-feed-bad.jsonl:
// the good targets are crawled, each bad line is reported with its line
// number and reason, nothing stops the run.
func TestStandaloneFeedWithBadLines(t *testing.T) {
	srv := startSite(t, testweb.Config{Seed: 11, Hosts: 2, PagesPerHost: 5})
	bad, err := os.ReadFile("testdata/crawl-feed-bad.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var feed strings.Builder
	for i, seed := range srv.Seeds() {
		fmt.Fprintf(&feed, `{"id": %d, "title": "site %d", "seeds": [%q], "depth": "CAPPED", "scope": "root", "schedules": [{"startDate": "2024-01-01 09:00:00", "endDate": "", "frequency": "DAILY"}]}`+"\n", 900+i, i, seed)
	}
	// Drop the bad file's valid lines (their seeds do not resolve here).
	for _, line := range strings.Split(string(bad), "\n") {
		if strings.Contains(line, "example.org") && !strings.Contains(line, `"id": "2004"`) && !strings.Contains(line, "FORTNIGHTLY") && !strings.Contains(line, "01/02/2024") && !strings.Contains(line, "trunc.example") {
			line = "" // keep line numbers: blank lines are skipped, not errors
		}
		feed.WriteString(line + "\n")
	}
	path := filepath.Join(t.TempDir(), "feed.jsonl")
	if err := os.WriteFile(path, []byte(feed.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := runCrawl(t, Config{DataDir: t.TempDir(), Feeds: []string{path}}, srv)
	if sum.Feed == nil || sum.Feed.Launched != 2 || sum.Feed.BadLines != 5 {
		t.Fatalf("feed summary %+v", sum.Feed)
	}
	var lines []int
	for _, e := range sum.Feed.Errors {
		lines = append(lines, e.Line)
		if e.Reason == "" {
			t.Errorf("error without reason: %+v", e)
		}
	}
	if fmt.Sprint(lines) != "[4 5 7 8 9]" {
		t.Fatalf("bad lines reported at %v, want [4 5 7 8 9]", lines)
	}
	if want := len(srv.Reachable(testweb.ReachOptions{MaxHops: 20})); sum.URIs != int64(want) {
		t.Fatalf("crawled %d URIs, want %d", sum.URIs, want)
	}
}
