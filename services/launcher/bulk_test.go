package launcher

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/kafka"
)

const dcTopic = "dc.tocrawl"

type bulkEnv struct {
	c   *kfake.Cluster
	cl  *kgo.Client
	rdb *redis.Client
	dir string
}

func newBulkEnv(t *testing.T) bulkEnv {
	t.Helper()
	c := newCluster(t, dcTopic)
	return bulkEnv{c: c, cl: newClient(t, c), rdb: embeddedtest.Redis(t), dir: t.TempDir()}
}

func (e bulkEnv) config(t *testing.T, input string) BulkConfig {
	t.Helper()
	var cfg BulkConfig
	fs := flag.NewFlagSet("bulk", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse([]string{"-input", input, "-scope-file", filepath.Join(e.dir, "scope.txt")}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func (e bulkEnv) deps(p AsyncProducer, logs *bytes.Buffer) BulkDeps {
	if p == nil {
		p = kafka.NewProducer(e.cl)
	}
	log := slog.New(slog.DiscardHandler)
	if logs != nil {
		log = slog.New(slog.NewJSONHandler(logs, nil))
	}
	return BulkDeps{Producer: p, KeyFunc: hostkey.ForURL, Checkpoints: NewRedisCheckpoints(e.rdb, "", dcTopic), Logger: log}
}

func writeInput(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A seed list mixing URLs, host names, crawl-feed lines, comments and bad
// lines: good seeds are sent keyed by host key, bad lines are reported
// with their number and reason, and the scope file lists every prefix.
func TestBulkMixedInput(t *testing.T) {
	e := newBulkEnv(t)
	input := strings.Join([]string{
		"# domain crawl seeds",
		"https://www.example.org.uk/",
		"example.co.uk",
		"",
		"http://www.example.org.uk/about/team",
		"ftp://files.example.org.uk/",
		`{"id": 7, "title": "t", "seeds": ["https://news.example.scot/", "http://news.example.scot/x/y"], "scope": "subdomains", "ignoreRobotsTxt": true, "schedules": [{"startDate": "2024-01-01 00:00:00", "frequency": "DOMAINCRAWL"}]}`,
		`{"id": 8, "title": "blocked", "seeds": ["https://blocked.example.uk/"], "schedules": [{"startDate": "2024-01-01 00:00:00", "frequency": "NEVERCRAWL"}]}`,
		`{"id": 9, "seeds": "not a list"}`,
		"mailto:someone@example.org",
		"https://exa mple.org/",
	}, "\n")
	var logs bytes.Buffer
	cfg := e.config(t, writeInput(t, e.dir, "seeds.txt", input))
	sum, err := Bulk(context.Background(), cfg, e.deps(nil, &logs))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Lines != 11 || sum.Seeds != 5 || sum.BadLines != 4 || sum.Excluded != 1 || sum.Checkpoint.Line != 11 ||
		sum.Prefixes != 5 || sum.Topic != dcTopic || !strings.HasPrefix(sum.Job, "input-") {
		t.Fatalf("summary %+v", sum)
	}
	wantErrs := map[int]string{
		6:  `"ftp://files.example.org.uk/" is not an http(s) URL`,
		9:  "seeds: want a list of URLs, got string",
		10: `"mailto:someone@example.org" is not an http(s) URL`,
		11: `"https://exa mple.org/" is not a valid URL`,
	}
	for _, le := range sum.Errors {
		if w, ok := wantErrs[le.Line]; !ok || !strings.Contains(le.Reason, w) || !strings.HasSuffix(le.Source, "seeds.txt") {
			t.Errorf("bad line %v, want %q", le, w)
		}
	}
	if !strings.Contains(logs.String(), `"msg":"bad bulk line skipped"`) || !strings.Contains(logs.String(), `"line":9`) {
		t.Errorf("logs:\n%s", logs.String())
	}
	recs := consume(t, e.c, dcTopic, 5)
	var urls []string
	for _, r := range recs {
		l := decodeWire(t, r.Value)
		urls = append(urls, l.URL)
		if key, _ := hostkey.ForURL(l.URL); string(r.Key) != key || !l.IsSeed || l.ForceFetch {
			t.Errorf("%s: key %q, launch %+v", l.URL, r.Key, l)
		}
		if strings.Contains(l.URL, "news.example.scot") {
			if l.Source() != "tid:7:https://news.example.scot/" || !slices.Equal(l.Sheets, []string{"ignoreRobots", "subdomainsScope"}) {
				t.Errorf("target seed %+v", l)
			}
		} else if l.Source() != l.URL {
			t.Errorf("plain seed source %q", l.Source())
		}
	}
	slices.Sort(urls)
	want := []string{"http://example.co.uk", "http://news.example.scot/x/y", "http://www.example.org.uk/about/team",
		"https://news.example.scot/", "https://www.example.org.uk/"}
	if !slices.Equal(urls, want) {
		t.Errorf("sent %v\nwant %v", urls, want)
	}
	scope, err := os.ReadFile(cfg.ScopeFile)
	if err != nil {
		t.Fatal(err)
	}
	var prefixes []string
	for _, line := range strings.Split(strings.TrimSpace(string(scope)), "\n") {
		if !strings.HasPrefix(line, "#") {
			prefixes = append(prefixes, line)
		}
	}
	wantPrefixes := []string{"+http://(uk,org,example,www,)/", "+http://(uk,co,example,",
		"+http://(uk,org,example,www,)/about/", "+http://(scot,example,news,)/", "+http://(scot,example,news,)/x/"}
	if !strings.HasPrefix(string(scope), "# SURT prefixes of the seeds of bulk load") || !slices.Equal(prefixes, wantPrefixes) {
		t.Errorf("scope file:\n%s\nwant prefixes %v", scope, wantPrefixes)
	}
	if info, err := os.Stat(cfg.ScopeFile); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("scope file mode %v %v", info.Mode(), err)
	}
}

// stoppingProducer cancels the load after a number of records, as a
// SIGTERM would.
type stoppingProducer struct {
	AsyncProducer
	after  int64
	n      atomic.Int64
	cancel context.CancelFunc
}

func (p *stoppingProducer) ProduceAsync(ctx context.Context, topic, key string, value []byte) {
	p.AsyncProducer.ProduceAsync(ctx, topic, key, value)
	if p.n.Add(1) == p.after {
		p.cancel()
	}
}

func seedList(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "https://h%d.example.uk/\n", i)
	}
	return b.String()
}

// A stopped load resumes where the broker's acknowledgements got to: every
// seed is sent exactly once over the two runs. A finished load run again
// sends only appended lines; --restart sends everything.
func TestBulkResume(t *testing.T) {
	e := newBulkEnv(t)
	path := writeInput(t, e.dir, "seeds.txt", seedList(1000))
	cfg := e.config(t, path)
	cfg.CheckpointEvery = 100
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopper := &stoppingProducer{AsyncProducer: kafka.NewProducer(e.cl), after: 250, cancel: cancel}
	sum, err := Bulk(ctx, cfg, e.deps(stopper, nil))
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("stopped load: %v", err)
	}
	if sum.Checkpoint.Line != 250 || sum.Seeds != 250 {
		t.Fatalf("stopped at %+v", sum)
	}
	if _, err := os.Stat(cfg.ScopeFile); !os.IsNotExist(err) {
		t.Errorf("a stopped load left a scope file: %v", err)
	}
	sum, err = Bulk(context.Background(), cfg, e.deps(nil, nil))
	if err != nil || sum.Resumed != 250 || sum.Seeds != 750 || sum.Checkpoint.Line != 1000 || sum.Prefixes != 1000 {
		t.Fatalf("resumed load %+v %v", sum, err)
	}
	if got := distinctURLs(t, e.c, 1000); len(got) != 1000 {
		t.Fatalf("%d distinct seeds", len(got))
	}
	// Appended lines only.
	if err := os.WriteFile(path, []byte(seedList(1010)), 0o644); err != nil {
		t.Fatal(err)
	}
	if sum, err = Bulk(context.Background(), cfg, e.deps(nil, nil)); err != nil || sum.Seeds != 10 || sum.Resumed != 1000 {
		t.Fatalf("appended %+v %v", sum, err)
	}
	cfg.Restart = true
	if sum, err = Bulk(context.Background(), cfg, e.deps(nil, nil)); err != nil || sum.Seeds != 1010 || sum.Resumed != 0 {
		t.Fatalf("restart %+v %v", sum, err)
	}
}

