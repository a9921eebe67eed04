package worker

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// redirectSite serves hosts by name on one loopback port: each host in
// moves answers with a 301 to the URL it maps to (a host name or an
// absolute URL with another scheme), its robots.txt too when robotsToo is
// set (404 otherwise), and the others serve a small site: / links /p1 and
// /p2, /p1 links /p3, and robots.txt disallows /p2.
func redirectSite(t *testing.T, moves map[string]string, robotsToo bool) *fcSite {
	t.Helper()
	var s *fcSite
	s = fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(r.Host, ":")
		if to, ok := moves[host]; ok {
			if r.URL.Path == "/robots.txt" && !robotsToo {
				http.NotFound(w, r)
				return
			}
			if !strings.Contains(to, "://") {
				to = s.url(to, "/")
			}
			http.Redirect(w, r, to, http.StatusMovedPermanently)
			return
		}
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = fmt.Fprint(w, "User-agent: *\nDisallow: /p2\n")
		case "/":
			fcHTML(w, fcPage("", "/p1", "/p2"))
		case "/p1":
			fcHTML(w, fcPage("", "/p3"))
		case "/p2", "/p3":
			fcHTML(w, fcPage(""))
		default:
			http.NotFound(w, r)
		}
	})
	return s
}

// ukwaProfile is fcProfile with UKWA's shipped sheets (ignoreRobots,
// plus1Scope ...), which launches name.
func ukwaProfile(t *testing.T) profile.Profile {
	t.Helper()
	p := fcProfile()
	if err := p.Set("sheets.include", "[ukwa]"); err != nil {
		t.Fatal(err)
	}
	return p
}

// inscope returns the journalled launch messages by URL.
func inscope(t *testing.T, e *env) map[string][]messages.Launch {
	t.Helper()
	out := map[string][]messages.Launch{}
	for _, r := range readTopic(t, e, "fc.inscope.npld") {
		l, err := messages.DecodeLaunch(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		out[l.URL] = append(out[l.URL], l)
	}
	return out
}

// seedLog returns the shared seed entries every worker replays
// (pkg/scope Seeds), whatever the frontier's key prefix.
func seedLog(t *testing.T, e *env) []string {
	t.Helper()
	ctx := context.Background()
	keys, err := e.rdb.Keys(ctx, "*scope:seedlog").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("seed log keys %v: %v", keys, err)
	}
	entries, err := e.rdb.LRange(ctx, keys[0], 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// isSeedIn says the inscope journal holds url as a seed.
func isSeedIn(journal map[string][]messages.Launch, url string) bool {
	return slices.ContainsFunc(journal[url], func(l messages.Launch) bool { return l.IsSeed })
}

// A seed whose host moved (site-a.test answers 301 to www.site-b.test):
// the target becomes a seed of the same launch, so the new site is crawled
// as the seed's would have been, under the seed's sheets (ignoreRobots
// lets /p2 in), and the inscope journal records it as a seed with them.
// With seedsRedirectNewSeeds off only the landing page is captured, its
// links being outside the seed's scope.
func TestSeedRedirectBecomesSeed(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint("seedsRedirectNewSeeds=", on), func(t *testing.T) {
			e := setup(t)
			site := redirectSite(t, map[string]string{"site-a.test": "www.site-b.test"}, false)
			seed, target := site.url("site-a.test", "/"), site.url("www.site-b.test", "/")
			p := ukwaProfile(t)
			p.Scope.SeedsRedirectNewSeeds = on
			events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("site-a.test", "www.site-b.test"), seeds: []string{seed}, minURIs: 2,
				launch: func(l *messages.Launch) {
					l.Sheets = []string{"ignoreRobots"}
					l.ParentURLMetadata.HeritableData.LaunchTimestamp = "20240117090000"
				}})
			if ev := fcOne(t, events, seed); ev.StatusCode != 301 {
				t.Fatalf("seed: status %d, want 301", ev.StatusCode)
			}
			landing := fcOne(t, events, target)
			if landing.StatusCode != 200 || landing.HopPath != "R" || landing.Via != seed || landing.Seed != "tid:1:"+seed {
				t.Fatalf("target event %+v: want 200, hop R, via the seed, the seed's source", landing)
			}
			journal := inscope(t, e)
			entries := seedLog(t, e)
			prefix := "s " + surt.ImpliedPrefix(target)
			if !on {
				for _, path := range []string{"/p1", "/p2", "/p3"} {
					if evs := events[site.url("www.site-b.test", path)]; len(evs) > 0 {
						t.Errorf("%s crawled without seedsRedirectNewSeeds: %+v", path, evs)
					}
				}
				if isSeedIn(journal, target) || slices.Contains(entries, prefix) {
					t.Fatalf("target journalled or scoped as a seed with the setting off: %v", entries)
				}
				return
			}
			for _, path := range []string{"/p1", "/p2", "/p3"} {
				if ev := fcOne(t, events, site.url("www.site-b.test", path)); ev.StatusCode != 200 {
					t.Errorf("%s: status %d, want 200 (in scope, robots ignored by the seed's sheet)", path, ev.StatusCode)
				}
			}
			var rec messages.Launch
			for _, l := range journal[target] {
				if l.IsSeed {
					rec = l
				}
			}
			h := rec.ParentURLMetadata.HeritableData
			if !rec.IsSeed || !slices.Equal(rec.Sheets, []string{"ignoreRobots"}) || h.Source != "tid:1:"+seed ||
				h.LaunchTimestamp != "20240117090000" || rec.HopPath() != "R" || rec.ParentURL != seed {
				t.Fatalf("journalled target %+v: want a seed with the seed's sheets, source and launch timestamp", rec)
			}
			if !slices.Contains(entries, prefix) {
				t.Fatalf("seed log %v lacks the target's prefix %q", entries, prefix)
			}
		})
	}
}

