package standalone

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A crawl launched with ignoreRobots loses its Redis (the embedded one's
// data removed between runs) while a page robots.txt disallows is still
// queued. The next run rebuilds the frontier from the journal, and the
// launch's sheets with it: the page is fetched, robots still ignored for
// that target, though the run launches nothing.
func TestStandaloneRebuildKeepsLaunchSheets(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/":
			_, _ = fmt.Fprint(w, `<html><body><a href="/a">a</a> <a href="/private/x">x</a></body></html>`)
		case "/a", "/private/x":
			_, _ = fmt.Fprint(w, `<html><body>leaf</body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	_, port, _ := net.SplitHostPort(site.Listener.Addr().String())
	root := "http://robots.test:" + port + "/"
	hosts := loopbackHosts{"robots.test"}
	feed := filepath.Join(t.TempDir(), "feed.jsonl")
	line := fmt.Sprintf(`{"id": 901, "title": "robots ignored", "seeds": [%q], "depth": "CAPPED", "scope": "root", "ignoreRobotsTxt": true, `+
		`"schedules": [{"startDate": "2024-01-01 09:00:00", "endDate": "", "frequency": "DAILY"}]}`+"\n", root)
	if err := os.WriteFile(feed, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	p := archivalProfile()
	if err := p.Set("sheets.include", "[ukwa]"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	limited := p
	limited.Limits.MaxDocumentsDownload = 1
	first := runResolved(t, Config{DataDir: dir, Feeds: []string{feed}}, hosts, limited)
	private := root + "private/x"
	if got := siteCaptures(t, first, root); !slices.Contains(got, root) || slices.Contains(got, private) || first.Queued == 0 {
		t.Fatalf("first run captured %v with %d queued: want the seed only, %s still queued", got, first.Queued, private)
	}

	// Redis is lost: only the Kafka journal remains.
	if err := os.RemoveAll(filepath.Join(dir, "redis")); err != nil {
		t.Fatal(err)
	}
	second := runResolved(t, Config{DataDir: dir}, hosts, p)
	if got := siteCaptures(t, second, root); !slices.Contains(got, private) || !slices.Contains(got, root+"a") {
		t.Fatalf("after the rebuild captured %v (by status %v): want %s fetched, robots still ignored", got, second.ByStatus, private)
	}
	if n := second.ByStatus[-9998]; n != 0 {
		t.Fatalf("%d URIs precluded by robots.txt after the rebuild", n)
	}
}
