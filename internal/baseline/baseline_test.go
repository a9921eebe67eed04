package baseline

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/pkg/testweb/docsite"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// serveDocsite generates a site, serves it and returns its directory,
// URLs and server.
func serveDocsite(tb testing.TB, pages int) (string, []string, *docsite.Server) {
	tb.Helper()
	dir := tb.TempDir()
	if err := docsite.Generate(dir, pages, 1); err != nil {
		tb.Fatal(err)
	}
	srv, err := docsite.Serve(context.Background(), dir, "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	urls, err := docsite.Reachable(dir, srv.URL())
	if err != nil {
		tb.Fatal(err)
	}
	return dir, urls, srv
}

// startTestweb starts a synthetic web and returns it with its reachable
// URLs.
func startTestweb(tb testing.TB, cfg testweb.Config) (*testweb.Server, []string) {
	tb.Helper()
	site, err := testweb.Generate(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := site.Start(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = srv.Close() })
	return srv, srv.Reachable(testweb.ReachOptions{})
}

// dirBytes sums the sizes of the files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		n += info.Size()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRunDocsite(t *testing.T) {
	dir, urls, _ := serveDocsite(t, 20)
	res, err := Run(context.Background(), urls, Options{Goroutines: 4, GzipLevel: 6})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != len(urls) || res.Errors != 0 {
		t.Fatalf("%d pages, %d errors; want %d pages", res.Pages, res.Errors, len(urls))
	}
	// Every file is linked exactly once, so the bytes read are the site's.
	if want := dirBytes(t, dir); res.Bytes != want {
		t.Errorf("read %d bytes, the site has %d", res.Bytes, want)
	}
	if res.Wall <= 0 || res.CPU <= 0 || res.PagesPerSec <= 0 || res.CPUMicrosPerPage <= 0 {
		t.Errorf("rates not measured: %+v", res)
	}
	if got := float64(res.Pages) / res.Wall.Seconds(); got != res.PagesPerSec {
		t.Errorf("PagesPerSec %f, want %f", res.PagesPerSec, got)
	}
}

func TestRunTestweb(t *testing.T) {
	srv, urls := startTestweb(t, testweb.Config{Seed: 1, Hosts: 2, PagesPerHost: 20, LargeFileBytes: 100_000})
	for _, keepAlive := range []bool{false, true} {
		res, err := Run(context.Background(), urls, Options{Goroutines: 8, Resolver: srv.Resolver(), KeepAlive: keepAlive})
		if err != nil {
			t.Fatal(err)
		}
		// 404s and redirects are pages too: each URL is fetched once.
		if res.Pages != len(urls) || res.Errors != 0 {
			t.Errorf("keepAlive %v: %d pages, %d errors; want %d pages", keepAlive, res.Pages, res.Errors, len(urls))
		}
		if res.Bytes < 2*100_000 {
			t.Errorf("keepAlive %v: %d bytes, less than the two large files", keepAlive, res.Bytes)
		}
	}
}

func TestKeepAliveControlsConnections(t *testing.T) {
	dir, _, _ := serveDocsite(t, 10)
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(http.FileServer(http.Dir(dir)))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	urls, err := docsite.Reachable(dir, ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		keepAlive bool
		min, max  int64
	}{{false, int64(len(urls)), int64(len(urls))}, {true, 1, 2}} {
		conns.Store(0)
		res, err := Run(context.Background(), urls, Options{Goroutines: 2, KeepAlive: c.keepAlive})
		if err != nil || res.Pages != len(urls) {
			t.Fatalf("keepAlive %v: %+v, %v", c.keepAlive, res, err)
		}
		if n := conns.Load(); n < c.min || n > c.max {
			t.Errorf("keepAlive %v: %d connections for %d URLs, want %d..%d", c.keepAlive, n, len(urls), c.min, c.max)
		}
	}
}

func TestRunCountsFailures(t *testing.T) {
	srv, _ := startTestweb(t, testweb.Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	urls := []string{
		srv.Seeds()[0],
		"http://nowhere.invalid/",                // the resolver does not know it
		"http://[::1",                            // not a URL
		srv.HostileURL(testweb.PathReset),        // connection reset mid-body
		srv.HostileURL(testweb.PathSlowDrip),     // outlives the timeout
		srv.HostileURL(testweb.PathRedirectLoop), // a 302 is a page: not followed
	}
	start := time.Now()
	res, err := Run(context.Background(), urls, Options{Goroutines: 3, Resolver: srv.Resolver(), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != 2 || res.Errors != 4 {
		t.Errorf("%d pages, %d errors; want 2 and 4", res.Pages, res.Errors)
	}
	if el := time.Since(start); el > 30*time.Second {
		t.Errorf("run took %v: the timeout did not cut the slow drip", el)
	}
}

func TestRunCancelled(t *testing.T) {
	_, urls, _ := serveDocsite(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, urls, Options{})
	if !errors.Is(err, context.Canceled) || res.Pages != 0 || res.Errors != 0 {
		t.Errorf("cancelled run: %+v, %v; want no pages and context.Canceled", res, err)
	}
	res, err = Run(context.Background(), nil, Options{})
	if err != nil || res.Pages != 0 {
		t.Errorf("empty run: %+v, %v", res, err)
	}
}

func TestOptionsBadInput(t *testing.T) {
	cases := []struct {
		o    Options
		want string
	}{
		{Options{Goroutines: -1}, "goroutines: -1"},
		{Options{GzipLevel: 10}, "gzipLevel: 10 out of range"},
		{Options{GzipLevel: -3}, "gzipLevel: -3 out of range"},
		{Options{Timeout: -time.Second}, "timeout: -1s"},
		{Options{Client: http.DefaultClient, Resolver: net.DefaultResolver}, "resolver:"},
	}
	for _, c := range cases {
		_, err := Run(context.Background(), []string{"http://127.0.0.1:1/"}, c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error containing %q", c.o, err, c.want)
		}
	}
}

func TestMerge(t *testing.T) {
	a := Result{Pages: 100, Bytes: 1000, Errors: 1, Wall: time.Second, CPU: 200 * time.Millisecond}
	b := Result{Pages: 300, Bytes: 3000, Wall: time.Second, CPU: 600 * time.Millisecond}
	m := Merge(a, b)
	if m.Pages != 400 || m.Bytes != 4000 || m.Errors != 1 || m.Wall != 2*time.Second || m.CPU != 800*time.Millisecond {
		t.Fatalf("totals %+v", m)
	}
	if m.PagesPerSec != 200 || m.CPUMicrosPerPage != 2000 {
		t.Fatalf("rates %v pages/s, %v µs/page; want 200 and 2000", m.PagesPerSec, m.CPUMicrosPerPage)
	}
	if z := Merge(); z != (Result{}) {
		t.Fatalf("Merge() = %+v", z)
	}
}