// distinctURLs reads n records and fails on a URL seen twice.
func distinctURLs(t *testing.T, c *kfake.Cluster, n int) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	for _, r := range consume(t, c, dcTopic, n) {
		u := decodeWire(t, r.Value).URL
		if got[u] {
			t.Errorf("%s sent twice", u)
		}
		got[u] = true
	}
	return got
}

// A checkpoint is never applied to another input.
func TestBulkCheckpointOfAnotherInput(t *testing.T) {
	e := newBulkEnv(t)
	path := writeInput(t, e.dir, "seeds.txt", seedList(20))
	cfg := e.config(t, path)
	if _, err := Bulk(context.Background(), cfg, e.deps(nil, nil)); err != nil {
		t.Fatal(err)
	}
	scopeBefore, err := os.ReadFile(cfg.ScopeFile)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, content, want string
	}{
		{"line changed", strings.Replace(seedList(20), "h19.", "other.", 1), "seeds.txt:20: the line differs"},
		{"shorter", seedList(5), "the input has 5 lines but the checkpoint"},
	}
	for _, tc := range tests {
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		sum, err := Bulk(context.Background(), cfg, e.deps(nil, nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--restart") || sum.Seeds != 0 {
			t.Errorf("%s: %v (%+v), want %q", tc.name, err, sum, tc.want)
		}
	}
	if scope, _ := os.ReadFile(cfg.ScopeFile); !bytes.Equal(scope, scopeBefore) {
		t.Error("a failed load replaced the scope file")
	}
}

