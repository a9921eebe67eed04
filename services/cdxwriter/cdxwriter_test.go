package cdxwriter

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/kafka"
)

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// All three event shapes are accepted; only events with a WARC location
// give CDX lines; undecodable events go to the DLQ and do not stop it.
func TestIndexesGoldenEventsAndSkipsBadOnes(t *testing.T) {
	ctx := context.Background()
	kc, cl := embeddedtest.Kafka(t, 1)
	golden, err := os.ReadFile("testdata/crawled-events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	values := strings.Split(strings.TrimSpace(string(golden)), "\n")
	values = append(values, `{"url": "http://x/", "status_code": "two hundred"}`, `{truncated`)
	for _, v := range values {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "fc.crawled", Key: []byte("k"), Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{Crawl: "fc", DataDir: t.TempDir()}
	w, err := New(cfg, kc, slog.New(slog.NewTextHandler(io.Discard, nil)), prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(runCtx) }()
	adm := kadm.NewClient(cl)
	deadline := time.Now().Add(30 * time.Second)
	for {
		lags, err := adm.Lag(ctx, cfg.Group())
		if err == nil && lags[cfg.Group()].Lag.Total() == 0 && len(lags[cfg.Group()].Lag) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cdxwriter did not catch up: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	lines := readLines(t, cfg.Path())
	if len(lines) != 2 {
		t.Fatalf("%d CDX lines, want 2 (the -5002 hand-off has no record):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	if !strings.HasPrefix(lines[0], "org,example,news)/ 20240117090002 ") || !strings.Contains(lines[0], `"offset":"10422"`) {
		t.Errorf("Trawler event line: %s", lines[0])
	}
	if !strings.HasPrefix(lines[1], "net,example,cdn)/lib.js 20240117090005 ") || !strings.Contains(lines[1], `"mime":"application/javascript"`) {
		t.Errorf("proxy event line: %s", lines[1])
	}
	// A fresh client: the first one's metadata predates the topics.
	fresh, err := kafka.NewClient(kc)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	ends, err := kadm.NewClient(fresh).ListEndOffsets(ctx, "fc.dlq")
	if err != nil {
		t.Fatal(err)
	}
	var dlq int64
	ends.Each(func(o kadm.ListedOffset) { dlq += o.Offset })
	if dlq != 2 {
		t.Fatalf("DLQ has %d records, want the 2 undecodable events", dlq)
	}
}

func TestConfig(t *testing.T) {
	if err := (Config{Crawl: "xx", DataDir: "d"}).Validate(); err == nil {
		t.Fatal("want error for bad crawl")
	}
	if err := (Config{Crawl: "dc"}).Validate(); err == nil {
		t.Fatal("want error for missing data dir")
	}
	if _, err := New(Config{Crawl: "zz"}, kafka.Config{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry()); err == nil {
		t.Fatal("New accepted a bad config")
	}
}
