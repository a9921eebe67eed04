package worker

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// A host at its parallelQueues limit becomes ready again when one of its
// URIs completes, and nothing is admitted to say so (its outlinks are all
// known). The dispatcher must claim again on the completion: this crawl
// stretches the idle backoff far past its deadline, so a dispatcher that
// waited for its timer instead would not finish it.
func TestDispatcherClaimsOnCompletion(t *testing.T) {
	e := setup(t)
	const pages = 30
	var links []string
	for i := range pages {
		links = append(links, fmt.Sprintf("/p%d.html", i))
	}
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.WriteHeader(http.StatusNotFound)
		case "/":
			fcHTML(w, fcPage("", links...))
		default:
			// A slow page keeps the host at its limit when the dispatcher
			// asks again (it polls every few ms while claims come back).
			time.Sleep(30 * time.Millisecond)
			fcHTML(w, fcPage("", "/")) // only a link already known
		}
	})
	p := fcProfile()
	p.Frontier.ParallelQueues = 2 // fewer than the harness's 4 threads
	seed := site.url("site.test", "/")
	events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("site.test"), seeds: []string{seed},
		minURIs: pages + 1, idle: time.Hour})
	for _, l := range links {
		if ev := fcOne(t, events, site.url("site.test", l)); ev.StatusCode != 200 {
			t.Errorf("%s: %d, want 200", l, ev.StatusCode)
		}
	}
}
