package testweb

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestCloseWhileStreaming(t *testing.T) {
	site, err := Generate(Config{Seed: 4, Hosts: 2, PagesPerHost: 5, Hostile: true, LargeFileBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	client := newClient(t, srv)
	urls := []string{
		srv.HostileURL(PathSlowDrip),
		srv.HostileURL(PathEndless),
		srv.HostileURL(PathHugeBody),
		target{0, pathLarge}.url(srv.authority), // 1 GiB with Content-Length
		target{1, pathLarge}.url(srv.authority), // 1 GiB chunked
	}
	started := make(chan struct{}, len(urls))
	results := make(chan error, len(urls))
	release := make(chan struct{}) // clients stall until Close returns
	for _, u := range urls {
		go func() {
			resp, err := client.Get(u)
			if err != nil {
				started <- struct{}{}
				results <- err
				return
			}
			defer resp.Body.Close()
			var one [1]byte
			_, err = io.ReadFull(resp.Body, one[:])
			started <- struct{}{}
			if err != nil {
				results <- err
				return
			}
			<-release
			_, err = io.Copy(io.Discard, resp.Body) // ends only when the server goes
			if err == nil {
				results <- errCleanEnd(u)
				return
			}
			results <- nil
		}()
	}
	deadline := time.After(20 * time.Second)
	for range urls {
		select {
		case <-started:
		case <-deadline:
			t.Fatal("streaming clients did not start")
		}
	}
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return while responses were streaming")
	}
	close(release)
	for range urls {
		select {
		case err := <-results:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a client is still streaming after Close")
		}
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := client.Get(srv.Seeds()[0]); err == nil {
		t.Error("GET after Close succeeded")
	}
}

func TestContextCancelStopsServer(t *testing.T) {
	site, err := Generate(Config{Seed: 4, Hosts: 2, PagesPerHost: 5})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := site.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	addr := srv.vhosts[0].addr.String()
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatal("server still accepting 10s after its context was cancelled")
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close after cancel: %v", err)
	}
	if _, err := site.Start(ctx); err == nil {
		t.Error("Start with a cancelled context succeeded")
	}
}

func TestRequestsAfterCloseAreRefused(t *testing.T) {
	srv := startSite(t, Config{Seed: 4, Hosts: 1, PagesPerHost: 5})
	rec := &responseRecorder{header: http.Header{}}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, srv.Seeds()[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.vhosts[0].srv.Handler.ServeHTTP(rec, req)
	if rec.status != http.StatusServiceUnavailable {
		t.Errorf("handler after Close gave %d, want 503", rec.status)
	}
}

// errCleanEnd reports a body that ended cleanly although the server closed
// mid-stream.
func errCleanEnd(u string) error {
	return fmt.Errorf("%s: body ended cleanly although the server closed mid-stream", u)
}

// responseRecorder is a minimal http.ResponseWriter.
type responseRecorder struct {
	header http.Header
	status int
}

func (r *responseRecorder) Header() http.Header         { return r.header }
func (r *responseRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *responseRecorder) WriteHeader(s int)           { r.status = s }
