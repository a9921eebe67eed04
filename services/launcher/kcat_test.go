package launcher_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/kafka"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/services/worker"
)

// noDNS fails every lookup: the golden messages name real-looking hosts,
// and a test never reaches the internet.
type noDNS struct{}

func (noDNS) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return nil, errors.New("no DNS in tests")
}

// syncBuffer is the shared concurrency-safe test log sink.
type syncBuffer = testlog.Buffer

// Launch messages written by another producer (kcat, librdkafka) in the
// shapes UKWA's tools write them are admitted by a worker; the POST is
// skipped with a log entry.
func TestKcatLaunchesAdmittedByWorker(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (apt-get install kcat; scripts/install-test-deps.sh does it)")
	}
	kc, _ := embeddedtest.Kafka(t, 2)
	rdb := embeddedtest.Redis(t)

	var input bytes.Buffer
	var wantURLs []string
	golden, err := os.ReadFile(filepath.Join("testdata", "launch-messages.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(golden))
	for sc.Scan() {
		var m struct {
			URL    string `json:"url"`
			Method string `json:"method"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		key, err := hostkey.ForURL(m.URL)
		if err != nil {
			t.Fatal(err)
		}
		input.WriteString(key + "\t" + sc.Text() + "\n")
		if m.Method != "POST" {
			wantURLs = append(wantURLs, m.URL)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kcat, "-P", "-b", kc.Brokers[0], "-t", "fc.tocrawl.npld", "-K", "\t")
	cmd.Stdin = &input
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kcat: %v\n%s", err, out)
	}

	logs := &syncBuffer{}
	p := profile.Default()
	w, err := worker.New(worker.Config{Crawl: "fc", Stream: "npld", ID: "kcat", Threads: 1, DataDir: t.TempDir(), Lease: time.Minute},
		worker.Deps{Profile: p, Kafka: kc, Redis: rdb, Resolver: noDNS{}, Logger: slog.New(slog.NewJSONHandler(logs, nil)),
			Registerer: prometheus.NewRegistry(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Error("worker did not stop")
		}
	})

	admitted := readInScope(t, kc, len(wantURLs))
	slices.Sort(admitted)
	slices.Sort(wantURLs)
	if !slices.Equal(admitted, wantURLs) {
		t.Errorf("admitted %v\nwant %v", admitted, wantURLs)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "https://news.example.org/form") || !strings.Contains(logs.String(), `"method":"POST"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no log entry for the skipped POST:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}
}

// readInScope polls the inscope journal until n URLs were admitted.
func readInScope(t *testing.T, kc kafka.Config, n int) []string {
	t.Helper()
	cl, err := kafka.NewClient(kc, kgo.ConsumeTopics("fc.inscope.npld"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var urls []string
	for len(urls) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("admitted %d of %d launches before the deadline: %v", len(urls), n, urls)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var m struct {
				URL string `json:"url"`
			}
			if err := json.Unmarshal(r.Value, &m); err != nil {
				t.Errorf("inscope record %s: %v", r.Value, err)
			}
			urls = append(urls, m.URL)
		})
	}
	return urls
}
