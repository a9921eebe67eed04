package worker

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// The synthetic web's ever-growing query (each page links its own path
// with one parameter more) is cut where the profile's parameter bound
// says: the pages with 1 to maxParams parameters are crawled, the link
// of the last one is dropped, that page annotated trap:query and the
// link counted. Without the bound (set beyond the hop limit) the chain
// runs to the hop limit, so the bound is what stopped it.
func TestTrapsCutTheGrowingQuery(t *testing.T) {
	const maxParams, hops = 8, 20
	for _, bounded := range []bool{true, false} {
		t.Run(map[bool]string{true: "bounded", false: "unbounded"}[bounded], func(t *testing.T) {
			e := hostileSetup(t)
			p := hostileProfile()
			p.Scope.MaxHops = hops
			p.Scope.Traps.MaxQueryParams = maxParams
			if !bounded {
				p.Scope.Traps.MaxQueryParams = 1000
			}
			var dropped float64
			events := e.crawl(t, crawlRun{p: p, resolver: e.srv.Resolver(), seeds: []string{e.srv.HostileURL(testweb.PathGrowingQuery)},
				minURIs: 2, after: func(w *Worker) { dropped = testutil.ToFloat64(w.metrics.traps.WithLabelValues("query")) }})
			pages, most, annotated := 0, 0, 0
			for raw, evs := range events {
				u, err := url.Parse(raw)
				if err != nil || u.Path != "/grow" {
					continue
				}
				pages++
				most = max(most, len(u.Query()))
				for _, ev := range evs {
					if fcHasNote(ev, "trap:query") {
						annotated++
						if n := len(u.Query()); n != maxParams {
							t.Errorf("%s (%d parameters) annotated trap:query, want only the page of %d", raw, n, maxParams)
						}
					}
				}
			}
			t.Logf("growing query: %d pages, the longest of %d parameters; %d annotated, %v links dropped", pages, most, annotated, dropped)
			if bounded && (pages != maxParams || most != maxParams || annotated != 1 || dropped != 1) {
				t.Errorf("%d pages up to %d parameters, %d annotated, %v dropped; want %d pages, the last annotated and its link dropped",
					pages, most, annotated, dropped, maxParams)
			}
			if !bounded && (pages <= maxParams || annotated != 0 || dropped != 0) {
				t.Errorf("unbounded: %d pages, %d annotated, %v dropped; want the chain past %d pages to the hop limit", pages, annotated, dropped, maxParams)
			}
		})
	}
}

// The synthetic web's challenged page (a Cloudflare interstitial served
// for ever) is never archived: its URI finishes -8 annotated
// challenge:cloudflare after its retries, each challenge is counted, and
// hostile.test is shown backing off for the reason "challenge".
func TestChallengeOnTheSyntheticWeb(t *testing.T) {
	e := hostileSetup(t)
	p := hostileProfile()
	dir := t.TempDir()
	target := e.srv.HostileURL(testweb.PathChallenge)
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var challenges float64
	var reason string
	events := e.crawl(t, crawlRun{p: p, resolver: e.srv.Resolver(), seeds: []string{target}, minURIs: 1, dir: dir,
		after: func(w *Worker) {
			challenges = testutil.ToFloat64(w.metrics.challenges.WithLabelValues("cloudflare"))
			f, err := NewFrontier(e.rdb, Config{Crawl: "fc", Stream: "npld"}, p, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			h, err := f.Host(context.Background(), u.Host)
			if err != nil {
				t.Fatal(err)
			}
			reason = h.BackOffReason
		}})
	ev := fcOne(t, events, target)
	if ev.StatusCode != frontier.StatusRetriesExhausted || !fcHasNote(ev, "challenge:cloudflare") || ev.WarcFilename != nil {
		t.Errorf("%s: status %d, notes %q, warc %v; want -8 annotated challenge:cloudflare and nothing recorded",
			target, ev.StatusCode, ev.Annotations, ev.WarcFilename)
	}
	if n := fcResponses(t, dir)[target]; n != 0 {
		t.Errorf("%d challenge pages in the WARCs", n)
	}
	// A challenge backs off as a 429 does (frontier.DecideThrottle):
	// maxRetries deferrals that cost no retry, then maxRetries retries,
	// then the last attempt exhausts them: one challenge counted each.
	if want := float64(2*hostileMaxRetries + 1); challenges != want {
		t.Errorf("%v challenges counted, want %v (one an attempt)", challenges, want)
	}
	if reason != frontier.BackOffChallenge {
		t.Errorf("hostile.test backs off for %q, want %q", reason, frontier.BackOffChallenge)
	}
	if !strings.HasPrefix(u.Host, testweb.HostileName) {
		t.Errorf("%s is not on %s", target, testweb.HostileName)
	}
}
