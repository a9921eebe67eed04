package renderer

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// A page that never answers is tried the configured number of times,
// then handed back on tocrawl, forced and annotated renderFailed, for a
// worker's plain fetch; the renderer, its browser included, renders the
// next page as usual after those timed-out tabs.
func TestFailedRenderFallsBack(t *testing.T) {
	s := startSite(t)
	e := newEnv(t)
	// The budget is every page's, the next one's too, and a whole render
	// (browser context, tab, page, settling, scrolling, screenshot) takes
	// seconds on a loaded machine: with 2 s, the next page ran out of it
	// as well, and fell back instead of being rendered. /hang holds each
	// attempt for all of it.
	cfg := Config{Crawl: "fc", Stream: "npld", ID: "r0", DataDir: e.dir, Tabs: 1,
		PageTimeout: 10 * time.Second, Attempts: 2, NoSandbox: true}
	// The fallback comes after the browser's start and every attempt's
	// budget.
	e.wait = time.Minute + time.Duration(cfg.Attempts)*cfg.PageTimeout
	r, stop := e.start(t, cfg, testProfile())
	defer stop()
	e.handOff(t, s.base+"/hang")
	recs := e.readTopic(t, "fc.tocrawl.npld", hasURL(s.base+"/hang"))
	var back messages.Launch
	for _, r := range recs {
		l, err := messages.DecodeLaunch(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if l.URL == s.base+"/hang" {
			back = l
		}
	}
	if !back.ForceFetch || !back.IsSeed || !slices.Contains(back.Annotations(), messages.AnnotationRenderFailed) {
		t.Errorf("fallback launch %+v: want a forced seed annotated renderFailed", back)
	}
	// Attempts are counted before the fallback is published, and nothing
	// else has been handed off yet: these are /hang's.
	attempts := testutil.ToFloat64(r.metrics.renders.WithLabelValues("failed")) +
		testutil.ToFloat64(r.metrics.renders.WithLabelValues("crashed"))
	if attempts != float64(cfg.Attempts) {
		t.Errorf("%v failed attempts, want %d", attempts, cfg.Attempts)
	}
	// The site sees an attempt only if the browser got as far as asking
	// for the page before the budget ran out, which a loaded machine may
	// not (an attempt all the same: the page had its budget). So not one
	// hit per attempt; but never more, and at least one, or the page did
	// not fail by hanging.
	if n := s.hit("/hang"); n < 1 || n > cfg.Attempts {
		t.Errorf("/hang requested %d times, want 1 to %d (at most one per attempt)", n, cfg.Attempts)
	}
	e.handOff(t, s.base+"/page2")
	e.readTopic(t, "fc.crawled", hasURL("onreadydom:"+s.base+"/page2"))
	if n := testutil.ToFloat64(r.metrics.renders.WithLabelValues("fallback")); n != 1 {
		t.Errorf("%v fallbacks, want /hang's alone", n)
	}
}

// An https page is rendered through the proxy's TLS interception: the
// browser trusts the per-run key, the proxy fetches the real server, and
// the captures carry https URLs.
func TestRenderHTTPS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body><img src="/i.gif"><a href="/next">n</a></body></html>`)
		case "/i.gif":
			w.Header().Set("Content-Type", "image/gif")
			fmt.Fprint(w, "GIF89a")
		default:
			http.NotFound(w, r)
		}
	}))
	srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	e := newEnv(t)
	_, stop := e.start(t, Config{}, testProfile())
	defer stop()
	e.handOff(t, srv.URL+"/")
	evs := events(t, e.readTopic(t, "fc.crawled", hasURL("onreadydom:"+srv.URL+"/")))
	for _, u := range []string{srv.URL + "/", srv.URL + "/i.gif"} {
		if ev, ok := evs[u]; !ok || ev.StatusCode != 200 {
			t.Errorf("%s: %+v", u, ev)
		}
	}
	// The outlinks are sent after the DOM's event (before the hand-off is
	// committed), so they may not be on the topic yet.
	e.readTopic(t, "fc.tocrawl.npld", hasURL(srv.URL+"/next"))
}

// The render API (UKWA's GET /render) needs the bearer token, renders the
// page now and answers its outlinks.
func TestRenderAPI(t *testing.T) {
	s := startSite(t)
	e := newEnv(t)
	r, stop := e.start(t, Config{}, testProfile())
	defer stop()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("sekrit-token-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	api := httptest.NewServer(r.APIHandler("sekrit-token-123"))
	t.Cleanup(api.Close)
	get := func(token, u string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, api.URL+"/render?url="+u, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, tok := range []string{"", "wrong"} {
		if resp := get(tok, s.base+"/"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("token %q: %d, want 401", tok, resp.StatusCode)
		}
	}
	if resp := get("sekrit-token-123", "ftp://x/"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("bad url: %d, want 400", resp.StatusCode)
	}
	resp := get("sekrit-token-123", s.base+"/")
	defer resp.Body.Close()
	var out struct {
		Outcome
		WARCPrefix string `json:"warc_prefix"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("render: %d %v", resp.StatusCode, err)
	}
	if !slices.ContainsFunc(out.Outlinks, func(u string) bool { return strings.HasSuffix(u, "/js-only/1") }) ||
		out.Screenshot == "" || !strings.HasSuffix(out.WARCPrefix, "-WEBRENDER") {
		t.Errorf("render answer %+v", out)
	}
	_ = kgo.Record{}
}
