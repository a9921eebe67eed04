package cdxindex

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

var benchEntries = flag.Int("cdxindex.entries", 10_000_000, "entries in the index BenchmarkExactQuery builds")

// capturesPerURL is how many captures each benchmark URL has, as in a crawl
// that revisits pages.
const capturesPerURL = 5

// benchLine is capture i: URL i/capturesPerURL, a time that grows with i.
// Like the lines of cdx.FromCrawled, it carries its URL key.
func benchLine(tb testing.TB, i int) cdx.Line {
	u := i / capturesPerURL
	key, err := surt.CDXKey(benchURL(u))
	if err != nil {
		tb.Fatal(err)
	}
	return cdx.Line{
		URLKey:    key,
		Original:  benchURL(u),
		Timestamp: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i%capturesPerURL) * 24 * time.Hour).Add(time.Duration(u%86400) * time.Second).Format("20060102150405"),
		Mimetype:  "text/html",
		Status:    "200",
		Digest:    "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
		Length:    int64(2000 + i%5000),
		Offset:    int64(i) * 3000,
		Filename:  fmt.Sprintf("NPLD-20240101000000000-%05d-worker-0.warc.gz", i/300000),
	}
}

func benchURL(u int) string {
	return fmt.Sprintf("https://www.host%d.example.org/section/%d/page-%d.html?id=%d", u%200000, u%97, u, u*7)
}

// BenchmarkPut measures ingest through Put in batches of 1000 lines, each
// batch durable when Put returns.
func BenchmarkPut(b *testing.B) {
	ix := openTest(b)
	ctx := context.Background()
	const batch = 1000
	next := 0
	lines := make([]cdx.Line, batch)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		for i := range lines {
			lines[i] = benchLine(b, next)
			next++
		}
		b.StartTimer()
		if err := ix.Put(ctx, "bench", lines); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkExactQuery builds an index of -cdxindex.entries captures once
// (through Put, 10,000 lines a batch) and then measures exact-URL queries
// through the HTTP handler (httptest, no network), reporting latency
// percentiles. Run with -benchtime=10000x for 10,000 queries.
func BenchmarkExactQuery(b *testing.B) {
	ix := openTest(b)
	ctx := context.Background()
	start := time.Now()
	var inPut time.Duration // the build time without making up the lines
	const batch = 10000
	lines := make([]cdx.Line, 0, batch)
	for i := range *benchEntries {
		lines = append(lines, benchLine(b, i))
		if len(lines) == batch || i == *benchEntries-1 {
			t0 := time.Now()
			if err := ix.Put(ctx, "bench", lines); err != nil {
				b.Fatal(err)
			}
			inPut += time.Since(t0)
			lines = lines[:0]
		}
	}
	build := time.Since(start)
	n, _ := ix.Count("bench")
	b.Logf("built %d entries in %s, %s of it in Put (%.0f lines/s), %d MiB on disk", n, build.Round(time.Second),
		inPut.Round(time.Second), float64(n)/inPut.Seconds(), ix.DiskBytes()>>20)
	h := ix.Handler(HandlerOptions{OpenWrites: true})
	urls := *benchEntries / capturesPerURL
	for _, output := range []string{"cdx", "json"} {
		b.Run(output, func(b *testing.B) {
			r := rand.New(rand.NewPCG(7, 8))
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				u := benchURL(r.IntN(urls))
				req := httptest.NewRequest(http.MethodGet, "/bench?url="+u+"&output="+output, nil)
				rec := httptest.NewRecorder()
				t0 := time.Now()
				h.ServeHTTP(rec, req)
				lat = append(lat, time.Since(t0))
				if rec.Code != http.StatusOK || rec.Body.Len() == 0 {
					b.Fatalf("%s: %d %q", u, rec.Code, rec.Body.String())
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(pct(0.5), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(pct(1), "max-ms")
		})
	}
}
