package replay

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

func TestTimestamp14(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"20250506070809", "20250506070809", ""},
		{"2014", "20141231235959", ""},
		{"201402", "20140228235959", ""}, // the month's last day, as warcio clamps it
		{"2016021", "20160229235959", ""},
		{"20131709005601", "20131209005601", ""}, // a bad month clamped
		{"201410", "20141031235959", ""},
		{"2", "29991231235959", ""},
		{"", "", "want 1 to 14 digits"},
		{"202501061", "20250106235959", ""},
		{"2025-01", "", "want 1 to 14 digits"},
		{"202501010000000", "", "want 1 to 14 digits"},
	}
	for _, tc := range tests {
		got, err := Timestamp14(tc.in)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Timestamp14(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestISOToTimestamp(t *testing.T) {
	tests := []struct{ in, want string }{
		{"2013-12-26T10:11:12Z", "20131226101112"},
		{"2013-12-26T10:11:12.456Z", "20131226101112"}, // WARC/1.1's milliseconds
		{"2013-12-26", "20131226000000"},
		{"2013-02-30T00:00:00Z", ""},
		{"yesterday", ""},
	}
	for _, tc := range tests {
		got, err := isoToTimestamp(tc.in)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("isoToTimestamp(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func line(ts, mime, digest, file string) cdx.Line {
	return cdx.Line{URLKey: "test,a)/", Timestamp: ts, Original: "http://a.test/", Mimetype: mime, Status: "200",
		Digest: digest, Offset: 0, Length: 1, Filename: file}
}

// Closest first by seconds; equal distances keep the index's order.
func TestSortClosest(t *testing.T) {
	lines := []cdx.Line{
		line("20250101000010", "text/html", "A", "later-tie"),
		line("20250101000000", "text/html", "A", "earlier-tie"),
		line("20250101000006", "text/html", "A", "closest"),
		line("20241231235959", "text/html", "A", "far"),
	}
	sortClosest(lines, "20250101000005")
	var got []string
	for _, l := range lines {
		got = append(got, l.Filename)
	}
	if want := "closest later-tie earlier-tie far"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

// Revisits get the location of the earliest non-revisit with their
// digest, whatever the closest order, and its MIME type and status.
func TestResolveRevisits(t *testing.T) {
	caps := []capture{
		{Line: line("20250103000000", cdx.RevisitMime, "A", "rev-a")},
		{Line: line("20250102000000", "text/css", "A", "orig-a")},
		{Line: line("20250104000000", cdx.RevisitMime, "B", "rev-b")}, // no original
		{Line: line("20250101000000", "text/html", "A", "older-a")},
		{Line: line("20250105000000", cdx.RevisitMime, "", "rev-none")},
	}
	caps[1].Status = "203"
	resolveRevisits(caps)
	if o := caps[0].orig; o == nil || o.Filename != "older-a" || caps[0].Mimetype != "text/html" || caps[0].Status != "200" {
		t.Errorf("revisit of A: orig %+v, mime %s status %s; want older-a's", o, caps[0].Mimetype, caps[0].Status)
	}
	for _, i := range []int{1, 2, 3, 4} {
		if caps[i].orig != nil {
			t.Errorf("%s: orig %+v, want none", caps[i].Filename, caps[i].orig)
		}
	}
	if caps[2].Mimetype != cdx.RevisitMime {
		t.Errorf("unresolved revisit's mime became %s", caps[2].Mimetype)
	}
}

func TestIsSelfRedirect(t *testing.T) {
	l := cdx.Line{URLKey: "test,a)/self", Original: "http://a.test/self"}
	tests := []struct {
		req, status, location string
		want                  bool
	}{
		{"http://a.test/self", "302", "http://a.test/self/", true},
		{"http://a.test/self", "301", "https://A.test/self", true},
		{"http://a.test/self", "302", "/self", true},
		{"http://a.test/self", "302", "http://www.a.test/self", true}, // same URL key
		{"http://a.test/self", "302", "http://a.test/other", false},
		{"http://a.test/self", "304", "http://a.test/self", false},
		{"http://a.test/self", "200", "http://a.test/self", false},
		{"http://a.test/self", "302", "", false},
	}
	for _, tc := range tests {
		if got := isSelfRedirect(tc.req, l, tc.status, tc.location); got != tc.want {
			t.Errorf("isSelfRedirect(%s, %s, %s) = %v, want %v", tc.req, tc.status, tc.location, got, tc.want)
		}
	}
}

// A filter keeps whole-value matches, inverted with Invert; OutbackCDX
// gets the value quoted as a regular expression.
func TestFilters(t *testing.T) {
	lines := []cdx.Line{line("1", cdx.RevisitMime, "A", "r"), line("1", "text/html", "A", "a"), line("1", "text/html", "AB", "ab")}
	got := applyFilters(lines, []Filter{{Field: "mime", Value: cdx.RevisitMime, Invert: true}, {Field: "digest", Value: "A"}})
	if len(got) != 1 || got[0].Filename != "a" {
		t.Errorf("filtered to %+v, want line a", got)
	}
	q := Query{URL: "http://a.test/x?y", Closest: "2025", Filters: []Filter{{Field: "mime", Value: "warc/revisit", Invert: true}, {Field: "digest", Value: "A.B"}}, Limit: 3}
	want := "closest=2025&filter=%21mime%3Awarc%2Frevisit&filter=digest%3AA%5C.B&limit=3&matchType=exact&sort=closest&url=http%3A%2F%2Fa.test%2Fx%3Fy"
	if got := q.values().Encode(); got != want {
		t.Errorf("query %s\nwant  %s", got, want)
	}
}

// The OutbackCDX client says what went wrong with an answer it cannot use.
func TestOutbackCDXErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.Error(w, "Collection missing does not exist", http.StatusNotFound)
		case "/partial":
			_, _ = io.WriteString(w, line("20250101000000", "text/html", "A", "f").CDX11()+"\nwarning: output may be incomplete, error occurred processing captures\n")
		}
	}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct{ collection, want string }{
		{"missing", "404 Not Found: Collection missing does not exist"},
		{"partial", "warning: output may be incomplete"},
	} {
		o, err := NewOutbackCDX(OutbackCDXOptions{URL: srv.URL, Collection: tc.collection})
		if err != nil {
			t.Fatal(err)
		}
		_, err = o.Query(context.Background(), Query{URL: "http://a.test/"})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.collection, err, tc.want)
		}
	}
	for _, o := range []OutbackCDXOptions{{URL: "ftp://x", Collection: "fc"}, {URL: srv.URL}, {URL: srv.URL, Collection: "a/b"}} {
		if _, err := NewOutbackCDX(o); err == nil {
			t.Errorf("NewOutbackCDX(%+v) accepted", o)
		}
	}
	if _, err := New(Options{Records: NewDirs()}); err == nil {
		t.Error("New without an Index accepted")
	}
}

// Live directories also find a file still being written (<name>.open);
// plain ones, as replay tools, do not. Names with a directory part are
// refused by both.
func TestLiveDirs(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.warc.gz.open"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewDirs(dir).Path("a.warc.gz"); !errors.Is(err, ErrUnknownFile) {
		t.Errorf("plain dirs found an open file: %v", err)
	}
	if p, err := NewLiveDirs(dir).Path("a.warc.gz"); err != nil || p != filepath.Join(dir, "a.warc.gz.open") {
		t.Errorf("live dirs: %q, %v", p, err)
	}
	if _, err := NewLiveDirs(dir).Path("../a.warc.gz"); !errors.Is(err, ErrUnknownFile) {
		t.Errorf("live dirs took a path: %v", err)
	}
}
