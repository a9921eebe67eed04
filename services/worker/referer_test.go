package worker

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/nlnwa/gowarc"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// fcRequest returns the HTTP request the WARC request record of ev's URI
// holds, from the WARC file that holds ev's response.
func fcRequest(t *testing.T, dir string, ev messages.Crawled) *http.Request {
	t.Helper()
	fcRecord(t, dir, ev) // the response is where the event says
	r, err := warcwriter.OpenReader(filepath.Join(dir, "warcs", "fc-npld", *ev.WarcFilename), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	for {
		rec, _, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s: no request record in %s", ev.URL, *ev.WarcFilename)
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type() != gowarc.Request || rec.WarcHeader().Get(gowarc.WarcTargetURI) != ev.URL {
			_ = rec.Close()
			continue
		}
		rd, err := rec.Block().RawBytes()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(rd)
		_ = rec.Close()
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatalf("%s: request record does not parse: %v\n%s", ev.URL, err, raw)
		}
		return req
	}
}

// Request records carry Referer for every URI with a via, as Heritrix's
// FetchHTTP sends it by default: not for the seed nor for robots.txt (a
// prerequisite), and none at all with fetch.sendReferer off.
// fetch.acceptCompression adds Accept-Encoding; the gzip page is archived
// as served and its links are still followed (extraction decodes it).
func TestRequestRecordHeaders(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write([]byte(fcPage("", "/deep")))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	gzPage := gz.Bytes()
	sum := sha1.Sum(gzPage)
	gzDigest := "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			fcHTML(w, fcPage("", "/page"))
		case "/page":
			if r.Header.Get("Accept-Encoding") == "" {
				fcHTML(w, fcPage("", "/deep"))
				return
			}
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gzPage)
		default:
			fcHTML(w, fcPage(""))
		}
	})
	cases := []struct {
		name                  string
		host                  string
		sendReferer, compress bool
	}{
		{"heritrix defaults", "defaults.test", true, false},
		{"no referer", "noref.test", false, false},
		{"accept compression", "gzip.test", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t) // a crawl of its own: same topics, new Redis and broker
			p := fcProfile()
			p.Fetch.SendReferer, p.Fetch.AcceptCompression = tc.sendReferer, tc.compress
			dir := t.TempDir()
			seed, page, deep, robots := site.url(tc.host, "/"), site.url(tc.host, "/page"), site.url(tc.host, "/deep"), site.url(tc.host, "/robots.txt")
			events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts(tc.host), seeds: []string{seed}, minURIs: 3, dir: dir})
			wantReferer := map[string]string{seed: "", robots: "", page: seed, deep: page}
			for url, want := range wantReferer {
				if !tc.sendReferer {
					want = ""
				}
				req := fcRequest(t, dir, fcOne(t, events, url))
				if got := req.Header.Get("Referer"); got != want {
					t.Errorf("%s: Referer %q, want %q", url, got, want)
				}
				wantAE := ""
				if tc.compress {
					wantAE = "gzip,deflate"
				}
				if got := req.Header.Get("Accept-Encoding"); got != wantAE {
					t.Errorf("%s: Accept-Encoding %q, want %q", url, got, wantAE)
				}
			}
			if tc.compress {
				// The payload is the entity as served: its digest is the
				// gzip bytes', as WARC defines the payload.
				h, _, _ := fcRecord(t, dir, fcOne(t, events, page))
				if got := h.Get(gowarc.WarcPayloadDigest); got != gzDigest {
					t.Errorf("%s: payload digest %s, want the gzip entity's %s", page, got, gzDigest)
				}
				if !warcHolds(t, dir, []byte("Content-Encoding: gzip")) {
					t.Errorf("%s: the gzip response was not archived as served", page)
				}
			}
		})
	}
}

// warcHolds reports whether any WARC under dir contains p once
// decompressed (records are gzip members).
func warcHolds(t *testing.T, dir string, p []byte) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "warcs", "fc-npld", "*.warc.gz"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		all, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(all, p) {
			return true
		}
	}
	return false
}
