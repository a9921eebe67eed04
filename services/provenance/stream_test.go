package provenance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/harveststats"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/metawarc"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

const streamTS = "20240117090000"

// streamLaunchEvents are a launch's events across hosts: a seed, its
// redirect, pages, a 404, a DNS lookup, a robots exclusion, a revisit, a
// recrawl of one URL and a retried one (same URL, later event); and their
// crawl.log lines.
func streamLaunchEvents(t *testing.T, n int) ([]messages.Crawled, []byte) {
	t0 := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	var evs []messages.Crawled
	add := func(u string, status int, hop, via, ann string) *messages.Crawled {
		e := event(u, status, t0.Add(time.Duration(len(evs)+1)*time.Second), hop, ann)
		e.Via = via
		if pu, err := url.Parse(u); err == nil && pu.Host != "" {
			e.Host = pu.Host
		}
		e.ExtraInfo = map[string]any{messages.ExtraLaunchID: streamTS}
		evs = append(evs, e)
		return &evs[len(evs)-1]
	}
	add("http://done.example/", 301, "", "", "resetQuotas,launchTimestamp:"+streamTS)
	add("https://done.example/", 200, "R", "http://done.example/", "")
	add("dns:done.example", 1, "P", "http://done.example/", "")
	for i := range n {
		add(fmt.Sprintf("https://h%d.done.example/p/%d", i%7, i), 200, "L", "https://done.example/", "")
	}
	add("https://h1.done.example/missing", 404, "L", "https://done.example/", "")
	add("https://h2.done.example/private", -9998, "L", "https://done.example/", "")
	rv := add("https://h3.done.example/same", 200, "L", "https://done.example/", "duplicate:digest")
	rv.Mimetype = "warc/revisit"
	add("https://h1.done.example/missing", 404, "L", "https://done.example/", "") // crawled again: one CDX line
	var log bytes.Buffer
	for _, e := range evs {
		log.Write(logLine(t, e))
	}
	return evs, log.Bytes()
}

// runLaunch crawls events through a service with profile p (on a real
// broker and Redis), its log holding logLines, seals the launch l and
// returns its metadata WARC's blocks by path (the URI without its query).
func runLaunch(t *testing.T, streaming bool, evs []messages.Crawled, logLines []byte, l harveststats.Launch) (map[string][]byte, *harness) {
	h := newHarness(t)
	h.cfg.Settle = 0
	h.cfg.SortRunBytes = 512 // dozens of runs for a few hundred events
	logDir := filepath.Join(h.cfg.DataDir, "logs", "fc-npld")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, "crawl.log"), logLines, 0o644); err != nil {
		t.Fatal(err)
	}
	p := profile.Default()
	p.Crawl.Name = "test-crawl"
	p.Provenance.Streaming = streaming
	h.front.set(src, 1)
	fixed := time.Date(2024, 1, 17, 12, 0, 0, 0, time.UTC)
	s := h.startWith(p, func() time.Time { return fixed })
	for _, e := range evs {
		h.produce(marshal(t, e))
	}
	ctx := context.Background()
	eventually(t, "every event counted", func() bool {
		return testutil.ToFloat64(counter(t, h.reg, "trawler_provenance_events_total")) >= float64(len(evs))
	})
	h.front.set(src, 0)
	var file string
	eventually(t, "launch written", func() bool {
		file, _ = s.Store().Done(ctx, l)
		return file != ""
	})
	out := map[string][]byte{}
	for uri, b := range readStrict(t, filepath.Join(h.cfg.warcDir(), file)) {
		path, _, _ := strings.Cut(uri, "?")
		out[path] = b
	}
	return out, h
}

