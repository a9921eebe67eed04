package standalone

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/docfind"
	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/metawarc"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// provenanceWeb is a small web of named hosts on one loopback server:
// done.test completes, quota.test hits an object quota, bytes.test a byte
// quota, robots.test is all disallowed, nxdomain.test does not resolve,
// and docs.test (a watched target) serves PDFs, some with Link rel="up".
type provenanceWeb struct {
	srv  *httptest.Server
	port string
}

func newProvenanceWeb(t *testing.T) *provenanceWeb {
	page := func(links ...string) string {
		var b strings.Builder
		b.WriteString("<html><body>")
		for _, l := range links {
			fmt.Fprintf(&b, `<a href="%s">x</a>`, l)
		}
		b.WriteString("</body></html>")
		return b.String()
	}
	big := strings.Repeat("<p>padding</p>", 300) // about 4 KiB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		switch {
		case r.URL.Path == "/robots.txt" && host == "robots.test":
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /\n")
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case host == "docs.test" && strings.HasSuffix(r.URL.Path, ".pdf"):
			w.Header().Set("Content-Type", "application/pdf")
			if r.URL.Path == "/files/a.pdf" {
				w.Header().Set("Link", `</publications/a>; rel="up"`)
			}
			_, _ = io.WriteString(w, "%PDF-1.4 "+r.URL.Path)
		case host == "docs.test" && r.URL.Path == "/":
			_, _ = io.WriteString(w, page("/files/a.pdf", "/files/b.pdf", "/publications/a"))
		case host == "docs.test":
			_, _ = io.WriteString(w, page("/files/a.pdf"))
		case r.URL.Path == "/":
			_, _ = io.WriteString(w, page("/1", "/2", "/3", "/4", "/5"))
		default:
			_, _ = io.WriteString(w, "<html><body>"+big+"</body></html>")
		}
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return &provenanceWeb{srv: srv, port: port}
}

func (p *provenanceWeb) seed(host string) string { return "http://" + host + ":" + p.port + "/" }

// LookupIPAddr resolves every .test name to loopback but nxdomain.test.
func (p *provenanceWeb) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if host == "nxdomain.test" || !strings.HasSuffix(host, ".test") {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
}

