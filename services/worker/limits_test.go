package worker

import (
	"net/http"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

// A sheet's fetch limits apply to the URIs under its SURT prefix only, as
// Heritrix's sheets override FetchHTTP: the same 50 KB page is cut at the
// sheet's maxLengthBytes (lenTrunc) on one host and fetched whole on the
// other.
func TestSheetFetchLimits(t *testing.T) {
	e := setup(t)
	big := strings.Repeat("x", 50_000)
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(big))
	})
	p := fcProfile()
	err := profile.Decode(strings.NewReader(`
sheets:
  definitions:
    small:
      fetch.maxLengthBytes: 1000
  associations:
    - surtPrefixes: ['http://(test,small,']
      sheets: [small]
`), &p)
	if err != nil {
		t.Fatal(err)
	}
	small, whole := site.url("small.test", "/page"), site.url("whole.test", "/page")
	events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("small.test", "whole.test"), seeds: []string{small, whole}, minURIs: 2})
	if ev := fcOne(t, events, small); !fcHasNote(ev, "lenTrunc") || *ev.Size > 1000 {
		t.Errorf("under the sheet: size %d, annotations %q; want at most 1000 bytes and lenTrunc", *ev.Size, ev.Annotations)
	}
	if ev := fcOne(t, events, whole); fcHasNote(ev, "lenTrunc") || *ev.ContentLength != int64(len(big)) {
		t.Errorf("without the sheet: content length %d, annotations %q; want the whole page", *ev.ContentLength, ev.Annotations)
	}
}
