package cdxwriter

import (
	"context"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// NPLD and BYPM are separate legal regimes: each event's capture goes to
// the history of the stream it names, an event naming none to the
// writer's configured stream, so a BYPM capture can never become a revisit
// of an NPLD record. The index (one collection per crawl) holds both.
func TestStreamsKeepSeparateHistories(t *testing.T) {
	h := newHarness(t, 1)
	h.cfg.Stream = "bypm"
	withStream := func(u, stream, digest, file string) string {
		ev := eventJSON(u, 200, "20240301000000000", digest, file, 100)
		return strings.Replace(ev, `"url":`, `"extra_info":{"stream":"`+stream+`"},"url":`, 1)
	}
	const npldURL, bypmURL, plainURL = "http://site.example/npld", "http://site.example/bypm", "http://site.example/plain"
	h.produce(t, withStream(npldURL, "npld", "sha1:NPLD", "n.warc.gz"), withStream(bypmURL, "bypm", "sha1:BYPM", "b.warc.gz"),
		eventJSON(plainURL, 200, "20240301000000000", "sha1:PLAIN", "p.warc.gz", 100))
	r := h.start(t)
	h.waitCommitted(t, h.cfg.Group())
	bypm, err := recentdb.New(h.rdb, recentdb.Options{Crawl: "fc", Stream: "bypm"})
	if err != nil {
		t.Fatal(err)
	}
	urls := []string{npldURL, bypmURL, plainURL}
	n, err := h.recdb.Lookup(context.Background(), urls)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bypm.Lookup(context.Background(), urls)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]bool{npldURL: {true, false}, bypmURL: {false, true}, plainURL: {false, true}}
	for i, u := range urls {
		if got := [2]bool{n[i].Found(), b[i].Found()}; got != want[u] {
			t.Errorf("%s: found in npld, bypm = %v, want %v", u, got, want[u])
		}
		if got := query(t, r.w, u); len(got) != 1 {
			t.Errorf("%s: %d index lines, want 1", u, len(got))
		}
	}
	if r.w.Recent().History() != "fc-bypm" {
		t.Errorf("default history %s, want fc-bypm", r.w.Recent().History())
	}
}
