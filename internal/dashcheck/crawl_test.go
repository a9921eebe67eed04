package dashcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/clamav/clamdtest"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/services/launcher"
	"github.com/trawler-crawl/trawler/services/standalone"
)

// scrapeInterval is the interval the scraped snapshots are stamped with,
// Prometheus's in compose (deploy/prometheus/prometheus.yml).
const scrapeInterval = 15 * time.Second

// target is one scrape target as Prometheus would label it. stream and
// crawl are the labels the scrape configurations add (compose relabels
// them, the ServiceMonitor copies them from pod labels).
type target struct {
	job, instance, crawl, stream string
}

func (t target) labels() map[string]string {
	return map[string]string{"job": t.job, "instance": t.instance, "crawl": t.crawl, "stream": t.stream}
}

// crawlKind is what a checked crawl meets besides ordinary pages.
type crawlKind struct {
	name    string
	hostile bool // the synthetic web's misbehaving host (pkg/testweb)
	poison  bool // an undecodable launch, dead-lettered
}

// scrape is the exposition text of one target at one point of the crawl.
type scrape struct {
	target target
	step   int // 0, 1, ...: stamped step*scrapeInterval after the first
	text   string
}

// crawlScrapes crawls the synthetic web with a standalone run (worker,
// cdxwriter and CDX index on one admin listener, ClamAV scanning with a
// real clamd) and a launcher run of its own, and scrapes each steps
// times while the crawl runs. The standalone scrape is replayed as three
// worker targets on two streams, as a cluster would have them, so queries
// that lose the instance or stream label fail with duplicate labelsets
// here as they would in Prometheus.
//
// needed are the series names the queries use: the last scrape waits (up
// to a deadline) until the roles export them all, since some appear only
// once something happened (the cdxwriter's lag gauge after the group's
// first commit and the next poll).
//
// kind says what the crawl meets: with hostile, the synthetic web's
// misbehaving host; with poison, an undecodable launch the worker
// dead-letters after the first scrape.
//
// Besides the scrapes it returns the counters of needed that neither the
// first scrape of the standalone nor the launcher before its first run
// export: counters a dashboard or alert reads must exist from the start.
func crawlScrapes(t *testing.T, steps int, needed []string, kind crawlKind) ([]scrape, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)

	site, err := testweb.Generate(testweb.Config{Seed: 3, Hosts: 4, PagesPerHost: 40, Hostile: kind.hostile})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	clamd := clamdtest.Start(t, 1<<20)

	p := profile.Default()
	p.Crawl.Name = "dashcheck"
	// Slow enough that the crawl is still running at the last scrape.
	p.Politeness = profile.Politeness{MinDelayMs: 30, MaxDelayMs: 30}
	p.Fetch.AllowPrivateAddresses = true
	p.Fetch.ConnectTimeoutSeconds, p.Fetch.ReadTimeoutSeconds, p.Fetch.TotalTimeoutSeconds = 2, 3, 5
	adminAddr, kafkaAddr := freeAddr(t), freeAddr(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := standalone.Run(runCtx, standalone.Config{
			DataDir: t.TempDir(), Seeds: srv.Seeds(), KafkaListen: kafkaAddr, AdminAddr: adminAddr,
			CDXAddr: "", ClamdAddr: "tcp://" + clamd.Addr, Crawl: "fc", Stream: "npld", Threads: 4,
			Partitions: 2, TimeZone: "UTC", Render: "off", // the renderer's metrics are listed as exceptions
		}, standalone.Deps{Profile: p, Resolver: srv.Resolver(), Registry: reg, Version: "dashcheck",
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		done <- err
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("standalone run: %v", err)
		}
	})

	lreg, runLauncher := launcherRun(t)
	lsrv := httptest.NewServer(promhttp.HandlerFor(lreg, promhttp.HandlerOpts{}))
	t.Cleanup(lsrv.Close)

	workers := []target{
		{"trawler-worker", "worker-npld-0:9100", "fc", "npld"},
		{"trawler-worker", "worker-npld-1:9100", "fc", "npld"},
		{"trawler-worker", "worker-bypm-0:9100", "fc", "bypm"},
	}
	launcherT := target{"trawler-launcher", "launcher:9100", "fc", "npld"}

	var out []scrape
	var absentAtStart []string
	last, lastAt := -1.0, time.Now()
	launcherText := get(t, ctx, lsrv.URL) // before its first run
	for step := range steps {
		// Each scrape waits for progress, so counters move between
		// scrapes and rate() has something to say; a crawl that has
		// finished gets 3 s, then is scraped as it is.
		text, ok := waitScrape(t, ctx, "http://"+adminAddr+"/metrics", func(text string) bool {
			n := sumMetric(text, "trawler_worker_uris_finished_total")
			if step == steps-1 && len(missing(needed, text, launcherText)) > 0 {
				return false
			}
			if n > 0 && (n > last || time.Since(lastAt) > 3*time.Second) {
				last, lastAt = n, time.Now()
				return true
			}
			return false
		})
		if !ok {
			// The check after the crawl names what never appeared.
			t.Logf("step %d: still missing after the deadline: %v", step, missing(needed, text, launcherText))
		}
		if step == 0 {
			absentAtStart = missing(counters(needed), text, launcherText)
		}
		if step == 0 && kind.poison {
			poison(t, ctx, kafkaAddr)
		}
		for _, w := range workers {
			out = append(out, scrape{target: w, step: step, text: text})
		}
		runLauncher(ctx, time.Date(2026, 1, 5, 9+step, 0, 0, 0, time.UTC))
		launcherText = get(t, ctx, lsrv.URL)
		out = append(out, scrape{target: launcherT, step: step, text: launcherText})
	}
	return out, absentAtStart
}

