package warciojs

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nlnwa/gowarc"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/replay"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// loopback resolves every name to 127.0.0.1, where the test sites listen.
type loopback struct{}

func (loopback) LookupIPAddr(context.Context, string) ([]net.IPAddr, error) {
	return []net.IPAddr{{IP: net.IPv4(127, 0, 0, 1)}}, nil
}

// h2Pages are fetched from both sites: a page, a body of many frames
// (chunked over HTTP/1.1), a gzip content coding and a redirect.
var h2Pages = []string{"/", "/big.bin", "/style.css", "/old"}

func h2SiteHandler() http.Handler {
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(bytes.Repeat([]byte("body { color: black }\n"), 200))
	_ = zw.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<html><body><a href=\"/big.bin\">big</a></body></html>\n")
	})
	mux.HandleFunc("/big.bin", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(big)
	})
	mux.HandleFunc("/style.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(gz.Bytes())
	})
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/", http.StatusMovedPermanently)
	})
	return mux
}

// startTLSSite serves the pages over TLS, offering h2 by ALPN or not, and
// returns the site's base URL under the given host name.
func startTLSSite(t *testing.T, host string, h2 bool) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(h2SiteHandler())
	srv.EnableHTTP2 = h2
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "https://" + host + ":" + port
}

// capturedSite is what TestH2CaptureReadByOutsideReaders wrote.
type capturedSite struct {
	file    string
	digests map[string]string // URL -> payload digest
	status  map[string]int    // URL -> HTTP status
	times   map[string]string // URL -> 14-digit capture time
}

// captureBoth fetches the pages from an h2 site and an h1-only site with
// the crawler's fetcher and writes them as the worker does, into one file.
func captureBoth(t *testing.T, h2Site, h1Site string) capturedSite {
	t.Helper()
	dir := t.TempDir()
	f := fetch.New(fetch.Config{AllowPrivate: true, HTTP2: true, KeepAlive: true, SpoolDir: t.TempDir(),
		UserAgent: "trawler-test/1.0"}, loopback{})
	t.Cleanup(func() { _ = f.Close() })
	wr, err := warcwriter.New(warcwriter.Config{Dir: dir, Prefix: "H2", Hostname: "test-host", CrawlName: "h2",
		Operator: "Trawler tests", RobotsPolicy: "obey", UserAgent: "trawler-test/1.0", Version: warcwriter.Version11})
	if err != nil {
		t.Fatal(err)
	}
	site := capturedSite{digests: map[string]string{}, status: map[string]int{}, times: map[string]string{}}
	for _, base := range []string{h2Site, h1Site} {
		for _, p := range h2Pages {
			u := base + p
			resp, err := f.Fetch(context.Background(), fetch.Request{URL: u})
			if err != nil {
				t.Fatalf("fetch %s: %v", u, err)
			}
			_, err = wr.WriteCapture(context.Background(), warcwriter.Capture{
				URL: u, Date: resp.Start, IP: resp.IP.String(), Request: resp.RequestBytes,
				Response: resp.Raw.NewReader(), ResponseLength: resp.Raw.Size(),
				PayloadDigest: resp.PayloadDigest, Protocols: resp.Protocols,
			})
			_ = resp.Close()
			if err != nil {
				t.Fatalf("write %s: %v", u, err)
			}
			site.digests[u], site.status[u], site.times[u] = resp.PayloadDigest, resp.StatusCode, resp.Start.UTC().Format("20060102150405")
		}
	}
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) != 1 {
		t.Fatalf("want one WARC file, have %v", files)
	}
	site.file = files[0]
	return site
}

// The acceptance test of issue 38, point 1: an HTTP/2 capture of a Go
// https server with h2 on is read by gowarc, by Trawler's replay (pywb's rules),
// by `trawler cdx index` and by warcio.js; its request and response
// records carry WARC-Protocol h2 and tls/1.3 in HTTP/1.1 text form; and
// the same site over HTTP/1.1 gives the same payload digests.
func TestH2CaptureReadByOutsideReaders(t *testing.T) {
	h2Site, h1Site := startTLSSite(t, "h2.example.test", true), startTLSSite(t, "h1.example.test", false)
	site := captureBoth(t, h2Site, h1Site)
	for _, p := range h2Pages {
		if d2, d1 := site.digests[h2Site+p], site.digests[h1Site+p]; d2 != d1 {
			t.Errorf("%s: payload digest %s over h2, %s over HTTP/1.1", p, d2, d1)
		}
	}
	checkGowarc(t, site.file, h2Site)
	checkReplay(t, site, h2Site)

	w := findWarcio(t)
	rep := w.run(t, []string{site.file})
	rep.writeTo(t)
	recs := checkRecords(t, rep)
	if n := compareCDX(t, rep); n != 2*len(h2Pages) {
		t.Errorf("%d index lines compared, want %d", n, 2*len(h2Pages))
	}
	checked := 0
	for _, r := range recs {
		if r.Type != "request" && r.Type != "response" {
			continue
		}
		want := []string{"http/1.1", "tls/1.3"}
		if strings.HasPrefix(r.URI, h2Site) {
			want = []string{"h2", "tls/1.3"}
		}
		if !slices.Equal(r.Protocols, want) {
			t.Errorf("%s: warcio.js reads WARC-Protocol %q, want %q", r, r.Protocols, want)
		}
		if r.Type == "response" && (r.HTTPProto != "HTTP/1.1" || r.PayloadCheck != "checked") {
			t.Errorf("%s: HTTP version %q, payload digest %s", r, r.HTTPProto, r.PayloadCheck)
		}
		checked++
	}
	if checked != 4*len(h2Pages) {
		t.Errorf("%d request and response records, want %d", checked, 4*len(h2Pages))
	}
}

