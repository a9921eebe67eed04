package standalone

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// TestInputCheckedBeforeStart: a seed, feed, setting or port that cannot
// work fails the run with an error naming the flag and the fix, before
// the data directory, the broker or Redis exist, and with no summary of a
// crawl that never ran.
func TestInputCheckedBeforeStart(t *testing.T) {
	inUse, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inUse.Close() })
	busy := inUse.Addr().String()

	dir := t.TempDir()
	feed := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	allBad := feed("bad.jsonl", "not json\n{\"id\": 1, \"title\": \"no seeds\"}\n")
	emptyDir := filepath.Join(dir, "feeds")
	if err := os.Mkdir(emptyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	seed := []string{"http://www.example.org/"}

	tests := []struct {
		name string
		cfg  func(*Config)
		want string
	}{
		{"seed without a scheme", func(c *Config) { c.Seeds = []string{"www.example.org"} },
			`--seed "www.example.org": add a scheme: http://www.example.org/`},
		{"seed with a path and no scheme", func(c *Config) { c.Seeds = []string{"www.example.org/news/"} },
			`add a scheme: http://www.example.org/news/`},
		{"seed of another scheme", func(c *Config) { c.Seeds = []string{"ftp://ftp.example.org/"} },
			`--seed "ftp://ftp.example.org/": want an http:// or https:// URL, not ftp://`},
		{"seed without a host", func(c *Config) { c.Seeds = []string{"http:///path"} }, `--seed "http:///path": no host name`},
		{"feed missing", func(c *Config) { c.Seeds, c.Feeds = nil, []string{filepath.Join(dir, "none.jsonl")} },
			"none.jsonl: no such file or directory"},
		{"feed with no valid line", func(c *Config) { c.Seeds, c.Feeds = nil, []string{allBad} },
			"bad.jsonl: every feed line was rejected: no valid target in 2 bad lines: " + allBad + ":1: invalid JSON"},
		{"feed directory without feeds", func(c *Config) { c.Seeds, c.Feeds = nil, []string{emptyDir} }, "no *.jsonl files"},
		{"feed time zone", func(c *Config) { c.Feeds, c.TimeZone = []string{allBad}, "Mars/Olympus" }, `--feed-time-zone "Mars/Olympus": want an IANA time zone`},
		{"ports value", func(c *Config) { c.Ports = "sometimes" }, `--ports "sometimes": want fixed or auto`},
		{"listen address form", func(c *Config) { c.CDXAddr = "8081" }, `--cdx-addr "8081": want host:port`},
		{"admin port in use", func(c *Config) { c.AdminAddr = busy },
			"--admin-addr " + busy + ": the port is in use (another crawl on this machine?): give --admin-addr another port, or --ports auto"},
		{"CDX port in use", func(c *Config) { c.CDXAddr = busy }, "--cdx-addr " + busy + ": the port is in use"},
		{"broker port in use", func(c *Config) { c.KafkaListen = busy }, "--kafka-listen " + busy + ": the port is in use"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			cfg := Config{DataDir: data, Seeds: seed, Crawl: "fc", Stream: "npld", Threads: 1, TimeZone: "UTC",
				AdminAddr: "127.0.0.1:0", KafkaListen: "127.0.0.1:0", CDXAddr: "127.0.0.1:0", Render: renderOff}
			tc.cfg(&cfg)
			var out bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sum, err := Run(ctx, cfg, Deps{Profile: testProfile(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Registry: prometheus.NewRegistry(), Version: "test", Out: &out})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
			if sum != nil {
				t.Errorf("a run that never started returned a summary: %+v", sum)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Errorf("the data directory exists after a failed check (stat: %v)", err)
			}
			if out.Len() > 0 {
				t.Errorf("printed %q before failing", out.String())
			}
		})
	}
}

// TestTwoCrawlsSideBySide: with --ports auto, two standalone crawls left
// at the default addresses run at once on one machine, each on its own
// free ports, which each prints at start.
func TestTwoCrawlsSideBySide(t *testing.T) {
	if testing.Short() {
		t.Skip("two crawls")
	}
	site, err := testweb.Generate(testweb.Config{Seed: 5, Hosts: 2, PagesPerHost: 10})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	srv, err := site.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	type result struct {
		sum *Summary
		err error
		out bytes.Buffer
	}
	var res [2]result
	var wg sync.WaitGroup
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := Config{DataDir: t.TempDir(), Seeds: srv.Seeds(), UntilIdle: true, Ports: PortsAuto,
				AdminAddr: DefaultAdminAddr, CDXAddr: DefaultCDXAddr, KafkaListen: DefaultKafkaListen,
				Crawl: "fc", Stream: "npld", Threads: 4, Partitions: 2, TimeZone: "UTC", Render: renderOff}
			res[i].sum, res[i].err = Run(ctx, cfg, Deps{Profile: testProfile(), Resolver: srv.Resolver(),
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Registry: prometheus.NewRegistry(),
				Version: "test", Out: &res[i].out})
		}()
	}
	wg.Wait()

	listen := regexp.MustCompile(`(?m)^  (admin|CDX|Kafka|Redis) +(?:http://)?([0-9.]+:[0-9]+)`)
	seen := map[string]int{}
	for i, r := range res {
		if r.err != nil {
			t.Fatalf("crawl %d: %v", i, r.err)
		}
		if r.sum == nil || r.sum.URIs == 0 {
			t.Fatalf("crawl %d crawled nothing: %+v", i, r.sum)
		}
		ms := listen.FindAllStringSubmatch(r.out.String(), -1)
		if len(ms) != 4 {
			t.Fatalf("crawl %d printed %q, want its admin, CDX, Kafka and Redis addresses", i, r.out.String())
		}
		for _, m := range ms {
			if m[2] == DefaultAdminAddr || m[2] == DefaultCDXAddr || m[2] == DefaultKafkaListen {
				t.Errorf("crawl %d: %s listened on its fixed default %s with --ports auto", i, m[1], m[2])
			}
			seen[m[2]]++
		}
	}
	for addr, n := range seen {
		if n > 1 {
			t.Errorf("%s was printed by both crawls", addr)
		}
	}
}
