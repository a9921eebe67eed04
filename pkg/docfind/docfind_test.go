package docfind

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

func TestLinkUp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		want   string
	}{
		{"govuk", []string{`<https://www.gov.uk/government/publications/x>; rel="up"`}, "https://www.gov.uk/government/publications/x"},
		{"relative", []string{`</pubs/x>; rel=up`}, "http://h.example/pubs/x"},
		{"among others", []string{`<http://h.example/a>; rel="alternate", <http://h.example/b>; rel="canonical up"`}, "http://h.example/b"},
		{"second header", []string{`<http://h.example/a>; rel="next"`, `<http://h.example/c>; rel="UP"`}, "http://h.example/c"},
		{"comma in url", []string{`<http://h.example/a,b>; rel="up"`}, "http://h.example/a,b"},
		{"none", []string{`<http://h.example/a>; rel="next"`}, ""},
		{"garbage", []string{`rel=up`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LinkUp("http://h.example/docs/x.pdf", tc.values); got != tc.want {
				t.Errorf("LinkUp = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestIsDocumentType(t *testing.T) {
	for mt, want := range map[string]bool{
		"application/pdf": true, "Application/PDF; charset=binary": true, "application/msword": true,
		"application/vnd.openxmlformats-officedocument.wordprocessingml.document": true,
		"application/vnd.oasis.opendocument.text":                                 true, "text/html": false, "image/png": false, "": false,
	} {
		if got := IsDocumentType(mt); got != want {
			t.Errorf("IsDocumentType(%q) = %v", mt, got)
		}
	}
}

func TestReadWatched(t *testing.T) {
	in := `{"url":"http://h.example/","targetId":7,"title":"H","source":"tid:7:http://h.example/"}
not json
{"url":"http://x/","targetId":8}

`
	got, bad := ReadWatched(strings.NewReader(in))
	if len(got) != 1 || got["tid:7:http://h.example/"].TargetID != 7 || len(bad) != 2 {
		t.Errorf("targets %v, bad %v", got, bad)
	}
}

func sha1b32(b []byte) string {
	s := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(s[:])
}

// capture writes a PDF response with the given extra headers and returns
// its event.
func capture(t *testing.T, w *warcwriter.Writer, url, via string, body []byte, headers string) messages.Crawled {
	t.Helper()
	raw := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n" + headers + "Content-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n")
	raw = append(raw, body...)
	d := sha1b32(body)
	loc, err := w.WriteCapture(context.Background(), warcwriter.Capture{URL: url, Date: time.Now(),
		Request: []byte("GET / HTTP/1.0\r\n\r\n"), Response: bytes.NewReader(raw), ResponseLength: int64(len(raw)), PayloadDigest: d})
	if err != nil {
		t.Fatal(err)
	}
	return messages.Crawled{Timestamp: messages.FormatTimestamp(time.Now()), URL: url, StatusCode: 200, Mimetype: "application/pdf",
		Via: via, Seed: "tid:7:http://h.example/", ContentDigest: &d, ContentLength: messages.Int64(int64(len(body))),
		WarcFilename: &loc.Filename, WarcOffset: &loc.Offset, WarcLength: &loc.Length, HopPath: "L"}
}

func TestFinderLandingPagesAndDedup(t *testing.T) {
	dir := t.TempDir()
	w, err := warcwriter.New(warcwriter.Config{Dir: dir, Prefix: "T", Hostname: "h"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	evs := []messages.Crawled{
		capture(t, w, "http://h.example/a.pdf", "http://h.example/list", []byte("%PDF a"), "Link: </pubs/a>; rel=\"up\"\r\n"),
		capture(t, w, "http://h.example/b.pdf", "http://h.example/list", []byte("%PDF b"), ""),
		// the same PDF again in the batch, and an HTML page
		capture(t, w, "http://h.example/a.pdf", "http://h.example/list", []byte("%PDF a"), "Link: </pubs/a>; rel=\"up\"\r\n"),
	}
	html := evs[1]
	html.URL, html.Mimetype = "http://h.example/list", "text/html"
	other := evs[1]
	other.Seed = "tid:9:http://other/"
	evs = append(evs, html, other)

	targets := Targets{"tid:7:http://h.example/": {URL: "http://h.example/", TargetID: 7, Source: "tid:7:http://h.example/"}}
	rdb := embeddedtest.Redis(t)
	f := NewFinder(targets, []string{dir}, rdb, "fc")
	ctx := context.Background()
	docs, err := f.Find(ctx, evs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"http://h.example/a.pdf": {"http://h.example/pubs/a", "link-up"},
		"http://h.example/b.pdf": {"http://h.example/list", "via"},
	}
	if len(docs) != len(want) {
		t.Fatalf("docs = %+v", docs)
	}
	for _, d := range docs {
		if w := want[d.URL]; d.LandingPage != w[0] || d.LandingFrom != w[1] || d.TargetID != 7 || d.Size != 6 {
			t.Errorf("%s: %+v, want landing %v", d.URL, d, w)
		}
	}
	if err := f.Mark(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// A recrawl: same digests, nothing new.
	again, err := f.Find(ctx, evs)
	if err != nil || len(again) != 0 {
		t.Errorf("after marking: %+v, %v", again, err)
	}
}
