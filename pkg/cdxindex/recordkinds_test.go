package cdxindex

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// The crawl-time lines of each kind of capture (testdata/record-kinds.jsonl,
// through cdx.FromCrawled: a page, a redirect, both kinds of revisit, a
// dns: lookup, a renderer's resource, a proxy's response) are served as
// testdata/record-kinds.out says, byte for byte, and as OutbackCDX serves
// the same lines POSTed as CDX11: in particular the resource's empty
// status as OutbackCDX's 0, and the dns: lookup's 200 (ARCHITECTURE.md
// section 11).
func TestGoldenRecordKinds(t *testing.T) {
	data, err := os.ReadFile("testdata/record-kinds.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var lines []cdx.Line
	var body strings.Builder
	for _, s := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		ev, err := messages.DecodeCrawled([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		if l, ok := cdx.FromCrawled(ev); ok {
			lines = append(lines, l)
			body.WriteString(l.CDX11() + "\n")
		}
	}
	ix := openTest(t)
	if err := ix.Put(context.Background(), "put", lines); err != nil {
		t.Fatal(err)
	}
	h := ix.Handler(HandlerOptions{OpenWrites: true})
	mustPost(t, h, "post", body.String())

	golden, err := os.ReadFile("testdata/record-kinds.out")
	if err != nil {
		t.Fatal(err)
	}
	var query string
	var want strings.Builder
	check := func() {
		if query == "" {
			return
		}
		got := mustGet(t, h, "/put?"+query)
		if got != want.String() {
			t.Errorf("%s:\n%s\nwant\n%s", query, got, want.String())
		}
		if posted := mustGet(t, h, "/post?"+query); posted != got {
			t.Errorf("%s: the lines POSTed as CDX11 give\n%s\nPut gave\n%s", query, posted, got)
		}
	}
	for _, s := range strings.Split(strings.TrimSpace(string(golden)), "\n") {
		if q, ok := strings.CutPrefix(s, "# "); ok {
			check()
			query = q
			want.Reset()
			continue
		}
		want.WriteString(s + "\n")
	}
	check()
}