// checkGowarc reads the file with gowarc, HTTP blocks parsed: every h2
// record has both WARC-Protocol values and an HTTP/1.1 block whose
// payload has the recorded digest.
func checkGowarc(t *testing.T, path, h2Site string) {
	t.Helper()
	r, err := warcwriter.OpenReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	n := 0
	for {
		rec, off, v, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("gowarc at %d: %v", off, err)
		}
		uri := rec.WarcHeader().Get(gowarc.WarcTargetURI)
		if !strings.HasPrefix(uri, h2Site) {
			// gowarc digests a chunked HTTP/1.1 body with its framing, so
			// it disagrees with WARC 1.1's payload digest there
			// (pkg/warcwriter); only the h2 records are judged here.
			_ = rec.Close()
			continue
		}
		if !v.Valid() {
			t.Errorf("gowarc at %d: %s", off, v)
		}
		n++
		if got := rec.WarcHeader().GetAll("WARC-Protocol"); !slices.Equal(got, []string{"h2", "tls/1.3"}) {
			t.Errorf("gowarc %s %s: WARC-Protocol %q", rec.Type(), uri, got)
		}
		if rb, ok := rec.Block().(gowarc.HttpResponseBlock); ok {
			checkGowarcPayload(t, rb, rec.WarcHeader().Get(gowarc.WarcPayloadDigest), uri)
		}
		_ = rec.Close()
	}
	if n != 2*len(h2Pages) {
		t.Errorf("gowarc read %d h2 records, want %d", n, 2*len(h2Pages))
	}
}

func checkGowarcPayload(t *testing.T, rb gowarc.HttpResponseBlock, want, uri string) {
	t.Helper()
	if rb.HttpStatusLine() == "" || !strings.HasPrefix(string(rb.ProtocolHeaderBytes()), "HTTP/1.1 ") {
		t.Errorf("gowarc %s: HTTP header %.60q", uri, rb.ProtocolHeaderBytes())
	}
	pr, err := rb.PayloadBytes()
	if err != nil {
		t.Fatal(err)
	}
	h := sha1.New()
	if _, err := io.Copy(h, pr); err != nil {
		t.Fatal(err)
	}
	if got := "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil)); got != want {
		t.Errorf("gowarc %s: payload digest %s, WARC-Payload-Digest %s", uri, got, want)
	}
}

// checkReplay indexes the file as `trawler cdx index` does and replays
// each h2 capture at its time with pkg/replay (pywb's rules): the status
// and the payload come back as captured.
func checkReplay(t *testing.T, site capturedSite, h2Site string) {
	t.Helper()
	ix, err := cdxindex.Open(t.TempDir(), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	var lines []cdx.Line
	if _, err := warcindex.IndexFile(context.Background(), site.file, func(l cdx.Line) error {
		lines = append(lines, l)
		return nil
	}, func(e *warcindex.RecordError) { t.Errorf("index: %v", e) }); err != nil {
		t.Fatal(err)
	}
	if err := ix.Put(context.Background(), "h2", lines); err != nil {
		t.Fatal(err)
	}
	r, err := replay.New(replay.Options{Index: replay.NewCDXIndex(ix, "h2"), Records: replay.NewDirs(filepath.Dir(site.file))})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range h2Pages {
		u := h2Site + p
		resp, err := r.Resolve(context.Background(), u, site.times[u])
		if err != nil {
			t.Fatalf("replay %s: %v", u, err)
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		sum := sha1.Sum(body)
		got := "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
		if got != site.digests[u] || resp.Payload.TargetURI != u || resp.StatusCode != site.status[u] {
			t.Errorf("replay %s: status %d from %s, payload digest %s; captured %d, %s", u, resp.StatusCode, resp.Payload.TargetURI,
				got, site.status[u], site.digests[u])
		}
	}
}
