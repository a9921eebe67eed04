package testweb

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
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

func TestHostileRedirectLoop(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	client := newClient(t, srv)
	hops := []struct{ from, location, to string }{
		{PathRedirectLoop, "b", PathRedirectLoopB},
		{PathRedirectLoopB, "a", PathRedirectLoop},
	}
	for _, h := range hops {
		resp := hostileGet(t, srv, client, h.from, 10*time.Second)
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != h.location {
			t.Fatalf("%s: %d Location %q, want 302 %q", h.from, resp.StatusCode, resp.Header.Get("Location"), h.location)
		}
		next, err := resp.Request.URL.Parse(h.location)
		if err != nil || next.String() != srv.HostileURL(h.to) {
			t.Errorf("%s: Location resolves to %v (%v), want %s", h.from, next, err, srv.HostileURL(h.to))
		}
		if body, _ := io.ReadAll(resp.Body); bytes.Contains(body, []byte("href")) {
			t.Errorf("%s: redirect body links somewhere: %s", h.from, body)
		}
	}
	following := &http.Client{Transport: client.Transport, Timeout: 10 * time.Second}
	if _, err := following.Get(srv.HostileURL(PathRedirectLoop)); err == nil || !strings.Contains(err.Error(), "redirects") {
		t.Errorf("following the loop gave %v, want a too-many-redirects error", err)
	}
	if _, resp := getFull(t, srv, srv.HostileURL("/loop/c")); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/loop/c: %d, want 404", resp.StatusCode)
	}
}

// hrefs returns the href values of a page, in order.
func hrefs(body []byte) []string {
	var out []string
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllSubmatch(body, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

func TestHostileCalendarPages(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	days := func(month string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s/%02d", month, i+1)
		}
		return out
	}
	cases := []struct {
		path string
		want []string
	}{
		{PathCalendar, append([]string{"/calendar/2023/12", "/calendar/2024/02"}, days(PathCalendar, 31)...)},
		{"/calendar/2024/02", append([]string{"/calendar/2024/01", "/calendar/2024/03"}, days("/calendar/2024/02", 29)...)},
		{"/calendar/2023/02", append([]string{"/calendar/2023/01", "/calendar/2023/03"}, days("/calendar/2023/02", 28)...)},
		{"/calendar/1900/02", append([]string{"/calendar/1900/01", "/calendar/1900/03"}, days("/calendar/1900/02", 28)...)},
		{"/calendar/2000/02", append([]string{"/calendar/2000/01", "/calendar/2000/03"}, days("/calendar/2000/02", 29)...)},
		{"/calendar/9999/12", append([]string{"/calendar/9999/11", "/calendar/10000/01"}, days("/calendar/9999/12", 31)...)},
		{"/calendar/0001/01", append([]string{"/calendar/0001/02"}, days("/calendar/0001/01", 31)...)},
		{"/calendar/999999999/12", append([]string{"/calendar/999999999/11"}, days("/calendar/999999999/12", 31)...)},
		{"/calendar/2024/01/15", []string{PathCalendar, "/calendar/2024/01/14", "/calendar/2024/01/16"}},
		{"/calendar/2024/01/31", []string{PathCalendar, "/calendar/2024/01/30", "/calendar/2024/02/01"}},
		{"/calendar/2024/03/01", []string{"/calendar/2024/03", "/calendar/2024/02/29", "/calendar/2024/03/02"}},
		{"/calendar/2023/12/31", []string{"/calendar/2023/12", "/calendar/2023/12/30", "/calendar/2024/01/01"}},
		{"/calendar/0001/01/01", []string{"/calendar/0001/01", "/calendar/0001/01/02"}},
	}
	for _, c := range cases {
		body, resp := getFull(t, srv, srv.HostileURL(c.path))
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %s, want 200 text/html", c.path, resp.StatusCode, resp.Header.Get("Content-Type"))
			continue
		}
		if got := hrefs(body); !slices.Equal(got, c.want) {
			t.Errorf("%s links\n got %q\nwant %q", c.path, got, c.want)
		}
	}
}

func TestHostileCalendarHasNoEnd(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	// Follow "next month" for ten years: every page is new and links on.
	seen := map[string]bool{}
	page := PathCalendar
	for range 120 {
		if seen[page] {
			t.Fatalf("calendar came back to %s", page)
		}
		seen[page] = true
		body, resp := getFull(t, srv, srv.HostileURL(page))
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", page, resp.StatusCode)
		}
		links := hrefs(body)
		if len(links) < 30 {
			t.Fatalf("%s has %d links, want prev, next and the days", page, len(links))
		}
		// Every day link of the month resolves to a page.
		day := links[len(links)-1]
		if _, resp := getFull(t, srv, srv.HostileURL(day)); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s links %s, which gives %d", page, day, resp.StatusCode)
		}
		page = links[1]
	}
	if page != "/calendar/2034/01" {
		t.Errorf("after 120 months at %s, want /calendar/2034/01", page)
	}
}

