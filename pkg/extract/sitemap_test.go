package extract

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

const smBase = "http://example.com/sitemap.xml"

func urlset(locs ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, l := range locs {
		b.WriteString("<url><loc>" + l + "</loc></url>\n")
	}
	b.WriteString("</urlset>")
	return b.String()
}

func sitemapURLs(links []Link) []string {
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = l.URL
	}
	return out
}

func TestSitemapVariants(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want []string
	}{
		{"BOM and whitespace before XML", "\ufeff \n" + urlset("http://example.com/a"), []string{"http://example.com/a"}},
		{"no namespace", `<urlset><url><loc>http://example.com/n</loc></url></urlset>`, []string{"http://example.com/n"}},
		{"latin-1 declared", `<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>http://example.com/l</loc></url></urlset>`, []string{"http://example.com/l"}},
		{"loc outside url ignored", `<urlset><loc>http://example.com/stray</loc><url><x><loc>http://example.com/deep</loc></x></url></urlset>`, nil},
		{"sitemap loc in urlset ignored", `<urlset><sitemap><loc>http://example.com/s.xml</loc></sitemap></urlset>`, nil},
		{"duplicates dropped, fragments stripped", urlset("http://example.com/d#1", "http://example.com/d#2"), []string{"http://example.com/d"}},
		{"non-http schemes dropped", urlset("ftp://example.com/f", "javascript:alert(1)"), nil},
		{"overlong loc dropped", urlset("http://example.com/"+strings.Repeat("x", 5000), "http://example.com/ok"), []string{"http://example.com/ok"}},
		{"text with CRLF", "http://example.com/1\r\nhttp://example.com/2\r\n", []string{"http://example.com/1", "http://example.com/2"}},
		{"junk after the document element ignored", urlset("http://example.com/a") + "<url><loc>http://example.com/b</loc></url></x><", []string{"http://example.com/a"}},
		{"text overlong line skipped", "http://example.com/" + strings.Repeat("y", 100000) + "\nhttp://example.com/after", []string{"http://example.com/after"}},
		{"text without final newline", "http://example.com/last", []string{"http://example.com/last"}},
		{"empty", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			links, info, err := Sitemap(strings.NewReader(tc.doc), smBase, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := sitemapURLs(links); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if info.Index || info.Truncated {
				t.Errorf("info %+v", info)
			}
		})
	}
}

func TestSitemapBadInput(t *testing.T) {
	cases := []struct {
		name     string
		doc      []byte
		wantErr  string
		wantURLs []string
	}{
		{"html is not a sitemap", []byte(`<!DOCTYPE html><html><a href="/x">`), "root element <html> is not urlset or sitemapindex", nil},
		{"unclosed attribute quote", []byte("<urlset>\n<url><loc>http://example.com/a</loc></url>\n<url x=\"><loc>http://example.com/b</loc></url></urlset>"),
			"XML line 3", []string{"http://example.com/a"}},
		{"broken markup mid-file", []byte("<urlset>\n<url><loc>http://example.com/a</loc></url>\n<url><loc>http://example.com/b</loc><</url>"),
			"XML line 3", []string{"http://example.com/a", "http://example.com/b"}},
		{"invalid UTF-8", []byte("<urlset><url><loc>http://example.com/\xff\xfe</loc></url></urlset>"), "XML line 1", nil},
		{"unterminated document", []byte("<urlset><url><loc>http://example.com/a</loc></url>\n<url><loc>http://ex"), "XML line 2: document ends inside <loc>", []string{"http://example.com/a"}},
		{"corrupt gzip", append(gzipBytes(t, []byte(urlset("http://example.com/a")))[:20], bytes.Repeat([]byte{0xff}, 64)...), "gzip stream broken after", nil},
		{"truncated gzip", gzipBytes(t, []byte(urlset("http://example.com/a", "http://example.com/b")))[:60], "gzip stream broken after", nil},
		{"gzip header only", []byte{0x1f, 0x8b, 0x08}, "gzip header", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			links, _, err := Sitemap(bytes.NewReader(tc.doc), smBase, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
			}
			if strings.Contains(tc.wantErr, "XML") || strings.Contains(tc.wantErr, "root") {
				if !errors.Is(err, ErrMalformed) {
					t.Errorf("%v is not ErrMalformed", err)
				}
			}
			if got := sitemapURLs(links); !slices.Equal(got, tc.wantURLs) {
				t.Errorf("links %q, want %q", got, tc.wantURLs)
			}
		})
	}
}