// A moved site usually redirects its robots.txt too, so the target is
// reached first through the seed's robots.txt, as an ordinary URI (hop
// PR), and may be queued or even crawled before the seed's own redirect
// makes it a seed. The seed version is forced: it replaces the queued copy
// or crawls the page again, so the site is crawled all the same.
func TestSeedRedirectTargetReachedFirstByRobots(t *testing.T) {
	e := setup(t)
	site := redirectSite(t, map[string]string{"site-a.test": "www.site-b.test"}, true)
	seed, target := site.url("site-a.test", "/"), site.url("www.site-b.test", "/")
	events := e.crawl(t, crawlRun{p: ukwaProfile(t), resolver: newFCHosts("site-a.test", "www.site-b.test"), seeds: []string{seed}, minURIs: 4,
		launch: func(l *messages.Launch) { l.Sheets = []string{"ignoreRobots"} }})
	if !slices.ContainsFunc(events[target], func(ev messages.Crawled) bool { return ev.HopPath == "R" && ev.Via == seed }) {
		t.Fatalf("target never crawled as the seed's redirect: %+v", events[target])
	}
	for _, path := range []string{"/p1", "/p2", "/p3"} {
		if ev := fcOne(t, events, site.url("www.site-b.test", path)); ev.StatusCode != 200 {
			t.Errorf("%s: status %d, want 200", path, ev.StatusCode)
		}
	}
	if !isSeedIn(inscope(t, e), target) {
		t.Fatal("target not journalled as a seed")
	}
}

// The seed's scope type passes to its redirect target: a plus-one seed's
// target admits its pages' outlinks to another host, one hop out.
func TestSeedRedirectKeepsScopeType(t *testing.T) {
	e := setup(t)
	var s *fcSite
	s = fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch host, _, _ := strings.Cut(r.Host, ":"); {
		case host == "old.test":
			http.Redirect(w, r, s.url("new.test", "/"), http.StatusMovedPermanently)
		case host == "new.test" && r.URL.Path == "/":
			fcHTML(w, fcPage("", s.url("other.test", "/x")))
		case host == "other.test" && r.URL.Path == "/x":
			fcHTML(w, fcPage("", "/y"))
		default:
			http.NotFound(w, r)
		}
	})
	seed := s.url("old.test", "/")
	events := e.crawl(t, crawlRun{p: ukwaProfile(t), resolver: newFCHosts("old.test", "new.test", "other.test"), seeds: []string{seed}, minURIs: 3,
		launch: func(l *messages.Launch) { l.Sheets = []string{"plus1Scope"} }})
	if ev := fcOne(t, events, s.url("other.test", "/x")); ev.StatusCode != 200 {
		t.Fatalf("plus-one page of the target: status %d", ev.StatusCode)
	}
	if evs := events[s.url("other.test", "/y")]; len(evs) > 0 {
		t.Fatalf("two hops out crawled: %+v", evs)
	}
	if !slices.Contains(seedLog(t, e), "v "+surt.ImpliedPrefix(s.url("new.test", "/"))) {
		t.Fatalf("seed log %v lacks the target's plus-one entry", seedLog(t, e))
	}
}

