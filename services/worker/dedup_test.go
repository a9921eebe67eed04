package worker

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/dedup"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// dupSite serves one page linking three images: /a.png and /b.png?v=2
// carry the same bytes, /c.png others; /tiny1 and /tiny2 the same three
// bytes.
func dupSite(t *testing.T) *fcSite {
	t.Helper()
	same := bytes.Repeat([]byte("the same image bytes "), 100)
	return fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fcHTML(w, fcPage("", "/a.png", "/b.png?v=2", "/c.png", "/tiny1", "/tiny2"))
		case "/a.png", "/b.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(same)
		case "/c.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(bytes.Repeat([]byte("other "), 300))
		case "/tiny1", "/tiny2":
			_, _ = w.Write([]byte("abc"))
		default:
			http.NotFound(w, r)
		}
	})
}

// revisitOfOther checks that ev's record is an identical-payload-digest
// revisit naming orig's record.
func revisitOfOther(t *testing.T, dir string, ev, orig messages.Crawled) {
	t.Helper()
	h, typ, _ := fcRecord(t, dir, ev)
	oh, otyp, _ := fcRecord(t, dir, orig)
	origStart, _ := orig.FetchStart()
	refDate, derr := time.Parse(time.RFC3339Nano, h.Get(gowarc.WarcRefersToDate))
	switch {
	case typ != gowarc.Revisit || !strings.HasSuffix(h.Get(gowarc.WarcProfile), "/revisit/identical-payload-digest"):
		t.Errorf("%s written as %s with profile %q, want an identical-payload-digest revisit", ev.URL, typ, h.Get(gowarc.WarcProfile))
	case otyp != gowarc.Response:
		t.Errorf("original %s written as %s", orig.URL, otyp)
	case h.Get(gowarc.WarcRefersToTargetURI) != orig.URL || h.Get(gowarc.WarcRefersTo) != oh.Get(gowarc.WarcRecordID):
		t.Errorf("%s refers to %q %q, want %s %s", ev.URL, h.Get(gowarc.WarcRefersToTargetURI), h.Get(gowarc.WarcRefersTo),
			orig.URL, oh.Get(gowarc.WarcRecordID))
	case derr != nil || !(refDate.Equal(origStart) || refDate.Equal(origStart.Truncate(time.Second))):
		t.Errorf("WARC-Refers-To-Date %q, want the original's %s", h.Get(gowarc.WarcRefersToDate), origStart)
	case h.Get(gowarc.WarcPayloadDigest) != oh.Get(gowarc.WarcPayloadDigest):
		t.Errorf("payload digests differ: %s %s", h.Get(gowarc.WarcPayloadDigest), oh.Get(gowarc.WarcPayloadDigest))
	case !fcHasNote(ev, "duplicate:digest"):
		t.Errorf("%s annotations %q, want duplicate:digest", ev.URL, ev.Annotations)
	}
}

// The same payload under another URL becomes a revisit naming the first
// URL's record; other payloads, and payloads under the minimum size, are
// written in full.
func TestCrossURLRevisit(t *testing.T) {
	e := setup(t)
	site := dupSite(t)
	p := fcProfile()
	p.Dedup.MinPayloadBytes = 10
	dir := t.TempDir()
	events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("site.test"), seeds: []string{site.url("site.test", "/")}, minURIs: 6, dir: dir})
	a, b := fcOne(t, events, site.url("site.test", "/a.png")), fcOne(t, events, site.url("site.test", "/b.png?v=2"))
	first, second := a, b
	if sa, _ := a.FetchStart(); func() bool { sb, _ := b.FetchStart(); return sb.Before(sa) }() {
		first, second = b, a
	}
	revisitOfOther(t, dir, second, first)
	for _, path := range []string{"/c.png", "/tiny1", "/tiny2", "/"} {
		ev := fcOne(t, events, site.url("site.test", path))
		if _, typ, _ := fcRecord(t, dir, ev); typ != gowarc.Response || fcHasNote(ev, "duplicate:digest") {
			t.Errorf("%s written as %s (%q), want a response", path, typ, ev.Annotations)
		}
	}
}

