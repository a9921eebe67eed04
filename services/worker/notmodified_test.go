package worker

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// A 304 answer is written as Heritrix and warcprox write it: a
// server-not-modified revisit of the original full response, carrying the
// original's payload digest (on the record, the event and so the index),
// annotated duplicate:server-not-modified; the outlinks stored with the
// original are followed with their hops, so the recrawl reaches what the
// first crawl reached. A full capture stores its own outlinks; the revisit
// leaves the original's list in place.
func TestNotModifiedIsARevisitOfTheOriginal(t *testing.T) {
	const etag = `"v1"`
	e := setup(t)
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("ETag", etag)
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			fcHTML(w, fcPage("", "/changed-link"))
		case "/fresh":
			fcHTML(w, fcPage("", "/fresh-child"))
		default:
			fcHTML(w, fcPage(""))
		}
	})
	page, fresh := site.url("site.test", "/page"), site.url("site.test", "/fresh")
	then := time.Now().Add(-400 * 24 * time.Hour).UTC().Truncate(time.Millisecond)
	db, err := recentdb.New(e.rdb, recentdb.Options{Crawl: "fc", Stream: "npld"})
	if err != nil {
		t.Fatal(err)
	}
	const digest = "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	const recordID = "<urn:uuid:6f2a3cf0-5f4b-4a59-9d0e-9d6a53a0c9a1>"
	ctx := context.Background()
	if err := db.Put(ctx, []recentdb.Update{{URL: page,
		Capture:  &recentdb.Capture{Time: then, Status: 200, Digest: digest, ETag: etag, Filename: "OLD.warc.gz", Offset: 100, Length: 500},
		Original: &recentdb.Original{Time: then, Digest: digest, Filename: "OLD.warc.gz", Offset: 100, Length: 500, RecordID: recordID},
		Outlinks: &recentdb.Outlinks{Time: then, Links: []recentdb.Link{
			{Hop: 'L', URL: site.url("site.test", "/old-link"), Context: "a/@href"},
			{Hop: 'E', URL: site.url("site.test", "/old.css"), Context: "link/@href"},
		}},
	}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	events := e.crawl(t, crawlRun{p: fcProfile(), resolver: newFCHosts("site.test"), seeds: []string{page, fresh}, minURIs: 5, dir: dir})

	ev := fcOne(t, events, page)
	if ev.StatusCode != 304 || !fcHasNote(ev, "duplicate:server-not-modified") || ev.ContentDigest == nil || *ev.ContentDigest != digest {
		t.Fatalf("304 event: status %d, annotations %q, digest %v; want 304, duplicate:server-not-modified, %s",
			ev.StatusCode, ev.Annotations, ev.ContentDigest, digest)
	}
	if ev.ExtraInfo["stream"] != "npld" {
		t.Errorf("event names stream %v, want npld", ev.ExtraInfo["stream"])
	}
	h, typ, _ := fcRecord(t, dir, ev)
	refDate, derr := time.Parse(time.RFC3339Nano, h.Get(gowarc.WarcRefersToDate))
	switch {
	case typ != gowarc.Revisit || !strings.HasSuffix(h.Get(gowarc.WarcProfile), "/revisit/server-not-modified"):
		t.Fatalf("304 written as %s with profile %q, want a server-not-modified revisit", typ, h.Get(gowarc.WarcProfile))
	case h.Get(gowarc.WarcPayloadDigest) != digest:
		t.Errorf("WARC-Payload-Digest %q, want the original's %s", h.Get(gowarc.WarcPayloadDigest), digest)
	case h.Get(gowarc.WarcRefersTo) != recordID || h.Get(gowarc.WarcRefersToTargetURI) != page:
		t.Errorf("refers to %q %q, want %s %s", h.Get(gowarc.WarcRefersTo), h.Get(gowarc.WarcRefersToTargetURI), recordID, page)
	case derr != nil || !(refDate.Equal(then) || refDate.Equal(then.Truncate(time.Second))):
		t.Errorf("WARC-Refers-To-Date %q (%v), want %s", h.Get(gowarc.WarcRefersToDate), derr, then)
	}
	// The stored outlinks were followed, with their own hops, from the
	// revisit; the page's new link is unknown until it changes.
	for path, hop := range map[string]string{"/old-link": "L", "/old.css": "E", "/fresh-child": "L"} {
		c := fcOne(t, events, site.url("site.test", path))
		parent := map[bool]string{true: fresh, false: page}[path == "/fresh-child"]
		if c.HopPath != hop || c.Via != parent {
			t.Errorf("%s: hop path %q via %q, want %q via %s", path, c.HopPath, c.Via, hop, parent)
		}
	}
	if n := len(events[site.url("site.test", "/changed-link")]); n != 0 {
		t.Errorf("a link the server never sent was crawled %d times", n)
	}
	// The full capture stored its outlinks; the revisit kept the original's.
	got, err := db.Outlinks(ctx, fresh)
	start, _ := fcOne(t, events, fresh).FetchStart()
	if err != nil || got == nil || !got.Time.Equal(start) || len(got.Links) != 1 || got.Links[0].URL != site.url("site.test", "/fresh-child") || got.Links[0].Hop != 'L' {
		t.Errorf("outlinks stored for %s: %+v (err %v), want /fresh-child L at %s", fresh, got, err, start)
	}
	if got, _ := db.Outlinks(ctx, page); got == nil || !got.Time.Equal(then) || len(got.Links) != 2 {
		t.Errorf("outlinks of %s after its revisit: %+v, want the original's two", page, got)
	}
}

// Without a full record to refer to, no conditional request is made: the
// answer could only be archived as an empty 304.
func TestNoConditionalRequestWithoutAnOriginal(t *testing.T) {
	e := setup(t)
	var mu sync.Mutex
	var inm []string
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page" {
			mu.Lock()
			inm = append(inm, r.Header.Get("If-None-Match"))
			mu.Unlock()
		}
		w.Header().Set("ETag", `"v1"`)
		fcHTML(w, fcPage(""))
	})
	page := site.url("site.test", "/page")
	then := time.Now().Add(-400 * 24 * time.Hour).UTC().Truncate(time.Millisecond)
	db, err := recentdb.New(e.rdb, recentdb.Options{Crawl: "fc", Stream: "npld"})
	if err != nil {
		t.Fatal(err)
	}
	// A capture whose record was a revisit, and no original known.
	if err := db.Put(context.Background(), []recentdb.Update{{URL: page,
		Capture: &recentdb.Capture{Time: then, Status: 200, Digest: "sha1:AAAA", Revisit: true, ETag: `"v1"`, Filename: "OLD.warc.gz", Offset: 1, Length: 2},
	}}); err != nil {
		t.Fatal(err)
	}
	events := e.crawl(t, crawlRun{p: fcProfile(), resolver: newFCHosts("site.test"), seeds: []string{page}, minURIs: 1, dir: t.TempDir()})
	mu.Lock()
	defer mu.Unlock()
	if ev := fcOne(t, events, page); ev.StatusCode != 200 || len(inm) != 1 || inm[0] != "" {
		t.Errorf("status %d, If-None-Match sent %q; want 200 and none", ev.StatusCode, inm)
	}
}
