package launcher

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// hostKey stands in for hostkey.ForURL: any function of the URL's
// authority shows that records are keyed per host.
func hostKey(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	return u.Host, nil
}

// runAt is a launch time at which the test feeds have every kind of target.
var runAt = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

// wantURLs are the seeds launched from both test feeds at runAt.
var wantURLs = []string{
	"http://blog.example.co.uk/",
	"https://charity.example.org.uk/",
	"https://extra.example.org/",
	"https://festival.example.scot/",
	"https://files.example.org/report.pdf",
	"https://good.example.org/",
	"https://legacy.example.org/",
	"https://news.council.example.gov.uk/latest",
	"https://news.example.org/",
	"https://ok.example.org/",
	"https://www.council.example.gov.uk/",
}

// testFeedDir copies both test feeds into a directory.
func testFeedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"crawl-feed-npld.jsonl", "crawl-feed-bad.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, name), string(b))
	}
	return dir
}

func testConfig(t *testing.T, feeds ...string) Config {
	t.Helper()
	var cfg Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	cfg.Feeds = feeds
	// These tests launch every active target; the hourly rule has its own.
	cfg.Hourly = false
	return cfg
}

func checkSummary(t *testing.T, sum Summary) {
	t.Helper()
	wantSkipped := map[string]int{SkipEnded: 1, SkipFrequency: 1, SkipNotStarted: 1}
	if sum.Feeds != 2 || sum.FeedErrors != 0 || sum.Targets != 13 || sum.Due != 10 || sum.Launched != 10 || sum.Messages != 11 ||
		sum.BadLines != 5 || len(sum.Errors) != 5 || sum.DroppedSeeds != 2 || sum.SeedErrors != 0 ||
		!maps.Equal(sum.Skipped, wantSkipped) {
		t.Errorf("summary %+v", sum)
	}
}

func newCluster(t testing.TB, topics ...string) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func newClient(t testing.TB, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// consume polls topic until n records arrived or the deadline passed.
func consume(t *testing.T, c *kfake.Cluster, topic string, n int) []*kgo.Record {
	t.Helper()
	cl := newClient(t, c, kgo.ConsumeTopics(topic))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < n {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("got %d of %d records before the deadline", len(recs), n)
		}
		for _, fe := range fetches.Errors() {
			t.Fatalf("fetch %s: %v", fe.Topic, fe.Err)
		}
		recs = append(recs, fetches.Records()...)
	}
	return recs
}