func TestSitemapReadError(t *testing.T) {
	boom := errors.New("reset by peer")
	doc := urlset("http://example.com/a")
	links, _, err := Sitemap(&failingReader{data: []byte(doc[:len(doc)-10]), err: boom}, smBase, Options{})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), fmt.Sprintf("read failed at byte %d", len(doc)-10)) {
		t.Fatalf("err = %v", err)
	}
	if len(links) != 1 {
		t.Errorf("links before the failure lost: %v", links)
	}
	_, _, err = Sitemap(&failingReader{data: gzipBytes(t, []byte(doc))[:30], err: boom}, smBase, Options{})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("gzip read err = %v", err)
	}
}

func TestSitemapLimits(t *testing.T) {
	locs := make([]string, 50)
	for i := range locs {
		locs[i] = fmt.Sprintf("http://example.com/%d", i)
	}
	doc := urlset(locs...)
	links, info, err := Sitemap(strings.NewReader(doc), smBase, Options{MaxLinks: 10})
	if err != nil || len(links) != 10 || !info.Truncated {
		t.Fatalf("MaxLinks: %d links, %+v, %v", len(links), info, err)
	}
	links, info, err = Sitemap(strings.NewReader(doc), smBase, Options{MaxBytes: int64(strings.Index(doc, "/20<"))})
	if err != nil || len(links) != 20 || !info.Truncated {
		t.Fatalf("MaxBytes: %d links, %+v, %v", len(links), info, err)
	}
	links, info, err = Sitemap(strings.NewReader(doc), smBase, Options{MaxBytes: int64(len(doc))})
	if err != nil || len(links) != 50 || info.Truncated {
		t.Fatalf("exact MaxBytes: %d links, %+v, %v", len(links), info, err)
	}
}

func TestLooksLikeSitemap(t *testing.T) {
	xmlDoc := []byte(urlset("http://example.com/a"))
	index := []byte(`<?xml version="1.0"?><!-- generated --><sitemapindex xmlns="x"><sitemap>`)
	cases := []struct {
		name string
		mime string
		head []byte
		want bool
	}{
		{"urlset", "text/xml; charset=utf-8", xmlDoc, true},
		{"index", "application/xml", index, true},
		{"unknown type", "", xmlDoc, true},
		{"gzip", "application/x-gzip", gzipBytes(t, xmlDoc), true},
		{"gzip head cut short", "application/octet-stream", gzipBytes(t, xmlDoc)[:len(gzipBytes(t, xmlDoc))-10], true},
		{"prefixed", "application/xml", []byte(`<s:urlset xmlns:s="x">`), true},
		{"html type", "text/html", xmlDoc, false},
		{"rss", "application/rss+xml", []byte(`<?xml version="1.0"?><rss><channel>`), false},
		{"text", "text/plain", []byte("http://example.com/a\n"), false},
		{"garbage", "application/xml", []byte("\x00\x01<<<"), false},
		{"broken gzip", "application/gzip", []byte{0x1f, 0x8b, 0, 0}, false},
		{"empty", "application/xml", nil, false},
	}
	for _, tc := range cases {
		if got := LooksLikeSitemap(tc.mime, tc.head); got != tc.want {
			t.Errorf("%s: LooksLikeSitemap = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestRefs(t *testing.T) {
	refs := []string{" /a.xml ", "http://example.com/a.xml", "", "#frag", "mailto:x@y", "//other.example/s.xml", "b.xml", "c.xml"}
	got := render(Refs("http://example.com/robots.txt", refs, hopManifest, ContextManifestMisc, Options{MaxLinks: 3}))
	want := []string{
		"M http://example.com/a.xml =MANIFEST_MISC",
		"M http://other.example/s.xml =MANIFEST_MISC",
		"M http://example.com/b.xml =MANIFEST_MISC",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := Refs("http://example.com/", nil, hopManifest, ContextManifestMisc, Options{}); len(got) != 0 {
		t.Errorf("no refs gave %v", got)
	}
}
