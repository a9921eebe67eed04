package recentdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

// benchUpdates are n captures of the last hour (older ones would expire on
// arrival under a TTL and measure deletion instead).
func benchUpdates(n int) []Update {
	ups := make([]Update, n)
	start := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	for i := range ups {
		at := start.Add(time.Duration(i) * time.Millisecond)
		c := &Capture{Time: at, Status: 200, Digest: "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", ETag: `"5f3a-61b2"`,
			Filename: "NPLD-20240117085959123-00001-worker-0.warc.gz", Offset: int64(i) * 13107, Length: 13107}
		ups[i] = Update{URL: fmt.Sprintf("https://www.host%d.example.org/section/%d/article-%d.html?ref=%d", i%997, i%53, i, i%7),
			Capture: c, Original: &Original{Time: at, Digest: c.Digest, Filename: c.Filename, Offset: c.Offset, Length: c.Length}}
	}
	return ups
}

// BenchmarkPut writes entries in batches of 2000 to redis-server.
//
//	go test -run '^$' -bench 'BenchmarkPut|BenchmarkLookup' -benchtime 200000x ./pkg/recentdb/
func BenchmarkPut(b *testing.B) {
	rdb := embeddedtest.Redis(b)
	db, err := New(rdb, Options{Crawl: "fc", TTL: 366 * 24 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	ups := benchUpdates(b.N)
	ctx := context.Background()
	b.ResetTimer()
	for s := 0; s < b.N; s += 2000 {
		if err := db.Put(ctx, ups[s:min(s+2000, b.N)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkLookup reads entries back in batches of 500, as a worker
// checking a page's outlinks would.
func BenchmarkLookup(b *testing.B) {
	rdb := embeddedtest.Redis(b)
	db, err := New(rdb, Options{Crawl: "fc"})
	if err != nil {
		b.Fatal(err)
	}
	const n = 20000
	ups := benchUpdates(n)
	ctx := context.Background()
	for s := 0; s < n; s += 2000 {
		if err := db.Put(ctx, ups[s:s+2000]); err != nil {
			b.Fatal(err)
		}
	}
	urls := make([]string, 500)
	b.ResetTimer()
	for s := 0; s < b.N; s += len(urls) {
		for i := range urls {
			urls[i] = ups[(s+i)%n].URL
		}
		es, err := db.Lookup(ctx, urls)
		if err != nil || es[0].Capture == nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
}
