package baseline

import (
	"context"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// benchRun runs the baseline over urls once per iteration and reports the
// mean rates. The servers run in this process, so CPU includes serving.
func benchRun(b *testing.B, urls []string, o Options) {
	b.Helper()
	var total Result
	for b.Loop() {
		res, err := Run(context.Background(), urls, o)
		if err != nil {
			b.Fatal(err)
		}
		if res.Errors > 0 {
			b.Fatalf("%d fetch errors", res.Errors)
		}
		total.Pages += res.Pages
		total.Bytes += res.Bytes
		total.Wall += res.Wall
		total.CPU += res.CPU
	}
	b.ReportMetric(float64(total.Pages)/total.Wall.Seconds(), "pages/s")
	b.ReportMetric(float64(total.CPU.Microseconds())/float64(total.Pages), "cpu-µs/page")
	b.ReportMetric(float64(total.Bytes)/total.Wall.Seconds()/1e6, "MB/s")
}

// BenchmarkTestwebDefaults is the baseline on the synthetic web with
// testweb's default configuration (4 hosts of 100 pages, 3 MiB large
// files), every reachable URL once per iteration.
func BenchmarkTestwebDefaults(b *testing.B) {
	srv, urls := startTestweb(b, testweb.Config{Seed: 1})
	benchRun(b, urls, Options{Resolver: srv.Resolver(), GzipLevel: 6})
}

// BenchmarkTestwebDefaultsKeepAlive is the same with connection reuse.
func BenchmarkTestwebDefaultsKeepAlive(b *testing.B) {
	srv, urls := startTestweb(b, testweb.Config{Seed: 1})
	benchRun(b, urls, Options{Resolver: srv.Resolver(), GzipLevel: 6, KeepAlive: true})
}

// BenchmarkDocsite300 is the baseline on a 300-page documentation site
// at gzip level 6.
func BenchmarkDocsite300(b *testing.B) {
	_, urls, _ := serveDocsite(b, 300)
	benchRun(b, urls, Options{GzipLevel: 6})
}

// BenchmarkDocsite300KeepAlive is the same with connection reuse.
func BenchmarkDocsite300KeepAlive(b *testing.B) {
	_, urls, _ := serveDocsite(b, 300)
	benchRun(b, urls, Options{GzipLevel: 6, KeepAlive: true})
}