// Bad redirects of seeds: a loop among seeds ends at once (each fetched
// once), a redirect to another scheme or to an excluded host adds no seed
// and no scope, and a chain stops making seeds at the bound.
func TestSeedRedirectBadInput(t *testing.T) {
	t.Run("loop", func(t *testing.T) {
		e := setup(t)
		site := redirectSite(t, map[string]string{"a.test": "b.test", "b.test": "a.test"}, false)
		seed := site.url("a.test", "/")
		events := e.crawl(t, crawlRun{p: fcProfile(), resolver: newFCHosts("a.test", "b.test"), seeds: []string{seed}, minURIs: 2})
		fcOne(t, events, seed)
		fcOne(t, events, site.url("b.test", "/"))
		if !isSeedIn(inscope(t, e), site.url("b.test", "/")) {
			t.Fatal("b.test is not a seed")
		}
	})
	t.Run("scheme", func(t *testing.T) {
		e := setup(t)
		site := redirectSite(t, map[string]string{"a.test": "ftp://files.test/pub/"}, false)
		seed := site.url("a.test", "/")
		events := e.crawl(t, crawlRun{p: fcProfile(), resolver: newFCHosts("a.test", "files.test"), seeds: []string{seed}, minURIs: 1})
		if ev := fcOne(t, events, seed); ev.StatusCode != 301 {
			t.Fatalf("seed status %d", ev.StatusCode)
		}
		for u := range inscope(t, e) {
			if strings.HasPrefix(u, "ftp:") {
				t.Fatalf("ftp target journalled: %s", u)
			}
		}
		if log := seedLog(t, e); len(log) != 1 {
			t.Fatalf("seed log %v: want the seed's entry only", log)
		}
	})
	t.Run("excluded", func(t *testing.T) {
		e := setup(t)
		site := redirectSite(t, map[string]string{"a.test": "withdrawn.test"}, false)
		seed, target := site.url("a.test", "/"), site.url("withdrawn.test", "/")
		excl := filepath.Join(t.TempDir(), "exclude.txt")
		if err := os.WriteFile(excl, []byte("+"+surt.ImpliedPrefix(target)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p := fcProfile()
		p.Scope.ExcludedSurtsFile = excl
		events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("a.test", "withdrawn.test"), seeds: []string{seed}, minURIs: 1})
		if evs := events[target]; len(evs) > 0 {
			t.Fatalf("excluded target crawled: %+v", evs)
		}
		if len(inscope(t, e)[target]) > 0 {
			t.Fatal("excluded target journalled")
		}
		if log := seedLog(t, e); len(log) != 1 {
			t.Fatalf("seed log %v: want the seed's entry only", log)
		}
	})
	t.Run("chain", func(t *testing.T) {
		e := setup(t)
		moves := map[string]string{}
		hosts := []string{"c0.test"}
		for i := range 6 {
			moves[fmt.Sprintf("c%d.test", i)] = fmt.Sprintf("c%d.test", i+1)
			hosts = append(hosts, fmt.Sprintf("c%d.test", i+1))
		}
		site := redirectSite(t, moves, false)
		events := e.crawl(t, crawlRun{p: fcProfile(), resolver: newFCHosts(hosts...), seeds: []string{site.url("c0.test", "/")}, minURIs: 7})
		journal := inscope(t, e)
		for i, h := range hosts {
			u := site.url(h, "/")
			if i > 0 && len(events[u]) != 1 {
				t.Errorf("%s: %d events, want 1", u, len(events[u]))
			}
			// c1..c4 are 1..4 redirects from the seed; c5 is the fifth.
			if want := i > 0 && i < 5; i > 0 && isSeedIn(journal, u) != want {
				t.Errorf("%s (%d redirects from the seed): seed %v, want %v", u, i, !want, want)
			}
		}
		if log := seedLog(t, e); len(log) != 5 {
			t.Fatalf("seed log %v: want the seed and 4 redirect targets", log)
		}
	})
}

// A rebuild restores a redirect target that became a seed: its scope
// entry in the shared seed log and the seed's sheets at its prefix, from
// its inscope record, after Redis lost everything.
func TestSeedRedirectSurvivesRebuild(t *testing.T) {
	e := setup(t)
	site := redirectSite(t, map[string]string{"site-a.test": "www.site-b.test"}, false)
	seed, target := site.url("site-a.test", "/"), site.url("www.site-b.test", "/")
	p := ukwaProfile(t)
	e.crawl(t, crawlRun{p: p, resolver: newFCHosts("site-a.test", "www.site-b.test"), seeds: []string{seed}, minURIs: 5,
		launch: func(l *messages.Launch) { l.Sheets = []string{"ignoreRobots"} }})
	ctx := context.Background()
	if err := e.rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	w := newWorker(t, e, t.TempDir())
	j := NewJournal(e.kc, Config{Crawl: "fc", Stream: "npld"}, "", nil)
	if _, err := RebuildFrontier(ctx, e.rdb, w.Frontier(), j, p, false); err != nil {
		t.Fatal(err)
	}
	if log := seedLog(t, e); !slices.Contains(log, "s "+surt.ImpliedPrefix(target)) || !slices.Contains(log, "s "+surt.ImpliedPrefix(seed)) {
		t.Fatalf("seed log after the rebuild %v: want the seed and its redirect target", log)
	}
	keys, err := e.rdb.Keys(ctx, "*sheets:assoc").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("sheet association keys %v: %v", keys, err)
	}
	assoc, err := e.rdb.HGetAll(ctx, keys[0]).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{seed, target} {
		if got := assoc[surt.ImpliedPrefix(u)]; !strings.Contains(got, "ignoreRobots") {
			t.Errorf("sheets at %s after the rebuild: %q, want ignoreRobots (all: %v)", u, got, assoc)
		}
	}
}
