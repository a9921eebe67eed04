package cdxindex

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// Query in process returns the captures the HTTP API returns for the same
// parameters, in the same order: the two are one query engine.
func TestQueryInProcessMatchesAPI(t *testing.T) {
	data, err := os.ReadFile("testdata/semantics.cdx")
	if err != nil {
		t.Fatal(err)
	}
	ix := openTest(t)
	h := ix.Handler(HandlerOptions{OpenWrites: true})
	mustPost(t, h, "sem", string(data))
	for _, raw := range []string{
		"url=http://a.org/",
		"url=http://a.org/&sort=closest&closest=20060129000000",
		"url=http://a.org/&sort=closest&closest=20070101000000&limit=2",
		"url=http://a.org/&sort=closest&closest=20060129000000&filter=!mimetype:image/png&filter=status:200",
		"url=http://a.org/&sort=reverse&from=2006&to=2007",
		"url=http://a.org/page*",
		"url=http://a.org/nothing",
	} {
		t.Run(raw, func(t *testing.T) {
			params, err := url.ParseQuery(raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ix.Query(context.Background(), "sem", params)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, l := range got {
				b.WriteString(l.CDX11() + "\n")
			}
			if want := cdx11Only(t, mustGet(t, h, "/sem?"+raw)); b.String() != want {
				t.Errorf("in process:\n%s\nHTTP API:\n%s", b.String(), want)
			}
		})
	}
}

// cdx11Only re-formats the API's text output through cdx.Line, so that
// "-" and empty fields compare the same way on both sides.
func cdx11Only(t *testing.T, body string) string {
	t.Helper()
	var b strings.Builder
	for _, s := range strings.Split(strings.TrimSpace(body), "\n") {
		if s == "" {
			continue
		}
		l, err := cdx.ParseCDX11(s)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(l.CDX11() + "\n")
	}
	return b.String()
}

func TestQueryInProcessErrors(t *testing.T) {
	ix := openTest(t)
	mustPost(t, ix.Handler(HandlerOptions{OpenWrites: true}), "fc", "org,a)/ 20050101000000 http://a.org/ text/html 200 AAAA - - 10 0 w.warc.gz\n")
	tests := []struct {
		name, collection, query string
		want                    string
		is                      error
	}{
		{"unknown collection", "nope", "url=http://a.org/", `no such collection: "nope"`, ErrNoCollection},
		{"bad sort", "fc", "url=http://a.org/&sort=sideways", "no enum constant outbackcdx.Query.Sort.SIDEWAYS", nil},
		{"bad filter", "fc", "url=http://a.org/&filter=nofield:x", "no such capture field: nofield", nil},
		{"no url", "fc", "limit=1", "exactly one of 'url' or 'urlkey' is required", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			params, _ := url.ParseQuery(tc.query)
			_, err := ix.Query(context.Background(), tc.collection, params)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ix.Query(ctx, "fc", url.Values{"url": {"http://a.org/"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled query: %v, want context.Canceled", err)
	}
}
