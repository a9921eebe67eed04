package worker

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/trawler-crawl/trawler/pkg/frontier"
)

// challengePage is what Cloudflare serves a client it wants to check.
func challengePage(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.Header().Set("Cf-Mitigated", "challenge")
	w.Header().Set("Server", "cloudflare")
	w.WriteHeader(http.StatusForbidden)
	_, _ = io.WriteString(w, `<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>
<script src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1"></script></body></html>`)
}

// A bot-challenge page is never archived as the page: the host backs off
// with the reason "challenge" and the URI is tried again. One that gives
// way is captured as the real page; one that never does finishes -8
// annotated challenge:cloudflare, with nothing in the WARCs. With
// detection off the challenge page is an ordinary 403 capture.
func TestChallengePages(t *testing.T) {
	for _, detect := range []bool{true, false} {
		t.Run(map[bool]string{true: "detect", false: "off"}[detect], func(t *testing.T) {
			e := setup(t)
			var onceServed atomic.Int64
			site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/robots.txt":
					http.NotFound(w, r)
				case "/":
					fcHTML(w, fcPage("", "/once", "/always"))
				case "/once": // the first request is challenged
					if onceServed.Add(1) == 1 {
						challengePage(w)
						return
					}
					fcHTML(w, fcPage("<title>the real page</title>"))
				case "/always":
					challengePage(w)
				}
			})
			p := fcProfile()
			p.Fetch.DetectChallenges = detect
			dir := t.TempDir()
			var challenges float64
			var reason string
			events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("cf.test"), seeds: []string{site.url("cf.test", "/")}, minURIs: 3, dir: dir,
				after: func(w *Worker) {
					challenges = testutil.ToFloat64(w.metrics.challenges.WithLabelValues("cloudflare"))
					f, err := NewFrontier(e.rdb, Config{Crawl: "fc", Stream: "npld"}, p, slog.New(slog.DiscardHandler))
					if err != nil {
						t.Fatal(err)
					}
					h, err := f.Host(context.Background(), "cf.test:"+site.port)
					if err != nil {
						t.Fatal(err)
					}
					reason = h.BackOffReason
				}})
			once := fcOne(t, events, site.url("cf.test", "/once"))
			always := fcOne(t, events, site.url("cf.test", "/always"))
			recorded := fcResponses(t, dir)
			if !detect {
				if once.StatusCode != 403 || always.StatusCode != 403 || recorded[site.url("cf.test", "/always")] != 1 || challenges != 0 {
					t.Fatalf("detection off: /once %d, /always %d (%d records), %v challenges; want both 403 captures",
						once.StatusCode, always.StatusCode, recorded[site.url("cf.test", "/always")], challenges)
				}
				return
			}
			if once.StatusCode != 200 || recorded[site.url("cf.test", "/once")] != 1 || site.hitCount("/once") != 2 {
				t.Errorf("/once: status %d, %d records, %d requests; want the real page captured once after one challenge",
					once.StatusCode, recorded[site.url("cf.test", "/once")], site.hitCount("/once"))
			}
			if always.StatusCode != frontier.StatusRetriesExhausted || !fcHasNote(always, "challenge:cloudflare") || always.WarcFilename != nil {
				t.Errorf("/always: status %d notes %q warc %v; want -8 annotated challenge:cloudflare, nothing recorded",
					always.StatusCode, always.Annotations, always.WarcFilename)
			}
			if n := recorded[site.url("cf.test", "/always")]; n != 0 {
				t.Errorf("/always: %d challenge pages in the WARCs", n)
			}
			if want := float64(1 + site.hitCount("/always")); challenges != want {
				t.Errorf("challenges counted %v, want %v (one per challenge served)", challenges, want)
			}
			if reason != frontier.BackOffChallenge {
				t.Errorf("the host's back-off reason is %q, want %q", reason, frontier.BackOffChallenge)
			}
		})
	}
}