func provenanceProfile(t *testing.T) profile.Profile {
	p := archivalProfile()
	const sheets = `
sheets:
  definitions:
    objects2:
      quotas.hostMaxFetchSuccesses: 2
    kb5:
      quotas.hostMaxSuccessKb: 5
  associations:
    - surtPrefixes: ["http://(test,quota,"]
      sheets: [objects2]
    - surtPrefixes: ["http://(test,bytes,"]
      sheets: [kb5]
`
	if err := profile.Decode(strings.NewReader(sheets), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func runProvenanceCrawl(t *testing.T, dir string, web *provenanceWeb, seeds []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := Config{DataDir: dir, Seeds: seeds, Relaunch: true, UntilIdle: true, KafkaListen: "127.0.0.1:0", AdminAddr: "127.0.0.1:0",
		Crawl: "fc", Stream: "npld", Threads: 4, Partitions: 2, TimeZone: "Europe/London", Render: "off", RenderTabs: 1}
	if _, err := Run(ctx, cfg, Deps{Profile: provenanceProfile(t), Resolver: web,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: prometheus.NewRegistry(), Version: "test"}); err != nil {
		t.Fatalf("standalone run: %v", err)
	}
}

// launchStats reads the harvest statistics files of every launch.
func launchStats(t *testing.T, dir string) []harveststats.LaunchStats {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "provenance", "fc", "*", "harvest-statistics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []harveststats.LaunchStats
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var st harveststats.LaunchStats
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		out = append(out, st)
	}
	return out
}

// TestProvenanceOfSyntheticCrawl crawls five hosts that stop for five
// reasons and a watched target with PDFs, twice (a relaunch), and checks
// the stop reasons, the metadata WARCs and the documents.
func TestProvenanceOfSyntheticCrawl(t *testing.T) {
	web := newProvenanceWeb(t)
	dir := t.TempDir()
	docsSeed := web.seed("docs.test")
	watched, _ := json.Marshal(docfind.Watched{URL: docsSeed, TargetID: 42, Title: "Docs", Source: docsSeed})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(WatchedFile(dir), append(watched, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	hosts := map[string]harveststats.StopReason{
		"done.test":     {Code: harveststats.ReasonCompleted},
		"quota.test":    {Code: harveststats.ReasonQuota, Detail: "hostMaxFetchSuccesses"},
		"bytes.test":    {Code: harveststats.ReasonByteLimit, Detail: "hostMaxSuccessKb"},
		"robots.test":   {Code: harveststats.ReasonRobots},
		"nxdomain.test": {Code: harveststats.ReasonDNS},
		"docs.test":     {Code: harveststats.ReasonCompleted},
	}
	var seeds []string
	for h := range hosts {
		seeds = append(seeds, web.seed(h))
	}
	runProvenanceCrawl(t, dir, web, seeds)

	stats := launchStats(t, dir)
	if len(stats) != len(hosts) {
		t.Fatalf("%d launches with statistics, want %d", len(stats), len(hosts))
	}
	for _, st := range stats {
		if st.State != harveststats.StateCompleted || len(st.Domains) != 1 {
			t.Errorf("%s: state %s, domains %+v", st.Launch.Source, st.State, st.Domains)
			continue
		}
		d := st.Domains[0]
		t.Logf("%s", st.Text())
		if want, ok := hosts[d.Domain]; !ok || d.StopReason != want {
			t.Errorf("%s: stop reason %v, want %v (by status %v)", d.Domain, d.StopReason, want, d.ByStatus)
		}
	}
	checkMetadataWARCs(t, dir, len(hosts))

	docs := readDocuments(t, dir)
	want := map[string]string{
		docsSeed + "files/a.pdf": docsSeed + "publications/a", // Link rel="up"
		docsSeed + "files/b.pdf": docsSeed,                    // the via
	}
	checkDocuments(t, docs, want)

	// A relaunch crawls everything again: no document twice. Launch
	// timestamps have whole seconds; the relaunch must have its own.
	first := time.Now().Unix()
	for time.Now().Unix() == first {
		time.Sleep(10 * time.Millisecond)
	}
	runProvenanceCrawl(t, dir, web, []string{docsSeed})
	checkDocuments(t, readDocuments(t, dir), want)
	if n := len(launchStats(t, dir)); n != len(hosts)+1 {
		t.Errorf("%d launches after the relaunch, want %d", n, len(hosts)+1)
	}
	checkMetadataWARCs(t, dir, len(hosts)+1)
}

// checkMetadataWARCs reads every metadata WARC strictly and compares each
// crawl.log record with its launch's lines of the worker's crawl.log.
func checkMetadataWARCs(t *testing.T, dir string, want int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "warcs", "fc-npld-metadata", "*-METADATA-*.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != want {
		t.Fatalf("%d metadata WARCs, want %d: %v", len(files), want, files)
	}
	logLines, err := os.ReadFile(filepath.Join(dir, "logs", "fc-npld", "crawl.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		r, err := gowarc.NewWarcFileReader(f, 0, gowarc.WithStrictValidation(), gowarc.WithBlockErrorPolicy(gowarc.ErrFail),
			gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail), gowarc.WithUnknownRecordTypePolicy(gowarc.ErrFail), gowarc.WithFixDigest(false))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for {
			rec, off, v, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s at %d: %v", f, off, err)
			}
			raw, _ := rec.Block().RawBytes()
			block, _ := io.ReadAll(raw)
			if err := rec.ValidateDigest(v); err != nil || len(*v) > 0 {
				t.Errorf("%s at %d: %v %s", f, off, err, v.String())
			}
			target := rec.WarcHeader().Get(gowarc.WarcTargetURI)
			if strings.HasPrefix(target, "metadata://"+metawarc.Authority+"/"+metawarc.PathCrawlLog+"?") {
				found = true
				exp := launchLines(logLines, param(t, target, "source"), param(t, target, "launch"))
				if len(exp) == 0 || !bytes.Equal(block, exp) {
					t.Errorf("%s: crawl.log record:\n%s\nwant:\n%s", f, block, exp)
				}
			}
			_ = rec.Close()
		}
		_ = r.Close()
		if !found {
			t.Errorf("%s: no crawl.log record", f)
		}
	}
}

// param is a query parameter of a metadata URI.
func param(t *testing.T, uri, name string) string {
	t.Helper()
	_, q, _ := strings.Cut(uri, "?")
	v, err := url.ParseQuery(q)
	if err != nil || !v.Has(name) {
		t.Fatalf("no %s in %s (%v)", name, uri, err)
	}
	return v.Get(name)
}

// launchLines are the lines of crawl.log that belong to a launch of
// source, computed independently: a line belongs to the latest launch of
// its source (from the seeds' launchTimestamp annotations) begun by its
// time.
func launchLines(log []byte, source, launch string) []byte {
	type line struct{ text, at string }
	var lines []line
	var launches []string
	sc := bufio.NewScanner(bytes.NewReader(log))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 12 || fs[10] != source {
			continue
		}
		// 2024-01-17T09:00:00.000Z -> 20240117090000
		at := strings.NewReplacer("-", "", "T", "", ":", "").Replace(fs[0][:19])
		lines = append(lines, line{sc.Text() + "\n", at})
		for a := range strings.SplitSeq(fs[11], ",") {
			if ts, ok := strings.CutPrefix(a, "launchTimestamp:"); ok {
				launches = append(launches, ts)
			}
		}
	}
	var out []byte
	for _, l := range lines {
		own := ""
		for _, ts := range launches {
			if ts <= l.at && ts > own {
				own = ts
			}
		}
		if own == launch {
			out = append(out, l.text...)
		}
	}
	return out
}

func readDocuments(t *testing.T, dir string) []docfind.Document {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "provenance", "fc", "documents.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []docfind.Document
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var d docfind.Document
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

func checkDocuments(t *testing.T, docs []docfind.Document, want map[string]string) {
	t.Helper()
	if len(docs) != len(want) {
		t.Errorf("%d documents, want %d: %+v", len(docs), len(want), docs)
	}
	for _, d := range docs {
		if landing, ok := want[d.URL]; !ok || d.LandingPage != landing || d.TargetID != 42 || d.WarcFilename == "" {
			t.Errorf("document %+v: want landing page %q", d, landing)
		}
	}
}
