package docsite

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var anyHref = regexp.MustCompile(`href="([^"]*)"`)

// crawlHTTP fetches everything linked from the index over HTTP and
// returns the fetched URLs, failing on any non-200.
func crawlHTTP(t *testing.T, base string) []string {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	seen := map[string]bool{base + "/": true}
	queue := []string{base + "/"}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Encoding", "gzip") // must be ignored: files go out as they are
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "" {
			t.Fatalf("GET %s: %d, encoding %q, %v", u, resp.StatusCode, resp.Header.Get("Content-Encoding"), err)
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/") {
			t.Errorf("GET %s: Content-Type %q", u, resp.Header.Get("Content-Type"))
		}
		from, _ := url.Parse(u)
		for _, m := range anyHref.FindAllSubmatch(body, -1) {
			to, err := from.Parse(string(m[1]))
			if err != nil {
				t.Fatalf("%s links %q: %v", u, m[1], err)
			}
			if !seen[to.String()] {
				seen[to.String()] = true
				queue = append(queue, to.String())
			}
		}
	}
	out := make([]string, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

func TestServeEveryLinkResolves(t *testing.T) {
	dir := generate(t, 40, 9)
	srv, err := Serve(context.Background(), dir, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	got := crawlHTTP(t, srv.URL())
	want, err := Reachable(dir, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("HTTP crawl fetched %d URLs, Reachable says %d:\n got %q\nwant %q", len(got), len(want), got, want)
	}
	if len(want) != 42 {
		t.Errorf("%d URLs reachable, want 40 pages, the index and the style sheet", len(want))
	}
	if err := srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := http.Get(srv.URL() + "/"); err == nil {
		t.Error("GET after Close succeeded")
	}
}

func TestServeStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := Serve(ctx, generate(t, 2, 1), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(srv.URL() + "/")
		if err != nil {
			break
		}
		_ = resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("still serving 10s after the context ended")
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
}

func TestServeBadInput(t *testing.T) {
	cases := []struct{ dir, addr, want string }{
		{t.TempDir(), "127.0.0.1:0", "not a generated site"},
		{generate(t, 1, 1), "127.0.0.1:99999", "listen 127.0.0.1:99999"},
		{generate(t, 1, 1), "no-port", "listen no-port"},
	}
	for _, c := range cases {
		srv, err := Serve(context.Background(), c.dir, c.addr)
		if err == nil {
			_ = srv.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Serve(%s) = %v, want an error containing %q", c.addr, err, c.want)
		}
	}
}
