package renderer

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/qa"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
)

// A page one renderer captured, replayed by another renderer's QA mode
// from the archive alone (the crawl's CDX API and the WARC files), scores
// complete: its resources answered, its screenshot and text matching
// those taken at capture time. Bad requests are refused with why.
func TestRendererQAMode(t *testing.T) {
	srv, home, p := startTestweb(t)
	e := newEnv(t)
	_, stop := e.startWith(t, Config{}, p, srv.Resolver())
	page := home + testweb.PathScripted
	e.handOff(t, page)
	evs := events(t, e.readTopic(t, "fc.crawled", hasURL("onreadydom:"+page)))
	ts := evs[page].StartTimePlusDuration[:14]
	stop() // the WARC files are closed
	_ = srv.Close()

	// The crawl's index of the renderer's WARCs, served as OutbackCDX.
	warcDir := Config{Crawl: "fc", Stream: "npld", DataDir: e.dir}.WARCDir()
	files, _ := filepath.Glob(filepath.Join(warcDir, "*.warc.gz"))
	var lines []cdx.Line
	for _, f := range files {
		if _, err := warcindex.IndexFile(context.Background(), f, func(l cdx.Line) error {
			lines = append(lines, l)
			return nil
		}, func(e *warcindex.RecordError) { t.Errorf("index %s: %v", f, e) }); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := cdxindex.Open(t.TempDir(), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	if err := ix.Put(context.Background(), "fc", lines); err != nil {
		t.Fatal(err)
	}
	cdxAPI := httptest.NewServer(ix.Handler(cdxindex.HandlerOptions{ReadOnly: true}))
	t.Cleanup(cdxAPI.Close)

	cfg := Config{Crawl: "fc", Stream: "npld", ID: "r1", DataDir: t.TempDir(), Tabs: 2, PageTimeout: 30 * time.Second, Attempts: 1,
		NoSandbox: true, QA: QAConfig{CDXURL: cdxAPI.URL, WARCDirs: []string{warcDir}}}
	r2, stop2 := e.startWith(t, cfg, p, nil)
	defer stop2()
	api := httptest.NewServer(r2.APIHandler("tok"))
	t.Cleanup(api.Close)
	get := func(query string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, api.URL+"/qa?"+query, nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, bad := range []string{"url=ftp://x/", "url=", "url=" + url.QueryEscape(page) + "&timestamp=2025x"} {
		if resp := get(bad); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /qa?%s: %d, want 400", bad, resp.StatusCode)
		}
	}
	resp := get("url=" + url.QueryEscape(page) + "&timestamp=" + ts)
	defer func() { _ = resp.Body.Close() }()
	var res qa.PageResult
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /qa: %d %v", resp.StatusCode, err)
	}
	t.Logf("QA of %s: %s %.3f, outcomes %v, missing %v, error %q, notes %v", page, res.Severity, res.Score, res.Outcomes, res.Missing, res.Error, res.Notes)
	if res.Severity != qa.Good || res.Screenshot == nil || res.Text == nil || len(res.Missing) != 0 || res.Outcomes["answered"] < 4 {
		t.Errorf("rendered page replayed by the QA mode: %+v; want good, both matches, nothing missing", res)
	}
}

func TestQAConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    QAConfig
		want string
	}{
		{"off", QAConfig{}, ""},
		{"on", QAConfig{CDXURL: "http://cdx:8080", WARCDirs: []string{"/data/warcs"}}, ""},
		{"no dirs", QAConfig{CDXURL: "http://cdx:8080"}, "go together"},
		{"no index", QAConfig{WARCDirs: []string{"/w"}}, "go together"},
		{"bad URL", QAConfig{CDXURL: "cdx:8080", WARCDirs: []string{"/w"}}, `qa-cdx-url "cdx:8080"`},
	} {
		err := tc.c.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
}
