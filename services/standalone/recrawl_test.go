package standalone

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/testweb"
)

// capture is one response or revisit record read back from a WARC.
type capture struct {
	typ      gowarc.RecordType
	status   int
	refersTo string // WARC-Refers-To-Target-URI of a revisit
	refDate  string
	digest   string // WARC-Payload-Digest
}

// eachRecord calls fn for every record of the WARC file name, in order.
func eachRecord(t *testing.T, name string, fn func(rec gowarc.WarcRecord)) {
	t.Helper()
	r, err := gowarc.NewWarcFileReader(name, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	for {
		rec, _, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fn(rec)
		_ = rec.Close()
	}
}

// capturesByURL reads every response and revisit record of files.
func capturesByURL(t *testing.T, files []string) map[string][]capture {
	t.Helper()
	out := map[string][]capture{}
	for _, name := range files {
		eachRecord(t, name, func(rec gowarc.WarcRecord) {
			h := rec.WarcHeader()
			typ := rec.Type()
			if (typ != gowarc.Response && typ != gowarc.Revisit) || h.Get(gowarc.ContentType) == "text/dns" {
				return
			}
			raw, err := rec.Block().RawBytes()
			if err != nil {
				t.Fatal(err)
			}
			block, _ := io.ReadAll(raw)
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(block)), nil)
			if err != nil {
				t.Fatalf("%s: %s record of %s: %v", name, typ, h.Get(gowarc.WarcTargetURI), err)
			}
			resp.Body.Close()
			out[h.Get(gowarc.WarcTargetURI)] = append(out[h.Get(gowarc.WarcTargetURI)], capture{
				typ: typ, status: resp.StatusCode,
				refersTo: h.Get(gowarc.WarcRefersToTargetURI), refDate: h.Get(gowarc.WarcRefersToDate),
				digest: h.Get(gowarc.WarcPayloadDigest)})
		})
	}
	return out
}

// Crawling the synthetic web twice with a recrawl interval of 0 (each run a
// new launch of the seeds, so every URL is due once per launch): the second
// crawl writes identical-payload-digest revisits for unchanged pages and
// full responses for the pages that changed in between, and the CDX index
// answers for both captures of every URL.
func TestRecrawlWritesRevisitsAndIndexesBoth(t *testing.T) {
	srv := startSite(t, testweb.Config{Seed: 11, Hosts: 2, PagesPerHost: 15})
	dir := t.TempDir()
	p := testProfile()
	p.Frontier.RecrawlIntervalSeconds = 0
	// Unconditional requests, so every page is fetched whole and its digest
	// compared (a 304 is checked by TestConditionalRecrawl).
	p.Fetch.SendIfModifiedSince, p.Fetch.SendIfNoneMatch = false, false
	first := runCrawlProfile(t, Config{DataDir: dir, Seeds: srv.Seeds(), Relaunch: true}, srv, p)
	want := srv.Reachable(testweb.ReachOptions{MaxHops: 20})
	if first.URIs != int64(len(want)) {
		t.Fatalf("first crawl: %d URIs, want %d", first.URIs, len(want))
	}
	srv.SetEpoch(1)
	changed := map[string]bool{}
	for _, u := range srv.Changed(0, 1) {
		changed[u] = true
	}
	if len(changed) == 0 {
		t.Fatal("the synthetic web changed no page between epochs")
	}
	// Launch timestamps have one-second resolution (14 digits), and a URI
	// finished in the same second as a launch counts as crawled in it: the
	// second launch must come in a later second than the first crawl's end.
	for next := time.Now().Truncate(time.Second).Add(time.Second); time.Now().Before(next); {
		time.Sleep(10 * time.Millisecond) // waiting for the clock itself, not a condition
	}
	second := runCrawlProfile(t, Config{DataDir: dir, Seeds: srv.Seeds(), Relaunch: true}, srv, p)
	if second.URIs != 2*int64(len(want)) {
		t.Fatalf("after the second crawl: %d URIs, want %d (every URL twice)", second.URIs, 2*len(want))
	}

	caps := capturesByURL(t, second.WARCFiles)
	revisits := 0
	for _, u := range want {
		cs := caps[u]
		// A first capture is a response, or a revisit of another URL's
		// record with the same payload (cross-URL dedup: a ?ref= variant,
		// the same script on two hosts).
		if len(cs) != 2 || cs[0].typ != gowarc.Response && (cs[0].refersTo == u || cs[0].refersTo == "") {
			t.Errorf("%s: captures %+v, want a response (or a revisit of another URL) then a second record", u, cs)
			continue
		}
		wantRevisit := !changed[u] && cs[0].status >= 200 && cs[0].status < 300
		switch got := cs[1]; {
		case wantRevisit && got.typ != gowarc.Revisit:
			t.Errorf("%s unchanged: second record is a %s, want a revisit", u, got.typ)
		case wantRevisit && (got.refersTo == "" || got.refDate == "" || got.digest != cs[0].digest):
			t.Errorf("%s: revisit refers to %q at %q with digest %s, want the first capture's payload %s",
				u, got.refersTo, got.refDate, got.digest, cs[0].digest)
		case !wantRevisit && got.typ != gowarc.Response && got.refersTo == u:
			t.Errorf("%s (changed %v, status %d): second record revisits its own URL, want a response", u, changed[u], cs[0].status)
		}
		if got := cs[1]; got.typ == gowarc.Revisit {
			revisits++
		}
	}
	if revisits == 0 {
		t.Error("no revisit records written")
	}

	// The index holds both captures of every URL.
	ix, err := cdxindex.Open(second.CDXPath, cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	api := httptest.NewServer(ix.Handler(cdxindex.HandlerOptions{ReadOnly: true}))
	t.Cleanup(api.Close)
	for _, u := range want {
		resp, err := http.Get(api.URL + "/fc?url=" + url.QueryEscape(u))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		lines := strings.Split(strings.TrimSpace(string(body)), "\n")
		if resp.StatusCode != http.StatusOK || len(lines) != 2 {
			t.Errorf("index for %s: HTTP %d, %d lines:\n%s", u, resp.StatusCode, len(lines), body)
		}
	}
}