// counters are the names of counters among names (by the _total suffix
// of the exposition format).
func counters(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, "_total") {
			out = append(out, n)
		}
	}
	return out
}

// missing lists the names of needed that no series of the texts has; up
// is Prometheus's own.
func missing(needed []string, texts ...string) []string {
	var out []string
	for _, n := range needed {
		found := n == "up"
		for _, text := range texts {
			found = found || strings.HasPrefix(text, n+"{") || strings.HasPrefix(text, n+" ") ||
				strings.Contains(text, "\n"+n+"{") || strings.Contains(text, "\n"+n+" ")
		}
		if !found {
			out = append(out, n)
		}
	}
	return out
}

// launcherRun returns the launcher's registry and a function running it
// once for an hour, over a feed with a target due every hour and one whose
// schedule has ended (skipped). Its launches go nowhere: the standalone
// crawl has its own seeds.
func launcherRun(t *testing.T) (*prometheus.Registry, func(context.Context, time.Time)) {
	t.Helper()
	feed := filepath.Join(t.TempDir(), "feed.jsonl")
	lines := `{"id": 1, "title": "due", "seeds": ["http://due.example/"], "depth": "CAPPED", "scope": "root", "schedules": [{"startDate": "2025-01-01 00:00:00", "endDate": null, "frequency": "HOURLY"}]}
{"id": 2, "title": "ended", "seeds": ["http://ended.example/"], "depth": "CAPPED", "scope": "root", "schedules": [{"startDate": "2024-01-01 09:00:00", "endDate": "2024-01-02 00:00:00", "frequency": "DAILY"}]}
`
	if err := os.WriteFile(feed, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	svc, err := launcher.New(launcher.Config{Feeds: []string{feed}, Crawl: "fc", Stream: "npld", TimeZone: "UTC", Hourly: true},
		launcher.Deps{Producer: discard{}, KeyFunc: hostkey.ForURL, Registerer: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return reg, func(ctx context.Context, at time.Time) {
		if _, err := svc.RunOnce(ctx, at); err != nil {
			t.Fatalf("launcher run: %v", err)
		}
	}
}

// poison sends an undecodable launch to the worker's tocrawl topic, which
// the worker dead-letters, so the DLQ metrics are exported as in a
// crawl that met bad input.
func poison(t *testing.T, ctx context.Context, broker string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rec := &kgo.Record{Topic: "fc.tocrawl.npld", Key: []byte("00000000"), Value: []byte("{not a launch")}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		t.Fatalf("produce poison record: %v", err)
	}
}

// discard is a launcher Producer that accepts and drops every launch.
type discard struct{}

func (discard) Produce(context.Context, string, string, []byte) error { return nil }

// freeAddr is a loopback address with a port nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitScrape scrapes url until ok accepts the text, polling with a
// deadline: the admin listener comes up, and the crawl moves, in its own
// time. After the deadline it returns the last text scraped and false.
func waitScrape(t *testing.T, ctx context.Context, url string, ok func(string) bool) (string, bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	last := ""
	for {
		text, err := fetch(ctx, url)
		if err == nil {
			if ok(text) {
				return text, true
			}
			last = text
		}
		if time.Now().After(deadline) {
			if sumMetric(last, "trawler_worker_uris_finished_total") == 0 {
				t.Fatalf("%s: the crawl finished nothing within 60s", url)
			}
			return last, false
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(200 * time.Millisecond): // poll interval
		}
	}
}

func get(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	text, err := fetch(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// fetch scrapes url, asking for the text exposition format.
func fetch(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("scrape %s: %s", url, resp.Status)
	}
	return string(b), nil
}

// sumMetric adds up the samples of one metric name in exposition text.
func sumMetric(text, name string) float64 {
	var n float64
	for line := range strings.Lines(text) {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		var v float64
		if _, err := fmt.Sscan(f[len(f)-1], &v); err == nil {
			n += v
		}
	}
	return n
}
