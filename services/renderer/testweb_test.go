package renderer

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// startTestweb serves the synthetic web with its scripted pages; the
// profile may fetch the site's own addresses and nothing else of loopback.
func startTestweb(t testing.TB) (*testweb.Server, string, profile.Profile) {
	t.Helper()
	site, err := testweb.Generate(testweb.Config{Seed: 11, Hosts: 1, PagesPerHost: 5, Scripted: true})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	home := strings.TrimSuffix(srv.Seeds()[0], "/")
	p := testProfile()
	ips, err := srv.Resolver().LookupIPAddr(context.Background(), site.HostName(0))
	if err != nil || len(ips) == 0 {
		t.Fatalf("resolve %s: %v", site.HostName(0), err)
	}
	p.Fetch.AllowAddresses = []string{ips[0].IP.String() + "/32"}
	return srv, home, p
}

// On the synthetic web's scripted page: the links only its script makes
// and the one named by data it loads with fetch() go to tocrawl as the
// page's outlinks; the fetch() response and the image loaded on scroll
// are captured; the image robots.txt disallows is refused; the script's
// requests to a loopback address outside the site and to the cloud
// metadata address open no connection (counted at the trap listener).
func TestRenderSyntheticWeb(t *testing.T) {
	srv, home, p := startTestweb(t)
	e := newEnv(t)
	cfg := Config{Crawl: "fc", Stream: "npld", ID: "r0", DataDir: e.dir, Tabs: 2, PageTimeout: 20e9, Attempts: 2, NoSandbox: true}
	r, stop := e.startWith(t, cfg, p, srv.Resolver())
	page := home + testweb.PathScripted
	e.handOff(t, page)
	evs := events(t, e.readTopic(t, "fc.crawled", hasURL("onreadydom:"+page)))
	want := []string{testweb.PathFromFetch}
	for i := range testweb.ScriptLinks {
		want = append(want, fmt.Sprintf("%s%d", testweb.PathScriptLinks, i))
	}
	// The outlinks are sent after the DOM's event, before the hand-off is
	// committed.
	var wantURLs []string
	for _, w := range want {
		wantURLs = append(wantURLs, home+w)
	}
	e.readTopic(t, "fc.tocrawl.npld", hasURLs(wantURLs...))
	stop()
	for _, path := range []string{testweb.PathScripted, testweb.PathScriptApp, testweb.PathScriptData, testweb.PathLazyImage} {
		if ev, ok := evs[home+path]; !ok || ev.StatusCode != 200 {
			t.Errorf("%s: %+v", path, ev)
		}
	}
	if _, ok := evs[home+testweb.PathPrivateEmbed]; ok {
		t.Errorf("%s was fetched although robots.txt disallows it", testweb.PathPrivateEmbed)
	}
	if n := srv.TrapConnections(); n != 0 {
		t.Errorf("%d connections reached the trap address %s", n, srv.TrapAddr())
	}
	if n := testutil.ToFloat64(r.metrics.refusals.WithLabelValues(refusedAddress)); n < 2 {
		t.Errorf("address refusals %v, want the trap and metadata requests", n)
	}
	sent := map[string]bool{}
	for _, rec := range e.all(t, "fc.tocrawl.npld") {
		l, err := messages.DecodeLaunch(rec.Value)
		if err != nil {
			t.Fatal(err)
		}
		sent[strings.TrimPrefix(l.URL, home)] = true
	}
	for _, w := range want {
		if !sent[w] {
			t.Errorf("outlink %s not sent to tocrawl; sent %v", w, sent)
		}
	}
}

// A page may make at most render.maxResources requests through the proxy:
// the rest are refused, and the page is still recorded.
func TestRenderResourceCap(t *testing.T) {
	srv, home, p := startTestweb(t)
	p.Render.MaxResources = 5
	e := newEnv(t)
	cfg := Config{Crawl: "fc", Stream: "npld", ID: "r0", DataDir: e.dir, Tabs: 1, PageTimeout: 20e9, Attempts: 1, NoSandbox: true}
	r, stop := e.startWith(t, cfg, p, srv.Resolver())
	page := fmt.Sprintf("%s%s%d", home, testweb.PathHeavy, 7)
	e.handOff(t, page)
	evs := events(t, e.readTopic(t, "fc.crawled", hasURL("screenshot:"+page)))
	stop()
	fetched := 0
	for u := range evs {
		if strings.HasPrefix(u, home) && !strings.HasSuffix(u, "/robots.txt") {
			fetched++
		}
	}
	// The page and four of its 20 subresources (robots.txt is the
	// proxy's own request, not the page's).
	if fetched > 5 {
		t.Errorf("%d URLs fetched for a page capped at 5 requests", fetched)
	}
	if n := testutil.ToFloat64(r.metrics.refusals.WithLabelValues(refusedCap)); n < testweb.HeavySubresources-5 {
		t.Errorf("cap refusals %v, want at least %d", n, testweb.HeavySubresources-5)
	}
}