// TestStreamingMatchesInMemory crawls one launch through the in-memory
// path (per target, events in Redis) and the streaming one (crawl-wide,
// spool, external sorts of dozens of runs, records from files) and
// expects the same metadata: the same crawl.log lines, CDX lines, report
// rows, seeds and per-domain statistics. The streaming launch keeps no
// event in Redis and leaves no spool behind.
func TestStreamingMatchesInMemory(t *testing.T) {
	evs, logLines := streamLaunchEvents(t, 300)
	mem, _ := runLaunch(t, false, evs, logLines, harveststats.Launch{Source: src, Timestamp: streamTS})
	sl := harveststats.Launch{Source: harveststats.CrawlSource, Timestamp: streamTS}
	str, h := runLaunch(t, true, evs, logLines, sl)
	for _, path := range []string{metawarc.PathCrawlLog, metawarc.PathCDX, metawarc.PathSheets} {
		if !bytes.Equal(mem[prefix(path)], str[prefix(path)]) {
			t.Errorf("%s differs:\nin memory:\n%s\nstreaming:\n%s", path, head(mem[prefix(path)]), head(str[prefix(path)]))
		}
	}
	if n := bytes.Count(str[prefix(metawarc.PathCDX)], []byte("\n")); n != len(evs)-1 {
		// a header, and every URL once but the DNS lookup (no CDX line)
		t.Errorf("CDX has %d lines, want %d", n, len(evs)-1)
	}
	// Seeds are in time order in memory, sorted when streaming.
	if a, b := sortedLines(mem[prefix(metawarc.PathSeeds)]), sortedLines(str[prefix(metawarc.PathSeeds)]); !slices.Equal(a, b) || len(a) != 1 {
		t.Errorf("seeds: in memory %q, streaming %q", a, b)
	}
	for _, r := range []string{"crawl-report.txt", "seeds-report.txt", "hosts-report.txt", "source-report.txt", "mimetype-report.txt", "responsecode-report.txt"} {
		if p := prefix(metawarc.PathReports + r); !bytes.Equal(mem[p], str[p]) || len(str[p]) == 0 {
			t.Errorf("%s differs:\nin memory:\n%s\nstreaming:\n%s", r, mem[p], str[p])
		}
	}
	// The statistics: each URL once in memory; by event when streaming,
	// so the recrawled 404 counts twice there.
	var memSt, strSt harveststats.LaunchStats
	mustJSON(t, mem[prefix(metawarc.PathStatsJSON)], &memSt)
	mustJSON(t, str[prefix(metawarc.PathStatsJSON)], &strSt)
	if strSt.Totals.URIs != memSt.Totals.URIs+1 || strSt.Launch != sl || len(strSt.Domains) != len(memSt.Domains) {
		t.Errorf("statistics: in memory %+v, streaming %+v", memSt.Totals, strSt.Totals)
	}
	keys, _ := h.rdb.Keys(context.Background(), "*").Result()
	for _, k := range keys {
		if strings.Contains(k, ":e:") || strings.Contains(k, ":ev") || strings.Contains(k, ":u:") {
			t.Errorf("streaming launch left %s in Redis", k)
		}
	}
	// The spool goes right after the launch is marked done.
	eventually(t, "spool removed", func() bool {
		left, _ := os.ReadDir(h.cfg.SpoolDir())
		return len(left) == 0
	})
}

// prefix is a metadata path's URI without its query.
func prefix(path string) string {
	u, _, _ := strings.Cut(metawarc.URI(path, "fc", src, streamTS), "?")
	return u
}

func head(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}

func sortedLines(b []byte) []string {
	l := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	slices.Sort(l)
	return l
}

