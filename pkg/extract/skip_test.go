package extract

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/trawler-crawl/trawler/pkg/testweb/docsite"
)

// skipFragments are the pieces random documents are made of: text, tags
// the skipper drops, raw-text elements, tags with links, comments and
// broken markup, in many cases and spacings.
var skipFragments = []string{
	"hello world ", "a < b ", "x>y ", "&amp; &lt;a href=/ent&gt; ", strings.Repeat("lorem ipsum ", 5), "", " ", "\n",
	"<p>", "</p>", "<TD>", "</td>", "<h1>", "<br>", "<br/>", "</br>", "<x1>", "<Code>", "</CODE>", "<li>", "<a>", "</a>",
	"<script>", "</script>", "<SCRIPT>", "<style>", "</style>", "<title>", "</title>", "<textarea>", "</textarea>",
	"<noscript>", "</noscript>", "<plaintext>", "<xmp>", "</xmp>", "<iframe>", "</iframe>", "<noembed>", "</noembed>",
	"<noframes>", "<script/>", "<noscript/>", "<Title>", "<STYLE>",
	`<a href="/a1">`, `<a href='/a2' title="x>y">`, "<img src=/i1>", "<a href=/a3 >", `<A HREF="/a4">`,
	"<link rel=stylesheet href=/s.css>", `<base href="/base/">`, "<meta name=robots content=nofollow>",
	`<a onclick="location='/js1.html'">`, `<div style="background:url(/bg.png)">`, "<form action=/f method=get>",
	"<img srcset='/s1.png 1x, /s2.png 2x'>", `<a href="javascript:go('/jsl.html')">`, "<object data=/o.swf codebase=/cb/>",
	"<!-- c -->", "<!-- <a href=/c1> -->", "<!--[if IE]><link href=/ie.css rel=stylesheet><![endif]-->", "<!-->", "<!--",
	"-->", "<!DOCTYPE html>", "<!x>", "<?php x ?>", "<![CDATA[<a href=/cdata>]]>",
	"<", ">", "</", "</ >", "< a href=/t1>", "<a\nhref=/nl>", `<a href="/unterminated`, `"`, "'", "</p foo>", "</P >",
	"<p\t>", "<p/>", "\x00", "<p\x00>", "<a href=/x\x00y>", "<averyveryverylongtagname>", "</averyveryverylongtagname>",
	"var u='/js2.html'; ", "body{background:url(/css1.png)} ", "<a href=/after-text>", "</script ", "</style\n>",
	// Direct tags (direct.go) and near misses the tokenizer must read.
	`<a class="reference internal" href="d1.html#x">`, `<A Class='r' HREF="/d2">`, `<a href="/d3" href="/d3b">`,
	`<img src="/d4.png" alt="a>b"/>`, `<a href="/d5"/>`, `<input disabled src="/d6">`, `<a href="">`,
	`<a href="/d7&amp;x">`, "<a href=\"/d8\r\nx\">", "<a href=\"/d9\x00\">", `<a href="/d10"class="x">`,
	`<a href = "/d11">`, `<a/href="/d12">`, `<a href="/d13" onclick="go('/d14.html')">`,
	`<a ` + strings.Repeat("o", 40) + `n="x" href="/d15">`, `<a on` + strings.Repeat("x", 40) + `="go('/d16.html')">`,
	`<base href="/d-base/">`, `<meta name="robots" content="nofollow">`, `<link rel="stylesheet" href="/d17.css">`,
	`<form action="/d18" method="post">`, `<a data-x:y.z="1" href="/d19">`, `<script src="/d20.js">`, `<title lang="en">`,
	`<style media="x">`, `<a href="/d21`, `<img srcset="/d22.png 1x, /d23.png 2x">`, `<a href='/d24' title="it's">`,
}

func randomDoc(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.IntN(60) {
		b.WriteString(skipFragments[r.IntN(len(skipFragments))])
	}
	return b.String()
}

// skipCorpus is what the skipper is checked on: every golden HTML case,
// documentation-site pages and random documents.
func skipCorpus(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	_, cases := parseGolden(t, string(data))
	var docs []string
	for _, c := range cases {
		if strings.HasPrefix(c.kind, "html") {
			docs = append(docs, c.input)
		}
	}
	dir := t.TempDir()
	if err := docsite.Generate(dir, 3, 7); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{docsite.IndexFile, docsite.PagePath(1), docsite.PagePath(2)} {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		docs = append(docs, randomDoc(r))
	}
	return docs
}

