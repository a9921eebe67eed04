package renderer

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// BenchmarkRenderPages renders pages of the synthetic web with 20
// subresources each (testweb.PathHeavy: 6 images, 6 scripts, 4
// stylesheets, 4 fetch() calls) through the whole renderer:
// hand-off topic, browser, recording proxy, WARC, events, outlinks. It
// reports rendered pages per minute and the peak memory of the test
// process (RSS: renderer, proxy, embedded broker and clients) and of the
// Chromium processes (the sum of their proportional set sizes), sampled
// every 50 ms.
//
//	go test -run '^$' -bench RenderPages -benchtime 60x ./services/renderer/
func BenchmarkRenderPages(b *testing.B) {
	srv, home, p := startTestweb(b)
	e := newEnv(b)
	e.wait = 30 * time.Minute
	_, stop := e.startWith(b, Config{Crawl: "fc", Stream: "npld", ID: "r0", DataDir: e.dir, Tabs: 2,
		PageTimeout: 60 * time.Second, Attempts: 2, NoSandbox: true}, p, srv.Resolver())
	peak := sampleRSS(e.dir)
	b.ResetTimer()
	urls := make([]string, b.N)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s%s%d", home, testweb.PathHeavy, i)
	}
	start := time.Now()
	e.handOff(b, urls...)
	last := "onreadydom:" + urls[len(urls)-1]
	e.readTopic(b, "fc.crawled", func(recs []*kgo.Record) bool { return hasURL(last)(recs) && countPrefix(recs, "onreadydom:") >= b.N })
	el := time.Since(start)
	b.StopTimer()
	stop()
	self, chrome := peak()
	b.ReportMetric(float64(b.N)/el.Minutes(), "pages/min")
	b.ReportMetric(float64(self)/(1<<20), "MiB-renderer-peak")
	b.ReportMetric(float64(chrome)/(1<<20), "MiB-chromium-peak")
}

func countPrefix(recs []*kgo.Record, prefix string) int {
	n := 0
	for _, r := range recs {
		if strings.Contains(string(r.Value), `"url":"`+prefix) {
			n++
		}
	}
	return n
}

// sampleRSS samples resident memory until the returned function is
// called, which returns the peaks: this process's, and the sum over the
// Chromium processes whose profile lives under dir.
func sampleRSS(dir string) func() (self, chrome int64) {
	var mu sync.Mutex
	var peakSelf, peakChrome int64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			s := rss("/proc/self/status")
			var c int64
			for _, p := range chromiumUsing(dir) {
				c += pss(strings.TrimSuffix(p, "cmdline") + "smaps_rollup")
			}
			mu.Lock()
			peakSelf, peakChrome = max(peakSelf, s), max(peakChrome, c)
			mu.Unlock()
		}
	}()
	return func() (int64, int64) {
		close(done)
		mu.Lock()
		defer mu.Unlock()
		return peakSelf, peakChrome
	}
}

// rss reads VmRSS (bytes) from a /proc status file; 0 when it is gone.
func rss(path string) int64 { return procField(path, "VmRSS:") }

// pss reads the proportional set size from a /proc smaps_rollup file:
// Chromium's processes share much of their memory, which RSS would count
// once per process.
func pss(path string) int64 { return procField(path, "Pss:") }

// procField reads a "Name: N kB" field of a /proc file, in bytes.
func procField(path, name string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, name); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}
