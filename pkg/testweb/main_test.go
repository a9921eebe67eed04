package testweb

import (
	"context"
	"net/http"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// startSite generates and starts a site, closing it when the test or
// benchmark ends.
func startSite(t testing.TB, cfg Config) *Server {
	t.Helper()
	site, err := Generate(cfg)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	srv, err := site.Start(context.Background())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return srv
}

// newClient returns an HTTP client that resolves through srv's Resolver and
// does not follow redirects.
func newClient(t *testing.T, srv *Server) *http.Client {
	t.Helper()
	tr := newTransport(srv)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// smallSite is the configuration most tests crawl: every feature on, small
// enough to crawl many times under -race.
func smallSite(seed int64) Config {
	return Config{Seed: seed, Hosts: 3, PagesPerHost: 60, Trap: true, Hostile: true, LargeFileBytes: 100_000}
}

// newTransport returns a transport that resolves through srv's Resolver.
func newTransport(srv *Server) *http.Transport {
	return &http.Transport{DialContext: srv.Resolver().DialContext, DisableCompression: true}
}

// mustGet builds a GET request.
func mustGet(tb testing.TB, u string) *http.Request {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return req
}