// An NPLD record is never the original of a BYPM capture: the BYPM
// worker finds nothing in its own index and writes the payload in full.
func TestCrossURLNeverAcrossStreams(t *testing.T) {
	e := setup(t)
	site := dupSite(t)
	other, err := dedup.New(e.rdb, dedup.Options{History: "fc-bypm", MaxEntries: 100})
	if err != nil {
		t.Fatal(err)
	}
	// The worker of these tests is the NPLD one; the other stream's
	// index holds the payload of /a.png under a URL it never crawled.
	digest := "sha1:" + payloadSHA1(bytes.Repeat([]byte("the same image bytes "), 100))
	if err := other.Put(context.Background(), []dedup.Put{{Digest: digest,
		Ref: dedup.Ref{URL: "http://elsewhere.test/x.png", Time: time.Now().Add(-time.Hour)}}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	events := e.crawl(t, crawlRun{p: fcProfile(), resolver: newFCHosts("site.test"), seeds: []string{site.url("site.test", "/")}, minURIs: 6, dir: dir})
	for _, path := range []string{"/a.png", "/b.png?v=2"} {
		h, _, _ := fcRecord(t, dir, fcOne(t, events, site.url("site.test", path)))
		if h.Get(gowarc.WarcRefersToTargetURI) == "http://elsewhere.test/x.png" {
			t.Errorf("%s refers to the other stream's record", path)
		}
	}
}

// Past the dedup horizon a payload is written in full again: the digest
// index's older entry is replaced, and a URL whose original is of an
// earlier period is fetched without a conditional request.
func TestDedupHorizon(t *testing.T) {
	e := setup(t)
	var mu sync.Mutex
	var inm []string
	same := bytes.Repeat([]byte("x"), 500)
	site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			mu.Lock()
			inm = append(inm, r.Header.Get("If-None-Match"))
			mu.Unlock()
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			fcHTML(w, fcPage("", "/a.png"))
		case "/a.png":
			_, _ = w.Write(same)
		default:
			http.NotFound(w, r)
		}
	})
	home, img := site.url("site.test", "/"), site.url("site.test", "/a.png")
	p := fcProfile()
	p.Dedup.PeriodDays = 30
	old := time.Now().Add(-400 * 24 * time.Hour).UTC().Truncate(time.Millisecond)
	db, err := recentdb.New(e.rdb, recentdb.Options{Crawl: "fc", Stream: "npld"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := db.Put(ctx, []recentdb.Update{{URL: home,
		Capture:  &recentdb.Capture{Time: old, Status: 200, Digest: "sha1:AAAA", ETag: `"v1"`, Filename: "OLD.warc.gz", Offset: 1, Length: 2},
		Original: &recentdb.Original{Time: old, Digest: "sha1:AAAA", Filename: "OLD.warc.gz", Offset: 1, Length: 2, Status: 200, Mime: "text/html"},
	}}); err != nil {
		t.Fatal(err)
	}
	ix, err := dedup.New(e.rdb, dedup.Options{History: "fc-npld", MaxEntries: 100})
	if err != nil {
		t.Fatal(err)
	}
	digest := "sha1:" + payloadSHA1(same)
	if err := ix.Put(ctx, []dedup.Put{{Digest: digest, Ref: dedup.Ref{URL: "http://old.test/a.png", Time: old}}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	events := e.crawl(t, crawlRun{p: p, resolver: newFCHosts("site.test"), seeds: []string{home}, minURIs: 2, dir: dir})
	mu.Lock()
	if len(inm) != 1 || inm[0] != "" {
		t.Errorf("If-None-Match sent %q, want none: the original is of an earlier period", inm)
	}
	mu.Unlock()
	if ev := fcOne(t, events, home); ev.StatusCode != 200 {
		t.Errorf("home status %d, want 200", ev.StatusCode)
	}
	ev := fcOne(t, events, img)
	if _, typ, _ := fcRecord(t, dir, ev); typ != gowarc.Response {
		t.Errorf("%s written as %s, want a response: its digest's entry is of an earlier period", img, typ)
	}
	refs, err := ix.Lookup(ctx, []string{digest})
	if err != nil || refs[0].URL != img {
		t.Errorf("digest index entry %+v (%v), want the new capture %s", refs[0], err, img)
	}
}

// A 304 capture's event names the original it confirmed, so its index
// line points there; an entry from before the original's status was kept
// gives none.
func TestNotModifiedEventNamesOriginal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		want   bool
	}{{"with status", 200, true}, {"old entry", 0, false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := setup(t)
			site := fcServe(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/page" {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("ETag", `"v1"`)
				w.WriteHeader(http.StatusNotModified)
			})
			page := site.url("site.test", "/page")
			then := time.Now().Add(-400 * 24 * time.Hour).UTC().Truncate(time.Millisecond) // past the recrawl interval
			db, err := recentdb.New(e.rdb, recentdb.Options{Crawl: "fc", Stream: "npld"})
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Put(context.Background(), []recentdb.Update{{URL: page,
				Capture: &recentdb.Capture{Time: then, Status: 200, Digest: "sha1:AAAA", ETag: `"v1"`, Filename: "OLD.warc.gz", Offset: 7, Length: 99},
				Original: &recentdb.Original{Time: then, Digest: "sha1:AAAA", Filename: "OLD.warc.gz", Offset: 7, Length: 99,
					Status: tc.status, Mime: "text/html"},
			}}); err != nil {
				t.Fatal(err)
			}
			events := e.crawl(t, crawlRun{p: fcProfile(), resolver: newFCHosts("site.test"), seeds: []string{page}, minURIs: 1})
			ev := fcOne(t, events, page)
			o, ok, err := cdx.OriginalOf(ev)
			if err != nil || ok != tc.want {
				t.Fatalf("extra_info original %v (ok %v, err %v), want present %v", ev.ExtraInfo["original"], ok, err, tc.want)
			}
			if ok && (o.Filename != "OLD.warc.gz" || o.Offset != 7 || o.Length != 99 || o.Status != 200 || o.Mime != "text/html" ||
				o.Timestamp != messages.FormatTimestamp(then)) {
				t.Errorf("original %+v", o)
			}
		})
	}
}

// payloadSHA1 is the base32 SHA-1 of b, as payload digests are written.
func payloadSHA1(b []byte) string {
	sum := sha1.Sum(b)
	return base32.StdEncoding.EncodeToString(sum[:])
}