func TestRunOnceKafka(t *testing.T) {
	const topic = "fc.tocrawl.npld"
	c := newCluster(t, topic)
	var logs bytes.Buffer
	cfg := testConfig(t, testFeedDir(t))
	cfg.RenderTargets = []int64{1004}
	cfg.ProgressEvery = 5
	svc, err := New(cfg, Deps{
		Producer: NewKafkaProducer(newClient(t, c)),
		KeyFunc:  hostKey,
		Logger:   slog.New(slog.NewJSONHandler(&logs, nil)),
		Clock:    fixedClock{runAt.Add(2 * time.Second)},
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := svc.RunOnce(context.Background(), runAt)
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, sum)
	recs := consume(t, c, topic, len(wantURLs))
	var urls []string
	for _, r := range recs {
		var l messages.Launch
		if err := json.Unmarshal(r.Value, &l); err != nil {
			t.Fatalf("record value %s: %v", r.Value, err)
		}
		urls = append(urls, l.URL)
		if key, _ := hostKey(l.URL); string(r.Key) != key || r.Topic != topic {
			t.Errorf("%s: key %q topic %s", l.URL, r.Key, r.Topic)
		}
		h := l.ParentURLMetadata.HeritableData
		if h.LaunchTimestamp != "20240601120000" || l.Timestamp != "2024-06-01T12:00:02.000000" || !l.IsSeed {
			t.Errorf("%s: launch %+v", l.URL, l)
		}
		if render := slices.Contains(h.Annotations, AnnotationWebRenderThis); render != (l.URL == "https://files.example.org/report.pdf") {
			t.Errorf("%s: annotations %v", l.URL, h.Annotations)
		}
	}
	slices.Sort(urls)
	if !slices.Equal(urls, wantURLs) {
		t.Errorf("launched %v\nwant %v", urls, wantURLs)
	}
	for _, want := range []string{`"msg":"bad feed line skipped"`, `"line":7`, `"msg":"launch run finished"`, `"msg":"launch progress"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s", want)
		}
	}
}

func TestRunOnceDryRun(t *testing.T) {
	cfg := testConfig(t, testFeedDir(t))
	cfg.Crawl, cfg.DryRun = CrawlDomain, true
	var out bytes.Buffer
	svc, err := New(cfg, Deps{Out: &out, Clock: fixedClock{runAt}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := svc.RunOnce(context.Background(), runAt)
	if err != nil {
		t.Fatal(err)
	}
	checkSummary(t, sum)
	var urls []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var l messages.Launch
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("dry-run line %q: %v", sc.Text(), err)
		}
		urls = append(urls, l.URL)
	}
	slices.Sort(urls)
	if !slices.Equal(urls, wantURLs) {
		t.Errorf("printed %v", urls)
	}
	if svc.topic != "dc.tocrawl" {
		t.Errorf("topic %s", svc.topic)
	}
}

func TestRunOnceKeyFailure(t *testing.T) {
	cfg := testConfig(t, filepath.Join(testFeedDir(t), "crawl-feed-npld.jsonl"))
	cfg.DryRun = true
	var out bytes.Buffer
	keys := func(u string) (string, error) {
		if strings.Contains(u, "council") || strings.Contains(u, "news.example.org") {
			return "", errors.New("no key")
		}
		return hostKey(u)
	}
	svc, err := New(cfg, Deps{Out: &out, KeyFunc: keys})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := svc.RunOnce(context.Background(), runAt)
	if err != nil {
		t.Fatal(err)
	}
	// 1001 has one seed, 1002 two: all three fail, so both targets count
	// as not launched, and nothing is printed for them.
	if sum.SeedErrors != 3 || sum.Skipped[SkipNoKey] != 2 || sum.Launched != 5 || sum.Messages != 5 ||
		strings.Count(out.String(), "\n") != 5 || strings.Contains(out.String(), "council") {
		t.Errorf("summary %+v, output:\n%s", sum, out.String())
	}
}

// failingProducer stands for a broker that refuses every write.
type failingProducer struct{ calls int }

func (p *failingProducer) Produce(context.Context, string, string, []byte) error {
	p.calls++
	return errors.New("broker unavailable")
}

func TestRunOnceProduceFailureStopsRun(t *testing.T) {
	p := &failingProducer{}
	svc, err := New(testConfig(t, testFeedDir(t)), Deps{Producer: p, KeyFunc: hostKey})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := svc.RunOnce(context.Background(), runAt)
	if err == nil || !strings.Contains(err.Error(), "broker unavailable") || !strings.Contains(err.Error(), "produce launch of https://ok.example.org/ to fc.tocrawl.npld") {
		t.Fatalf("error %v", err)
	}
	// Launches are sent in batches, here one for both feeds: nothing was
	// sent when the first send failed.
	if p.calls != 1 || sum.Launched != 0 || sum.Messages != 0 || sum.Feeds != 2 {
		t.Errorf("%d produce calls, summary %+v", p.calls, sum)
	}
}

func TestRunOnceFeedFailuresDoNotStopOthers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/feed" {
			_, _ = fmt.Fprintln(w, feedLine("11"))
			return
		}
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	dir := testFeedDir(t)
	cfg := testConfig(t, filepath.Join(dir, "missing.jsonl"), srv.URL+"/down", srv.URL+"/feed", filepath.Join(dir, "crawl-feed-bad.jsonl"))
	cfg.DryRun = true
	var out bytes.Buffer
	svc, err := New(cfg, Deps{Out: &out, HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := svc.RunOnce(context.Background(), runAt)
	if err == nil || !strings.Contains(err.Error(), "missing.jsonl") || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("error %v", err)
	}
	if sum.FeedErrors != 2 || sum.Feeds != 2 || sum.Launched != 4 || sum.BadLines != 5 {
		t.Errorf("summary %+v", sum)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := svc.RunOnce(ctx, runAt); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

func TestConfigFlags(t *testing.T) {
	var cfg Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	err := fs.Parse([]string{"-feed", "a.jsonl", "-feed", "https://w3act.example/feed",
		"-stream", "bypm", "-render-target", "4,5", "-render-target", "6", "-dry-run"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Feeds, []string{"a.jsonl", "https://w3act.example/feed"}) || cfg.Crawl != "fc" || cfg.Stream != "bypm" ||
		cfg.TimeZone != "Europe/London" || !cfg.DryRun || !slices.Equal(cfg.RenderTargets, []int64{4, 5, 6}) {
		t.Errorf("config %+v", cfg)
	}
	if err := cfg.Validate(); err != nil || cfg.Topic() != "fc.tocrawl.bypm" {
		t.Errorf("validate %v, topic %s", err, cfg.Topic())
	}
	if err := fs.Parse([]string{"-render-target", "x"}); err == nil {
		t.Error("bad render target accepted")
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no feeds", func(c *Config) { c.Feeds = nil }, "no feed given"},
		{"blank feed", func(c *Config) { c.Feeds = []string{" "} }, "feed 1 is empty"},
		{"bad crawl", func(c *Config) { c.Crawl = "xc" }, `crawl "xc"`},
		{"bad stream", func(c *Config) { c.Stream = "NPLD.x" }, `stream "NPLD.x"`},
		{"empty stream", func(c *Config) { c.Stream = "" }, `stream ""`},
		{"bad zone", func(c *Config) { c.TimeZone = "Mars/Olympus" }, `time zone "Mars/Olympus"`},
		{"no zone", func(c *Config) { c.TimeZone = "" }, "no time zone"},
		{"all at once", func(c *Config) { c.Feeds, c.Crawl = nil, "" }, "no feed given (--feed)\ncrawl"},
	}
	for _, tc := range tests {
		cfg := testConfig(t, "feed.jsonl")
		tc.change(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	dc := testConfig(t, "feed.jsonl")
	dc.Crawl, dc.Stream = CrawlDomain, ""
	if err := dc.Validate(); err != nil || dc.Topic() != "dc.tocrawl" {
		t.Errorf("dc: %v %s", err, dc.Topic())
	}
}

func TestNewChecksDeps(t *testing.T) {
	cfg := testConfig(t, "feed.jsonl")
	dry := cfg
	dry.DryRun = true
	bad := cfg
	bad.Crawl = ""
	tests := []struct {
		name string
		cfg  Config
		deps Deps
		want string
	}{
		{"no producer", cfg, Deps{KeyFunc: hostKey}, "no producer"},
		{"no key function", cfg, Deps{Producer: &failingProducer{}}, "no key function"},
		{"dry run without output", dry, Deps{}, "output writer"},
		{"bad config", bad, Deps{Producer: &failingProducer{}, KeyFunc: hostKey}, "launcher config"},
	}
	for _, tc := range tests {
		if _, err := New(tc.cfg, tc.deps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestConfigHourlyAndTuning(t *testing.T) {
	var cfg Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse([]string{"-feed", "f"}); err != nil {
		t.Fatal(err)
	}
	if !cfg.Hourly || cfg.RecordTTL != DefaultRecordTTL || cfg.CatchUpHours != 1 || cfg.RefreshDepth != 1 {
		t.Errorf("defaults %+v", cfg)
	}
	if err := fs.Parse([]string{"-all-active"}); err != nil || cfg.Hourly {
		t.Errorf("--all-active: hourly %v, %v", cfg.Hourly, err)
	}
	if err := fs.Parse([]string{"-all-active=false"}); err != nil || !cfg.Hourly {
		t.Errorf("--all-active=false: hourly %v, %v", cfg.Hourly, err)
	}
	if err := fs.Parse([]string{"-all-active=maybe"}); err == nil {
		t.Error("--all-active=maybe accepted")
	}
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"negative batch", func(c *Config) { c.BatchSize = -1 }, "batch size is negative"},
		{"negative refresh depth", func(c *Config) { c.RefreshDepth = -2 }, "refresh depth is negative"},
		{"negative claim TTL", func(c *Config) { c.ClaimTTL = -time.Second }, "claim TTL is negative"},
		{"records shorter than catch-up", func(c *Config) { c.RecordTTL, c.CatchUpHours = 2*time.Hour, 3 }, "must outlast the 3 catch-up hours"},
	}
	for _, tc := range tests {
		c := testConfig(t, "feed.jsonl")
		tc.change(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// The zero value of every tuning field is its default.
	if err := (Config{Feeds: []string{"f"}, Crawl: CrawlFrequent, Stream: "npld", TimeZone: "UTC"}).Validate(); err != nil {
		t.Errorf("zero tuning fields: %v", err)
	}
}
