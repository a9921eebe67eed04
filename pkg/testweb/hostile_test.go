package testweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostileGet starts a request to a hostile endpoint with a deadline.
func hostileGet(t *testing.T, srv *Server, client *http.Client, path string, timeout time.Duration) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.HostileURL(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func TestHostileSlowDrip(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	window := 1500 * time.Millisecond
	resp := hostileGet(t, srv, newClient(t, srv), PathSlowDrip, window)
	start := time.Now()
	n, err := io.Copy(io.Discard, resp.Body)
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow drip ended with %v after %d bytes, want the client deadline", err, n)
	}
	maxBytes := int64(window/SlowDripInterval) + 1
	if n < 2 || n > maxBytes {
		t.Errorf("slow drip sent %d bytes in %v, want 2..%d at one per %v", n, elapsed, maxBytes, SlowDripInterval)
	}
}

func TestHostileEndless(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	resp := hostileGet(t, srv, newClient(t, srv), PathEndless, 30*time.Second)
	if resp.ContentLength != -1 {
		t.Errorf("endless declares Content-Length %d", resp.ContentLength)
	}
	const want = 8 << 20
	if n, err := io.CopyN(io.Discard, resp.Body, want); err != nil || n != want {
		t.Fatalf("read %d bytes of endless body: %v", n, err)
	}
}

func TestHostileHugeHeaders(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	resp := hostileGet(t, srv, newClient(t, srv), PathHugeHeaders, 30*time.Second)
	total := 0
	for k, vs := range resp.Header {
		for _, v := range vs {
			total += len(k) + len(v) + 4
		}
	}
	if total <= HugeHeaderBytes {
		t.Errorf("headers total %d bytes, want more than %d", total, HugeHeaderBytes)
	}
	tr := &http.Transport{DialContext: srv.Resolver().DialContext, MaxResponseHeaderBytes: 64 << 10}
	t.Cleanup(tr.CloseIdleConnections)
	_, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Get(srv.HostileURL(PathHugeHeaders))
	if err == nil || !strings.Contains(err.Error(), "header") {
		t.Errorf("client with a 64 KiB header limit got %v, want a header-size error", err)
	}
}

func TestHostileBrokenChunked(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	resp := hostileGet(t, srv, newClient(t, srv), PathBrokenChunked, 30*time.Second)
	body, err := io.ReadAll(resp.Body)
	if err == nil || !strings.Contains(err.Error(), "chunk") {
		t.Errorf("broken chunked body read gave %v, want a chunk-size error", err)
	}
	if string(body) != "0123456789abcdef" {
		t.Errorf("body before the error = %q, want the first chunk", body)
	}
}

func TestHostileGzipBomb(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	resp := hostileGet(t, srv, newClient(t, srv), PathGzipBomb, 60*time.Second)
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.ContentLength <= 0 || resp.ContentLength > 2<<20 {
		t.Fatalf("Content-Encoding %q, Content-Length %d; want gzip and at most 2 MiB",
			resp.Header.Get("Content-Encoding"), resp.ContentLength)
	}
	compressed, err := io.ReadAll(resp.Body)
	if err != nil || int64(len(compressed)) != resp.ContentLength {
		t.Fatalf("read %d of %d compressed bytes: %v", len(compressed), resp.ContentLength, err)
	}
	// Inflate the first member only, then check the body is whole copies
	// of it: the total expansion follows without inflating a gigabyte.
	br := bytes.NewReader(compressed)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatalf("gzip header: %v", err)
	}
	zr.Multistream(false)
	first, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("inflate first member: %v", err)
	}
	memberLen := len(compressed) - br.Len()
	if len(first) == 0 || bytes.Count(first, []byte{0}) != len(first) {
		t.Fatalf("first member inflates to %d bytes, not all zeros", len(first))
	}
	copies := len(compressed) / memberLen
	if copies*memberLen != len(compressed) || !bytes.Equal(compressed[:memberLen], compressed[len(compressed)-memberLen:]) {
		t.Fatalf("body of %d bytes is not whole copies of a %d-byte member", len(compressed), memberLen)
	}
	if expanded := copies * len(first); expanded != GzipBombExpandedBytes {
		t.Errorf("bomb expands to %d bytes, want %d", expanded, GzipBombExpandedBytes)
	}
	if ratio := GzipBombExpandedBytes / len(compressed); ratio < 500 {
		t.Errorf("expansion ratio %d, want at least 500", ratio)
	}
}

func TestHostileReset(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	resp := hostileGet(t, srv, newClient(t, srv), PathReset, 30*time.Second)
	if resp.ContentLength != ResetDeclaredBytes {
		t.Errorf("Content-Length %d, want %d", resp.ContentLength, ResetDeclaredBytes)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil || n >= ResetDeclaredBytes {
		t.Fatalf("read %d bytes, err %v; want a short body and an error", n, err)
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("error %v, want ECONNRESET", err)
	}
}

func TestHostileIndexAndUnknown(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	body, resp := getFull(t, srv, srv.HostileURL("/"))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("hostile index: %d", resp.StatusCode)
	}
	for _, p := range hostilePaths {
		if !bytes.Contains(body, []byte(`href="`+p+`"`)) {
			t.Errorf("hostile index does not link %s", p)
		}
	}
	if _, resp := getFull(t, srv, srv.HostileURL("/nothing")); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown hostile path: %d, want 404", resp.StatusCode)
	}
	if _, resp := getFull(t, srv, srv.HostileURL("/robots.txt")); resp.StatusCode != http.StatusOK {
		t.Errorf("hostile robots.txt: %d, want 200", resp.StatusCode)
	}
	plain := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3})
	if u := plain.HostileURL(PathReset); u != "" {
		t.Errorf("HostileURL without Hostile = %q, want empty", u)
	}
}
