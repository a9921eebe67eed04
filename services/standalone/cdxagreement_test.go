package standalone

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/testweb"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
)

// The live CDX index (the cdxwriter's lines, built by pkg/cdx from the
// crawled events the workers publish) and the offline index of the same
// WARC files (pkg/warcindex, `trawler cdx index`) agree field by field for
// every capture of a real crawl and recrawl of the synthetic web: HTML
// pages, a 1.2 MiB response sent with Content-Length and one sent chunked
// (each far larger than the indexer's read buffer), redirects with
// relative, root-relative and absolute Locations, 404s, dns: lookups, and
// on the recrawl both server-not-modified revisits (304s to conditional
// requests) and identical-payload-digest ones.
//
// The redirect field comes from the record's Location offline and from the
// event's extra_info "location" live (Heritrix's event has no Location);
// both are resolved against the URL, and the test also checks that each
// redirect is absolute and is a URL the crawler captured, i.e. the one it
// resolved and followed.
func TestLiveAndOfflineIndexesAgree(t *testing.T) {
	srv := startSite(t, testweb.Config{Seed: 19, Hosts: 2, PagesPerHost: 6, LargeFileBytes: 1<<20 + 200<<10})
	dir := t.TempDir()
	p := testProfile()
	p.Frontier.RecrawlIntervalSeconds = 0 // conditional requests stay on: 304s become revisits
	runCrawlProfile(t, Config{DataDir: dir, Seeds: srv.Seeds(), Relaunch: true}, srv, p)
	// The second launch must fall in a later second than the first crawl's
	// end (see TestRecrawlWritesRevisitsAndIndexesBoth).
	for next := time.Now().Truncate(time.Second).Add(time.Second); time.Now().Before(next); {
		time.Sleep(10 * time.Millisecond) // waiting for the clock itself, not a condition
	}
	sum := runCrawlProfile(t, Config{DataDir: dir, Seeds: srv.Seeds(), Relaunch: true}, srv, p)

	// The files of both launches are indexed as one set, as `trawler cdx
	// index` does, so that a 304's line points at its original
	// (docs/architecture.md 11.2) offline as it does live.
	var offline []cdx.Line
	st, err := warcindex.IndexFiles(context.Background(), sum.WARCFiles, func(l cdx.Line) error {
		offline = append(offline, l)
		return nil
	}, warcindex.FilesOptions{OnError: func(e error) { t.Errorf("offline index: %v", e) }})
	if err != nil {
		t.Fatal(err)
	}
	if n := st.NotModified.Unresolved(); n != 0 {
		t.Errorf("offline index left %d 304s unresolved: %s", n, st.NotModified.Reasons())
	}

	ix, err := cdxindex.Open(sum.CDXPath, cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if n, _ := ix.Count("fc"); n != int64(len(offline)) {
		t.Errorf("live index has %d captures, the WARCs %d indexed records", n, len(offline))
	}
	api := httptest.NewServer(ix.Handler(cdxindex.HandlerOptions{ReadOnly: true}))
	t.Cleanup(api.Close)

	captured := map[string]bool{}
	for _, l := range offline {
		captured[l.Original] = true
	}
	kinds := map[string]int{}
	first := map[string]string{} // file and offset -> the earliest timestamp seen
	for _, off := range offline {
		at := fmt.Sprintf("%s:%d", off.Filename, off.Offset)
		if ts, ok := first[at]; !ok || off.Timestamp < ts {
			first[at] = off.Timestamp
		}
	}
	for _, off := range offline {
		kind := kindOf(off, first[fmt.Sprintf("%s:%d", off.Filename, off.Offset)] != off.Timestamp)
		kinds[kind]++
		live, ok := liveLine(t, api.URL, off)
		if !ok {
			t.Errorf("%s (%s at %s:%d) is not in the live index", off.Original, kind, off.Filename, off.Offset)
			continue
		}
		// The index keeps OutbackCDX's model, where a line without a
		// status (a resource record's) has status 0; a dns: line has
		// 200 in both.
		if live.Status == "0" && off.Status == "" {
			live.Status = ""
		}
		if kind == "redirect" && (!strings.HasPrefix(off.Redirect, "http://") || !captured[off.Redirect]) {
			t.Errorf("%s: offline redirect %q is not an absolute URL the crawler captured", off.Original, off.Redirect)
		}
		live.RobotFlags = off.RobotFlags
		if live != off {
			t.Errorf("%s, %s:\n live    %s\n offline %s", kind, off.Original, live.CDX11(), off.CDX11())
		}
	}
	t.Logf("captures compared by kind: %v", kinds)
	for _, k := range []string{"page", "large", "redirect", "dns", "server-not-modified revisit", "identical-payload-digest revisit", "404"} {
		if kinds[k] == 0 {
			t.Errorf("the crawl produced no %s capture to compare", k)
		}
	}
}

// kindOf names what a capture is, to check the crawl covered each kind. A
// 304's line is its original's under the 304's own time: a line sharing
// the file and offset of an earlier line of its URL (pointed).
func kindOf(l cdx.Line, pointed bool) string {
	switch {
	case pointed:
		return "server-not-modified revisit"
	case strings.HasPrefix(l.Original, "dns:"):
		return "dns"
	case l.Mimetype == cdx.RevisitMime && l.Status == "304":
		return "server-not-modified revisit (unresolved)"
	case l.Mimetype == cdx.RevisitMime:
		return "identical-payload-digest revisit"
	case strings.HasPrefix(l.Status, "3"):
		return "redirect"
	case l.Status == "404":
		return "404"
	case strings.HasSuffix(l.Original, "/files/large.bin"):
		return "large"
	}
	return "page"
}

// liveLine returns the live index's line for the capture at off's file and
// offset.
func liveLine(t *testing.T, api string, off cdx.Line) (cdx.Line, bool) {
	t.Helper()
	resp, err := http.Get(api + "/fc?output=cdxj&matchType=exact&url=" + url.QueryEscape(off.Original))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("query %s: HTTP %d %v: %s", off.Original, resp.StatusCode, err, body)
	}
	for _, s := range strings.Split(strings.TrimSpace(string(body)), "\n") {
		if s == "" {
			continue
		}
		l, err := cdx.ParseCDXJ(s)
		if err != nil {
			t.Fatalf("live line %q: %v", s, err)
		}
		if l.Filename == off.Filename && l.Offset == off.Offset && l.Timestamp == off.Timestamp {
			return l, true
		}
	}
	return cdx.Line{}, false
}
