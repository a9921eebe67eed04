package testweb

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// snapshot fetches every URL and returns body digests and validators keyed
// by port-independent URL.
func snapshot(t *testing.T, srv *Server, urls []string) map[string]string {
	t.Helper()
	client := newClient(t, srv)
	out := make(map[string]string, len(urls))
	for _, u := range urls {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatalf("read %s: %v", u, err)
		}
		if strings.HasSuffix(u, ".gz") {
			body = gunzip(t, body)
		}
		sum := sha256.Sum256([]byte(portless(srv, string(body))))
		out[portless(srv, u)] = strings.Join([]string{
			strconv.Itoa(resp.StatusCode), resp.Header.Get("Content-Type"), resp.Header.Get("ETag"),
			resp.Header.Get("Last-Modified"), portless(srv, resp.Header.Get("Location")), string(sum[:]),
		}, "|")
	}
	return out
}

// gunzip decompresses a gzipped body.
func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

// portless replaces every host authority of srv in s by name:PORT, so two
// servers of the same site compare equal.
func portless(srv *Server, s string) string {
	for i := range srv.vhosts {
		h := i
		if i == srv.site.cfg.Hosts {
			h = hostHostile
		}
		s = strings.ReplaceAll(s, srv.authority(h), srv.vhosts[i].name+":PORT")
	}
	return s
}

func TestSameSeedSameBytes(t *testing.T) {
	a := startSite(t, smallSite(42))
	b := startSite(t, smallSite(42))
	urlsA := a.Reachable(ReachOptions{FollowSitemaps: true})
	urlsB := b.Reachable(ReachOptions{FollowSitemaps: true})
	if len(urlsA) < 100 || len(urlsA) != len(urlsB) {
		t.Fatalf("Reachable sizes %d and %d", len(urlsA), len(urlsB))
	}
	snapA, snapB := snapshot(t, a, urlsA), snapshot(t, b, urlsB)
	keys := make([]string, 0, len(snapA))
	for k := range snapA {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if snapA[k] != snapB[k] {
			t.Errorf("%s differs between two servers of seed 42:\n  %q\n  %q", k, snapA[k], snapB[k])
		}
	}
	if len(snapB) != len(snapA) {
		t.Errorf("snapshots have %d and %d URLs", len(snapA), len(snapB))
	}
	// Bodies embed the port: compare one page byte for byte after
	// normalising it.
	pa, pb := getBody(t, a, a.Seeds()[0]), getBody(t, b, b.Seeds()[0])
	if portless(a, pa) != portless(b, pb) {
		t.Errorf("home pages differ beyond the port:\n%s\n---\n%s", pa, pb)
	}
}

func TestDifferentSeedDifferentSite(t *testing.T) {
	a := startSite(t, smallSite(1))
	b := startSite(t, smallSite(2))
	pa, pb := getBody(t, a, a.Seeds()[0]), getBody(t, b, b.Seeds()[0])
	if portless(a, pa) == portless(b, pb) {
		t.Error("seeds 1 and 2 serve the same home page")
	}
	ra, rb := a.Reachable(ReachOptions{}), b.Reachable(ReachOptions{})
	for i := range ra {
		ra[i] = portless(a, ra[i])
	}
	for i := range rb {
		rb[i] = portless(b, rb[i])
	}
	if slices.Equal(ra, rb) {
		t.Error("seeds 1 and 2 have the same link graph")
	}
}

func TestLargeFileIsDeterministicAndStreamed(t *testing.T) {
	cfg := Config{Seed: 9, Hosts: 2, PagesPerHost: 5} // default 3 MiB
	a, b := startSite(t, cfg), startSite(t, cfg)
	for h := range 2 {
		ua := target{h, pathLarge}.url(a.authority)
		ub := target{h, pathLarge}.url(b.authority)
		ba, ra := getFull(t, a, ua)
		bb, _ := getFull(t, b, ub)
		if len(ba) != DefaultLargeFileBytes || !bytes.Equal(ba, bb) {
			t.Errorf("host %d: large file %d bytes (want %d), equal across servers: %v", h, len(ba), DefaultLargeFileBytes, bytes.Equal(ba, bb))
		}
		if chunked := slices.Contains(ra.TransferEncoding, "chunked"); chunked != (h%2 == 1) {
			t.Errorf("host %d: chunked = %v, want %v", h, chunked, h%2 == 1)
		}
		if h == 0 && ra.ContentLength != DefaultLargeFileBytes {
			t.Errorf("host 0: Content-Length %d", ra.ContentLength)
		}
	}
	ba, _ := getFull(t, a, target{0, pathLarge}.url(a.authority))
	bb, _ := getFull(t, a, target{1, pathLarge}.url(a.authority))
	if bytes.Equal(ba[:1024], bb[:1024]) {
		t.Error("hosts 0 and 1 serve the same large-file bytes")
	}
}

// getBody fetches a URL and returns its body.
func getBody(t *testing.T, srv *Server, u string) string {
	t.Helper()
	b, _ := getFull(t, srv, u)
	return string(b)
}

// getFull fetches a URL and returns the body and response.
func getFull(t *testing.T, srv *Server, u string) ([]byte, *http.Response) {
	t.Helper()
	resp, err := newClient(t, srv).Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", u, err)
	}
	return b, resp
}