func TestHostileCalendarBadPaths(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	for _, p := range []string{
		"/calendar/", "/calendar/2024", "/calendar/2024/", "/calendar/2024/01/", "/calendar/2024/13",
		"/calendar/2024/00", "/calendar/2024/1", "/calendar/24/01", "/calendar/02024/01", "/calendar/0000/01",
		"/calendar/1000000000/01", "/calendar/2024/02/30", "/calendar/2023/02/29", "/calendar/2024/01/00",
		"/calendar/2024/04/31", "/calendar/2024/01/1", "/calendar/abcd/01", "/calendar/+2024/01",
		"/calendar/2024/01/01/01", "/calendar/99999999999999999999/01",
	} {
		if _, resp := getFull(t, srv, srv.HostileURL(p)); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, resp.StatusCode)
		}
	}
}

func TestHostileHugeBodyHead(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	resp, err := newClient(t, srv).Head(srv.HostileURL(PathHugeBody))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != HugeBodyBytes || resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("HEAD: %d, length %d, type %q", resp.StatusCode, resp.ContentLength, resp.Header.Get("Content-Type"))
	}
}

func TestHostileHugeBody(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := sampleHeap(t)
	resp := hostileGet(t, srv, newClient(t, srv), PathHugeBody, 5*time.Minute)
	if resp.StatusCode != http.StatusOK || resp.ContentLength != HugeBodyBytes || resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("%d, length %d, type %q; want 200, %d, application/octet-stream",
			resp.StatusCode, resp.ContentLength, resp.Header.Get("Content-Type"), HugeBodyBytes)
	}
	head := make([]byte, 3*HugeBodyPeriod)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	if bytes.Count(head, []byte{0}) > len(head)/64 {
		t.Errorf("body is mostly zeros")
	}
	if !bytes.Equal(head[:HugeBodyPeriod], head[HugeBodyPeriod:2*HugeBodyPeriod]) || bytes.Equal(head[:HugeBodyPeriod-1], head[1:HugeBodyPeriod]) {
		t.Errorf("body does not repeat with period %d", HugeBodyPeriod)
	}
	h := sha1.New()
	h.Write(head)
	n, err := io.Copy(h, resp.Body)
	if err != nil || n+int64(len(head)) != HugeBodyBytes {
		t.Fatalf("read %d bytes: %v", n+int64(len(head)), err)
	}
	if got := "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil)); got != HugeBodySHA1 {
		t.Errorf("digest %s, want %s", got, HugeBodySHA1)
	}
	// Server and client share this heap: a streaming server adds a
	// buffer or two, one that held the body would add a gigabyte.
	const limit = 64 << 20
	if grew := int64(peak()) - int64(before.HeapAlloc); grew > limit {
		t.Errorf("heap grew by %d bytes while serving 1 GiB, limit %d", grew, limit)
	}
}

func TestHugeBodyReaderMatchesDigest(t *testing.T) {
	h := sha1.New()
	n, err := io.CopyBuffer(h, HugeBodyReader(), make([]byte, 100_003)) // odd size: phase must carry over
	if err != nil || n != HugeBodyBytes {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	if got := "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil)); got != HugeBodySHA1 {
		t.Errorf("digest %s, want %s", got, HugeBodySHA1)
	}
}

// sampleHeap records the peak HeapAlloc until the returned function is
// called, which stops sampling and returns the peak.
func sampleHeap(t *testing.T) func() uint64 {
	t.Helper()
	stop, done := make(chan struct{}), make(chan struct{})
	var peak uint64
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	finish := func() uint64 {
		once.Do(func() { close(stop); <-done })
		return peak
	}
	t.Cleanup(func() { finish() })
	return finish
}

// The growing query links its own path with one parameter more; the
// challenge is always the interstitial. Neither is linked from the index.
func TestHostileGrowingQueryAndChallenge(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3, Hostile: true})
	for _, tc := range []struct{ query, next string }{
		{"p1=1", "/grow?p1=1&amp;p2=2"},
		{"p1=1&p2=2", "/grow?p1=1&amp;p2=2&amp;p3=3"},
		{"", "/grow?p1=1"},
	} {
		body, resp := getFull(t, srv, srv.HostileURL("/grow?"+tc.query))
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`href="`+tc.next+`"`)) {
			t.Errorf("/grow?%s: %d %q, want a link to %s", tc.query, resp.StatusCode, body, tc.next)
		}
	}
	body, resp := getFull(t, srv, srv.HostileURL(PathChallenge))
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Cf-Mitigated") != "challenge" || !bytes.Contains(body, []byte("Just a moment")) {
		t.Errorf("challenge: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	index, _ := getFull(t, srv, srv.HostileURL("/"))
	if bytes.Contains(index, []byte("/grow")) || bytes.Contains(index, []byte(PathChallenge)) {
		t.Errorf("the index links the growing query or the challenge:\n%s", index)
	}
}
