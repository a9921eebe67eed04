package testweb

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkServeSite fetches every reachable URL of a default-sized site
// once per iteration: the cost a crawler benchmark pays for the server.
func BenchmarkServeSite(b *testing.B) {
	srv := startSite(b, Config{Seed: 1, LargeFileBytes: 64 << 10})
	tr := newTransport(srv)
	b.Cleanup(tr.CloseIdleConnections)
	urls := srv.Reachable(ReachOptions{})
	b.ResetTimer()
	for b.Loop() {
		for _, u := range urls {
			resp, err := tr.RoundTrip(mustGet(b, u))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}
	b.ReportMetric(float64(len(urls)), "urls/op")
}

// startBenchSite starts the site the crawl benchmark serves: 10 KB pages.
func startBenchSite(b *testing.B) *Server {
	b.Helper()
	return startSite(b, Config{Seed: 1, PageBytes: 10_000, LargeFileBytes: 64 << 10})
}

// benchResources routes every reachable target of srv's site hosts whose
// resource kind passes keep.
func benchResources(srv *Server, keep func(resource) bool) []resource {
	s := srv.site
	var out []resource
	for t := range s.reach(ReachOptions{FollowSitemaps: true}) {
		if t.host < 0 {
			continue
		}
		if r := s.route(t.host, stripQuery(t.path)); keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// BenchmarkRenderHTML renders every HTML document of the benchmark site
// once per iteration, without HTTP.
func BenchmarkRenderHTML(b *testing.B) {
	benchRender(b, resource.isHTML, "docs/op")
}

// BenchmarkRenderPNG renders every image of the benchmark site once per
// iteration.
func BenchmarkRenderPNG(b *testing.B) {
	benchRender(b, func(r resource) bool { return r.kind == kindImage }, "imgs/op")
}

// benchRender renders the resources keep selects once per iteration.
func benchRender(b *testing.B, keep func(resource) bool, unit string) {
	srv := startBenchSite(b)
	rs := benchResources(srv, keep)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range rs {
			buf.Reset()
			if _, err := srv.render(&buf, r, 0); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(rs)), unit)
}

// BenchmarkServeResource serves every reachable resource except the large
// file through the handler, without a network: rendering plus headers.
func BenchmarkServeResource(b *testing.B) {
	srv := startBenchSite(b)
	all := benchResources(srv, func(r resource) bool { return r.kind != kindLarge })
	reqs := make([]*http.Request, len(all))
	for i, r := range all {
		reqs[i] = httptest.NewRequest(http.MethodGet, target{r.host, r.path}.url(srv.authority), nil)
	}
	w := &discardWriter{h: make(http.Header)}
	b.ReportAllocs()
	for b.Loop() {
		for i, r := range all {
			clear(w.h)
			srv.serveResource(w, reqs[i], r)
		}
	}
	b.ReportMetric(float64(len(all)), "resources/op")
}

// discardWriter is a ResponseWriter that keeps only headers, so the
// benchmark measures the server rather than a recorder's buffer.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Flush()                      {}