func TestBulkConfigAndDeps(t *testing.T) {
	e := newBulkEnv(t)
	good := e.config(t, "seeds.txt")
	tests := []struct {
		name   string
		change func(*BulkConfig)
		want   string
	}{
		{"no input", func(c *BulkConfig) { c.Input = "" }, "no input given"},
		{"bad crawl", func(c *BulkConfig) { c.Crawl = "xx" }, `crawl "xx"`},
		{"negative checkpoint", func(c *BulkConfig) { c.CheckpointEvery = -1 }, "negative"},
		{"job with space", func(c *BulkConfig) { c.Job = "a b" }, "no spaces"},
	}
	for _, tc := range tests {
		cfg := good
		tc.change(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := good.Validate(); err != nil || good.Topic() != dcTopic {
		t.Errorf("good config: %v, topic %s", err, good.Topic())
	}
	fc := good
	fc.Crawl, fc.Job = CrawlFrequent, "weekly"
	if fc.Topic() != "fc.tocrawl.npld" || fc.JobName() != "weekly" {
		t.Errorf("fc topic %s job %s", fc.Topic(), fc.JobName())
	}
	deps := e.deps(nil, nil)
	for name, d := range map[string]BulkDeps{
		"no producer":         {KeyFunc: deps.KeyFunc, Checkpoints: deps.Checkpoints},
		"no key function":     {Producer: deps.Producer, Checkpoints: deps.Checkpoints},
		"no checkpoint store": {Producer: deps.Producer, KeyFunc: deps.KeyFunc},
	} {
		if _, err := Bulk(context.Background(), good, d); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Bulk(context.Background(), e.config(t, filepath.Join(e.dir, "missing.txt")), deps); err == nil ||
		!strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing input: %v", err)
	}
	// A malformed checkpoint in Redis is reported, not guessed at.
	if err := e.rdb.Set(context.Background(), DefaultCheckpointPrefix+dcTopic+":broken", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	broken := good
	broken.Job = "broken"
	if _, err := Bulk(context.Background(), broken, deps); err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Errorf("malformed checkpoint: %v", err)
	}
}

func TestBareHostURL(t *testing.T) {
	for in, want := range map[string]string{
		"example.org":            "http://example.org",
		"example.org:8080/x":     "http://example.org:8080/x",
		"example.org/a:b":        "http://example.org/a:b",
		"https://example.org/":   "https://example.org/",
		"mailto:x@example.org":   "mailto:x@example.org",
		"HTTP://EXAMPLE.ORG/":    "HTTP://EXAMPLE.ORG/",
		"javascript:alert(1)":    "javascript:alert(1)",
		"www.example.org/path/x": "http://www.example.org/path/x",
	} {
		if got := bareHostURL(in); got != want {
			t.Errorf("bareHostURL(%q) = %q, want %q", in, got, want)
		}
	}
}
