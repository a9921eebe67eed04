package testweb

import (
	"io"
	"testing"
)

// BenchmarkServeSite fetches every reachable URL of a default-sized site
// once per iteration: the cost a crawler benchmark pays for the server.
func BenchmarkServeSite(b *testing.B) {
	site, err := Generate(Config{Seed: 1, LargeFileBytes: 64 << 10})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := site.Start(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Close() })
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