// TestSkipperChangesNothing extracts every document the fast way (skipper
// and prefilter) and the reference way, read whole, a byte at a time and in halves, under each option
// that changes which tokens matter, and wants the same links and meta.
func TestSkipperChangesNothing(t *testing.T) {
	readers := map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r },
		"byte":  iotest.OneByteReader,
		"half":  iotest.HalfReader,
	}
	opts := []HTMLOptions{
		{},
		{Javascript: true, ObeyMetaNoFollow: true},
		{NoForms: true, Options: Options{MaxBytes: 300, MaxLinks: 5}},
	}
	const base = "http://example.com/dir/page.html"
	for i, doc := range skipCorpus(t) {
		for _, o := range opts {
			want, wantMeta, wantErr := htmlDoc(strings.NewReader(doc), base, o, false)
			for rname, wrap := range readers {
				got, meta, err := htmlDoc(wrap(strings.NewReader(doc)), base, o, true)
				if !reflect.DeepEqual(got, want) || meta != wantMeta || (err == nil) != (wantErr == nil) {
					t.Fatalf("document %d read %s with %+v:\n%q\nskipper: %v %+v %v\nplain:   %v %+v %v",
						i, rname, o, doc, got, meta, err, want, wantMeta, wantErr)
				}
			}
		}
	}
}

func TestSkipperReadError(t *testing.T) {
	doc := "<p>" + strings.Repeat("text ", 4000) + `<a href="/late">`
	r := io.MultiReader(strings.NewReader(doc[:9000]), iotest.ErrReader(fmt.Errorf("disk gone")))
	_, _, err := HTML(r, "http://example.com/", HTMLOptions{})
	if err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Fatalf("err = %v, want the read error", err)
	}
}

func TestPlainTag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"<p>", 3}, {"</p>", 4}, {"<TD>x", 4}, {"<h1>", 4}, {"</SCRIPT>", 9}, {"</title>", 8},
		{"<script>", 0}, {"<Style>", 0}, {"<title>", 0}, {"<textarea>", 0}, {"<noscript>", 0}, {"<xmp>", 0},
		{"<plaintext>", 0}, {"<iframe>", 0}, {"<noembed>", 0}, {"<noframes>", 0},
		{"<p >", 4}, {"<p/>", 4}, {"<a href=x>", 0}, {"<1>", 0}, {"</>", 0}, {"<", 0}, {"<p", 0}, {"</", 0},
		// Attributes the extractor ignores, written plainly, are skipped too.
		{`<span class="n">x`, 16}, {`<SPAN CLASS='n' id="a>b" >`, 26}, {`<div data-x="1" title="t"/>`, 27},
		{`<span class="n"`, 0}, {`<span class="n>`, 0}, {`<span class=n>`, 0}, {`<td nowrap>`, 0}, {`<p class="a"id="b">`, 0},
		{`<span style="x">`, 0}, {`<img class="a" src="b">`, 0}, {`<a class="x" href="y">`, 0}, {`<p onclick="f()">`, 0},
		{`<meta name="a" content="b">`, 0}, {`<form method="get">`, 0}, {`<div data-src="x">`, 0}, {`<p class="a" rel="b">`, 0},
		{`<title class="x">`, 0}, {`<script type="x">`, 0}, {`</p class="x">`, 0}, {`<p cl@ss="x">`, 0},
		{`<p aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa="x">`, 0},
		{"<!-- x -->", 0}, {"<p\x00>", 0}, {"<abcdefghijklmnop>", 18}, {"<abcdefghijklmnopq>", 0}, {"<é>", 0},
	} {
		if got := plainTag([]byte(tc.in)); got != tc.want {
			t.Errorf("plainTag(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// BenchmarkHTMLDocsPage extracts a documentation-site page (about 100 KB
// of prose, code and tables) the fast way and the reference way.
func BenchmarkHTMLDocsPage(b *testing.B) {
	dir := b.TempDir()
	if err := docsite.Generate(dir, 6, 1); err != nil {
		b.Fatal(err)
	}
	page, err := os.ReadFile(dir + "/" + docsite.PagePath(5))
	if err != nil {
		b.Fatal(err)
	}
	for _, fast := range []bool{false, true} {
		b.Run(fmt.Sprintf("fast=%v", fast), func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if _, _, err := htmlDoc(bytes.NewReader(page), "http://docs.test/pages/00005.html", HTMLOptions{}, fast); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHTMLRealPages extracts Debian's documentation (Sphinx, DocBook
// and AsciiDoc pages, what `trawler bench --site dir:` crawls) the fast way;
// its bytes/s is the extraction's share of a crawl of real pages.
func BenchmarkHTMLRealPages(b *testing.B) {
	var pages []realPage
	for _, dir := range []string{"/usr/share/doc/python3/html/library", "/usr/share/doc/postgresql-doc-15/html", "/usr/share/doc/git-doc"} {
		if _, err := os.Stat(dir); err != nil {
			b.Skipf("%s: %v (make test-deps installs it)", dir, err)
		}
		pages = append(pages, realPages(b, []string{dir})...)
	}
	var size int64
	for _, p := range pages {
		size += int64(len(p.body))
	}
	b.SetBytes(size)
	for b.Loop() {
		for _, p := range pages {
			if _, _, err := HTML(bytes.NewReader(p.body), "http://docs.test/"+p.path, HTMLOptions{Javascript: true}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
