package renderer

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/clamav/clamdtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// Everything the browser loads is scanned by a real clamd: an infected
// script goes to the renderer's VIRAL WARCs with clamd's reply on its
// event, and the browser never gets it. An embed whose payload equals the
// last capture in the recently-crawled DB is written as a revisit.
func TestRenderScansAndRevisits(t *testing.T) {
	clamd := clamdtest.Start(t, 1<<20)
	css := "h1{color:#036}"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><head><link rel="stylesheet" href="/s.css"></head><body><script src="/bad.js"></script></body></html>`)
		case "/s.css":
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, css)
		case "/bad.js":
			w.Header().Set("Content-Type", "application/javascript")
			fmt.Fprint(w, "// "+clamdtest.EICAR+"\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	e := newEnv(t)
	db, err := recentdb.New(e.rdb, recentdb.Options{Crawl: "fc", Stream: "npld"})
	if err != nil {
		t.Fatal(err)
	}
	// An earlier capture of the stylesheet, as the cdxwriter records it.
	ts := "20260101000000000+12"
	digest := sha1Digest([]byte(css))
	file, off, length := "EARLIER.warc.gz", int64(1234), int64(99)
	u, _, err := recentdb.FromCrawled(messages.Crawled{Timestamp: "2026-01-01T00:00:00.000Z", URL: srv.URL + "/s.css",
		StatusCode: 200, ContentDigest: &digest, StartTimePlusDuration: ts, WarcFilename: &file, WarcOffset: &off, WarcLength: &length,
		ExtraInfo: map[string]any{recentdb.ExtraStream: "npld"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Put(context.Background(), []recentdb.Update{u}); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Crawl: "fc", Stream: "npld", ID: "r0", DataDir: e.dir, Tabs: 1, PageTimeout: 20e9, Attempts: 1, NoSandbox: true,
		ClamdAddr: "tcp://" + clamd.Addr}
	_, stop := e.start(t, cfg, testProfile())
	e.handOff(t, srv.URL+"/")
	evs := events(t, e.readTopic(t, "fc.crawled", hasURL("onreadydom:"+srv.URL+"/")))
	stop()
	bad := evs[srv.URL+"/bad.js"]
	if !strings.Contains(bad.Annotations, clamdtest.EICARSignature) || bad.WarcFilename == nil ||
		!strings.Contains(*bad.WarcFilename, "-WEBRENDER-VIRAL-") {
		t.Errorf("infected script: annotations %q, file %v", bad.Annotations, bad.WarcFilename)
	}
	if v, _ := filepath.Glob(filepath.Join(e.dir, "warcs-viral", "fc-npld-render", "*.warc.gz")); len(v) == 0 {
		t.Error("no viral WARC written")
	}
	if ev := evs[srv.URL+"/s.css"]; !strings.Contains(ev.Annotations, "duplicate:digest") {
		t.Errorf("stylesheet with the earlier payload: annotations %q, want a revisit", ev.Annotations)
	}
	if strings.Contains(string(mustRead(t, filepath.Join(e.dir, "warcs", "fc-npld-render"))), "EICAR-STANDARD") {
		t.Error("the infected body is in the normal WARCs")
	}
}

func sha1Digest(b []byte) string { return digestOf(b) }

func gunzipAll(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mustRead concatenates the decompressed WARCs of dir.
func mustRead(t *testing.T, dir string) []byte {
	t.Helper()
	var out []byte
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, gunzipAll(t, b)...)
	}
	return out
}