// TestStreamingRedeliveryCountsOnce: a batch handled again (a redelivery
// after a crash before the commit) and a restart of the role mid-launch,
// reading the rest, count every event once; the redelivered events are
// spooled twice and the metadata WARC still has each URL once.
func TestStreamingRedeliveryCountsOnce(t *testing.T) {
	evs, logLines := streamLaunchEvents(t, 40)
	h := newHarness(t)
	h.cfg.Settle = 0
	logDir := filepath.Join(h.cfg.DataDir, "logs", "fc-npld")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, "crawl.log"), logLines, 0o644); err != nil {
		t.Fatal(err)
	}
	p := profile.Default()
	p.Provenance.Streaming = true
	h.front.set(src, 1)
	ctx := context.Background()
	// The first half, handled twice, by a role that then stops.
	items := make([]kafka.Item[messages.Crawled], len(evs))
	for i, e := range evs {
		items[i] = kafka.Item[messages.Crawled]{Value: e, Record: &kgo.Record{Partition: int32(i % 2), Offset: int64(i / 2)}}
	}
	first, err := New(h.cfg, Deps{Kafka: h.kc, Redis: h.rdb, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	half := len(items) / 2
	for _, b := range [][]kafka.Item[messages.Crawled]{items[:half], items[:half], items[half/2 : half]} {
		if err := first.handle(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	sl := harveststats.Launch{Source: harveststats.CrawlSource, Timestamp: streamTS}
	st, err := first.Store().Stats(ctx, sl)
	if err != nil || st.Totals.URIs != int64(half) {
		t.Fatalf("after the first half handled twice: %d URIs (%v), want %d", st.Totals.URIs, err, half)
	}
	// A restarted role: the rest, with the first half's tail again.
	s := h.startWith(p, nil)
	for _, b := range [][]kafka.Item[messages.Crawled]{items[half-3:], items[len(items)-1:]} {
		if err := s.handle(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := s.Store().Stats(ctx, sl); st.Totals.URIs != int64(len(evs)) {
		t.Fatalf("%d URIs counted, want %d", st.Totals.URIs, len(evs))
	}
	h.front.set(src, 0)
	var file string
	eventually(t, "launch written", func() bool {
		file, _ = s.Store().Done(ctx, sl)
		return file != ""
	})
	blocks := readStrict(t, filepath.Join(h.cfg.warcDir(), file))
	cdx := blocks[metawarc.URI(metawarc.PathCDX, "fc", harveststats.CrawlSource, streamTS)]
	if n := bytes.Count(cdx, []byte("\n")); n != len(evs)-1 {
		t.Errorf("CDX has %d lines, want %d (a header, each URL once, no DNS)", n, len(evs)-1)
	}
	if got := blocks[metawarc.URI(metawarc.PathCrawlLog, "fc", harveststats.CrawlSource, streamTS)]; !bytes.Equal(got, logLines) {
		t.Errorf("crawl.log record has %d bytes, want the log's %d", len(got), len(logLines))
	}
	// Events of the written launch delivered again are not spooled again.
	eventually(t, "spool removed", func() bool {
		_, err := os.Stat(h.cfg.spoolDirOf(sl))
		return os.IsNotExist(err)
	})
	if err := s.handle(ctx, items[:5]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.cfg.spoolDirOf(sl)); !os.IsNotExist(err) {
		t.Errorf("a sealed launch spooled again: %v", err)
	}
}

// A spooled line that does not decode (a crash cut it short) is counted
// and skipped, its file and line named; the rest is built.
func TestStreamingBadSpoolLine(t *testing.T) {
	evs, _ := streamLaunchEvents(t, 5)
	h := newHarness(t)
	p := profile.Default()
	p.Provenance.Streaming = true
	s, err := New(h.cfg, Deps{Kafka: h.kc, Redis: h.rdb, Profile: p})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spool := filepath.Join(dir, "events.jsonl")
	var b bytes.Buffer
	b.Write(marshal(t, evs[0]))
	b.WriteString("\n{\"url\": \"http://cut.example/\", \"stat\n")
	for _, e := range evs[1:] {
		b.Write(marshal(t, e))
		b.WriteByte('\n')
	}
	b.WriteString(`{"timestamp":"2024-01-17T09:00:00Z","url":"http://a/` + "\x00" + `"}` + "\n")
	if err := os.WriteFile(spool, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	l := harveststats.Launch{Source: harveststats.CrawlSource, Timestamp: streamTS}
	built, err := s.buildStream(context.Background(), l, []string{spool}, filepath.Join(dir, "build"))
	if err != nil {
		t.Fatal(err)
	}
	if built.bad != 2 || built.events != int64(len(evs))+2 || !strings.Contains(built.firstBad, "events.jsonl:2:") {
		t.Fatalf("bad %d of %d, first %q; want 2 of %d, the first at events.jsonl:2", built.bad, built.events, built.firstBad, len(evs)+2)
	}
	cdx, err := os.ReadFile(built.cdx)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(cdx, []byte("\n")); n != len(evs)-1 {
		t.Errorf("CDX has %d lines, want %d", n, len(evs)-1)
	}
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, head(b))
	}
}

// A statistics record past MaxStatsRecordBytes (a domain crawl's domains)
// is published without its domain table, saying how many rows it left
// out; a small one keeps its table.
func TestStatsRecordWithoutDomainTable(t *testing.T) {
	h := newHarness(t)
	s := h.start()
	eventually(t, "role running", s.ready.Load)
	ctx := context.Background()
	big := harveststats.LaunchStats{Crawl: "fc", Launch: harveststats.Launch{Source: harveststats.CrawlSource}, State: "running"}
	for i := range 60000 {
		big.Domains = append(big.Domains, harveststats.DomainStats{Domain: fmt.Sprintf("d%07d.example", i), URIs: int64(i),
			ByStatus: map[string]int64{"2xx": int64(i)}, StopReason: harveststats.StopReason{Code: "running"}})
	}
	big.Totals.URIs = 42
	small := big
	small.Launch.Timestamp, small.Domains = streamTS, big.Domains[:3]
	for _, st := range []harveststats.LaunchStats{big, small} {
		js, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.publishStats(ctx, st.Launch, st, js); err != nil {
			t.Fatalf("%d bytes: %v", len(js), err)
		}
	}
	recs := readTopic(t, h.kc, "fc.harveststats", 2)
	got := make([]harveststats.LaunchStats, 2)
	for _, r := range recs {
		if len(r.Value) > MaxStatsRecordBytes {
			t.Errorf("record of %d bytes", len(r.Value))
		}
		i := 0
		if string(r.Key) == small.Launch.Key() {
			i = 1
			if bytes.Contains(r.Value, []byte("domainsOmitted")) {
				t.Error("small record names domainsOmitted")
			}
		}
		mustJSON(t, r.Value, &got[i])
	}
	if got[0].DomainsOmitted != 60000 || len(got[0].Domains) != 0 || got[0].Totals.URIs != 42 {
		t.Errorf("large record: %d domains, %d omitted, totals %+v", len(got[0].Domains), got[0].DomainsOmitted, got[0].Totals)
	}
	if got[1].DomainsOmitted != 0 || len(got[1].Domains) != 3 {
		t.Errorf("small record: %d domains, %d omitted", len(got[1].Domains), got[1].DomainsOmitted)
	}
}

// On start the role removes the spool of a launch already done (a crash
// came between marking it done and removing its spool) and keeps a
// running launch's.
func TestStreamingSpoolOfDoneLaunchDropped(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	p := profile.Default()
	p.Provenance.Streaming = true
	done := harveststats.Launch{Source: harveststats.CrawlSource, Timestamp: streamTS}
	running := harveststats.Launch{Source: harveststats.CrawlSource, Timestamp: "20240118090000"}
	store := harveststats.New(h.rdb, "fc", nil)
	if err := store.MarkDone(ctx, done, "f.warc.gz", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	for _, l := range []harveststats.Launch{done, running} {
		dir := h.cfg.spoolDirOf(l)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, spoolKey), []byte(l.Key()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := h.startWith(p, nil)
	eventually(t, "role running", s.ready.Load)
	if _, err := os.Stat(h.cfg.spoolDirOf(done)); !os.IsNotExist(err) {
		t.Errorf("spool of the done launch: %v, want it removed", err)
	}
	if _, err := os.Stat(h.cfg.spoolDirOf(running)); err != nil {
		t.Errorf("spool of the running launch: %v", err)
	}
}
