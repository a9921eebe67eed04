package standalone

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

// With render.handOff, standalone renders the seed in its own Chromium:
// the worker hands it off (-5002), the renderer captures it, its
// screenshot and DOM, and the link only its script makes is crawled by the
// worker as the page's outlink (hop L, via the page). The run ends idle
// only once the render is done.
func TestStandaloneRendersHandedOffPages(t *testing.T) {
	if _, ok := chromiumPath(""); !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: no Chromium (scripts/install-test-deps.sh installs it)")
		}
		t.Skip("no Chromium installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body><div id="x"></div><script>
var a=document.createElement('a');a.href='/js-only';a.textContent='j';document.getElementById('x').appendChild(a);
</script></body></html>`)
		case "/js-only":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body>made by script</body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	p := profile.Default()
	p.Crawl.Name = "test"
	p.Politeness = profile.Politeness{}
	p.Fetch.AllowPrivateAddresses = true
	p.Render.HandOff = true
	p.Render.ScrollSteps = 0
	dir := t.TempDir()
	runSphinxCrawl(t, Config{DataDir: dir, Seeds: []string{srv.URL + "/"}, Render: renderAuto, RenderTabs: 1}, p)
	lines := crawlLogLines(t, dir)
	want := map[string]func(l []string) bool{
		"-5002 " + srv.URL + "/":          func(l []string) bool { return l[1] == "-5002" },
		"200 " + srv.URL + "/":            func(l []string) bool { return l[1] == "200" && l[4] == "-" },
		"200 screenshot:" + srv.URL + "/": func(l []string) bool { return l[1] == "200" && l[6] == "image/png" },
		"200 onreadydom:" + srv.URL + "/": func(l []string) bool { return l[1] == "200" },
		"200 " + srv.URL + "/js-only":     func(l []string) bool { return l[1] == "200" && l[4] == "L" && l[5] == srv.URL+"/" },
	}
	for name, ok := range want {
		url := name[strings.Index(name, " ")+1:]
		found := false
		for _, l := range lines {
			if l[3] == url && ok(l) {
				found = true
			}
		}
		if !found {
			t.Errorf("no crawl.log line %s; lines:\n%v", name, lines)
		}
	}
}

// crawlLogLines reads every crawl.log under dir/logs as fields.
func crawlLogLines(t *testing.T, dir string) [][]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "logs", "*", "crawl.log"))
	var out [][]string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if fs := strings.Fields(sc.Text()); len(fs) >= 11 {
				out = append(out, fs)
			}
		}
		_ = fh.Close()
	}
	return out
}
