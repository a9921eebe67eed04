package launcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/kafka"
)

// countingProducer counts what it is given: the launcher's own cost,
// without a broker.
type countingProducer struct{ n atomic.Int64 }

func (p *countingProducer) Produce(context.Context, string, string, []byte) error {
	p.n.Add(1)
	return nil
}

func (p *countingProducer) ProduceBatch(_ context.Context, recs []Record) []error {
	p.n.Add(int64(len(recs)))
	return make([]error, len(recs))
}

// benchFeed writes n targets with two seeds each; every target is DAILY,
// starting at hour i%24, or at 09:00 when allDue.
func benchFeed(b *testing.B, n int, allDue bool) string {
	b.Helper()
	var sb strings.Builder
	for i := range n {
		hour := i % 24
		if allDue {
			hour = 9
		}
		fmt.Fprintf(&sb, `{"id": %d, "title": "Target %d", "seeds": ["https://www.site%d.example.org.uk/", "https://news.site%d.example.org.uk/latest"], "depth": "CAPPED_LARGE", "scope": "subdomains", "ignoreRobotsTxt": %t, "schedules": [{"startDate": "2023-01-01 %02d:00:00", "endDate": "", "frequency": "DAILY"}], "watched": false, "documentUrlScheme": null, "loginPageUrl": "", "logoutUrl": "", "secretId": ""}`+"\n",
			i, i, i, i, i%2 == 0, hour)
	}
	path := filepath.Join(b.TempDir(), "feed.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkRun100kTargets evaluates a 100,000-target feed for one hour and
// produces its due launches: into the broker (kfake) with the Redis
// ledger, or into a counting producer without one. "hourly" is the usual
// hour (1/24 of the targets due); "all-due" has every target due.
func BenchmarkRun100kTargets(b *testing.B) {
	for _, allDue := range []bool{false, true} {
		feed := benchFeed(b, 100000, allDue)
		name := "hourly"
		if allDue {
			name = "all-due"
		}
		b.Run(name+"/kfake+redis", func(b *testing.B) {
			c := newCluster(b, npld)
			rdb := embeddedtest.Redis(b)
			benchRuns(b, func() Deps {
				ledger, err := NewRedisLedger(rdb, "", 0, 0)
				if err != nil {
					b.Fatal(err)
				}
				return Deps{Producer: NewKafkaProducer(newClient(b, c)), KeyFunc: hostkey.ForURL, Ledger: ledger}
			}, feed)
		})
		b.Run(name+"/counting", func(b *testing.B) {
			benchRuns(b, func() Deps {
				return Deps{Producer: &countingProducer{}, KeyFunc: hostkey.ForURL}
			}, feed)
		})
	}
}

func benchRuns(b *testing.B, deps func() Deps, feed string) {
	cfg := Config{Feeds: []string{feed}, Crawl: CrawlFrequent, Stream: "npld", TimeZone: "Europe/London", Hourly: true}
	at := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	var messages int
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		svc, err := New(cfg, deps())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		// A new day each time, so the ledger holds nothing for it yet.
		sum, err := svc.RunOnce(context.Background(), at.AddDate(0, 0, i))
		if err != nil {
			b.Fatal(err)
		}
		if sum.Targets != 100000 || sum.Messages == 0 || sum.Messages != 2*sum.Due {
			b.Fatalf("summary %+v", sum)
		}
		messages = sum.Messages
	}
	b.StopTimer()
	b.ReportMetric(float64(messages), "launches/op")
	b.ReportMetric(float64(b.N*100000)/b.Elapsed().Seconds(), "targets/s")
	// CPU time includes the set-up of each iteration (small) and, for
	// kfake, the in-process broker; not redis-server.
	b.ReportMetric((cpuTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
}

// BenchmarkBulkLoad streams 200,000 seeds into the embedded broker, with
// the scope file and Redis checkpoints, and reports seeds per second.
func BenchmarkBulkLoad(b *testing.B) {
	const n = 200000
	dir := b.TempDir()
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "https://www.domain%d.example.uk/\n", i)
	}
	input := filepath.Join(dir, "seeds.txt")
	if err := os.WriteFile(input, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	_, cl := embeddedtest.Kafka(b, 16)
	rdb := embeddedtest.Redis(b)
	cfg := BulkConfig{Input: input, Crawl: CrawlDomain, ScopeFile: filepath.Join(dir, "scope.txt"), Restart: true}
	deps := BulkDeps{Producer: kafka.NewProducer(cl), KeyFunc: hostkey.ForURL, Checkpoints: NewRedisCheckpoints(rdb, "", dcTopic)}
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		sum, err := Bulk(context.Background(), cfg, deps)
		if err != nil {
			b.Fatal(err)
		}
		if sum.Seeds != n {
			b.Fatalf("summary %+v", sum)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "seeds/s")
	// Seeds per second of CPU (this process, the embedded broker
	// included): what a machine with one idle core would reach.
	b.ReportMetric(float64(b.N*n)/(cpuTime()-cpu).Seconds(), "seeds/cpu-s")
}
