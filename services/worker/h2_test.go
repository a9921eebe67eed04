package worker

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nlnwa/gowarc"
)

// A worker crawling an https site that offers HTTP/2 fetches it over h2
// (fetch.http2, on by default), follows the links of the h2 response and
// writes WARC-Protocol h2 and tls/1.3 on its records; with fetch.http2
// off the same site is fetched over HTTP/1.x and says so.
func TestH2CrawlWritesWARCProtocol(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fcHTML(w, fcPage("", "/b"))
		case "/b":
			fcHTML(w, fcPage(""))
		default:
			http.NotFound(w, r)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	seed := "https://site.test:" + port + "/"
	for _, tc := range []struct {
		name  string
		http2 bool
		want  []string
	}{
		{"http2 on", true, []string{"h2", "tls/1.3"}},
		{"http2 off", false, []string{"http/1.0", "tls/1.3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			p := fcProfile()
			p.Fetch.HTTP2 = tc.http2
			dir := t.TempDir()
			events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("site.test"), seeds: []string{seed}, minURIs: 2, dir: dir})
			checkRecoveredH2(t, dir, tc.http2)
			for _, u := range []string{seed, seed + "b"} {
				ev := fcOne(t, events, u)
				if ev.StatusCode != 200 {
					t.Fatalf("%s: status %d", u, ev.StatusCode)
				}
				if fcHasNote(ev, "h2") != tc.http2 {
					t.Errorf("%s: annotations %q, h2 expected %v", u, ev.Annotations, tc.http2)
				}
				h, typ, _ := fcRecord(t, dir, ev)
				if got := h.GetAll("WARC-Protocol"); typ != gowarc.Response || !slices.Equal(got, tc.want) {
					t.Errorf("%s: %s record with WARC-Protocol %q, want %q", u, typ, got, tc.want)
				}
			}
		})
	}
}

// checkRecoveredH2 reads the crawl's WARCs as the crawl.log recovery
// does: a capture made over HTTP/2 gets its h2 annotation back from
// WARC-Protocol.
func checkRecoveredH2(t *testing.T, dir string, h2 bool) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "warcs", "fc-npld", "*.warc.gz"))
	n := 0
	for _, f := range files {
		caps, err := readCaptures(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range caps {
			if !c.http {
				continue
			}
			n++
			if slices.Contains(c.notes, "h2") != h2 {
				t.Errorf("recovered capture %s: notes %q, h2 expected %v", c.url, c.notes, h2)
			}
		}
	}
	if n < 3 { // robots.txt, the seed and /b
		t.Errorf("recovery read %d HTTP captures from %v", n, files)
	}
}
