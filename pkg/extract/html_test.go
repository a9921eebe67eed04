package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

const docURL = "http://example.com/dir/page.html"

// render formats links as "HOP URL CONTEXT" lines for readable diffs.
func render(links []Link) []string {
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = fmt.Sprintf("%c %s %s", l.Hop, l.URL, l.Context)
	}
	return out
}

func extractHTML(t *testing.T, doc string, o HTMLOptions) ([]string, Meta) {
	t.Helper()
	links, meta, err := HTML(strings.NewReader(doc), docURL, o)
	if err != nil {
		t.Fatalf("HTML: %v", err)
	}
	return render(links), meta
}

func TestHTMLElements(t *testing.T) {
	cases := []struct {
		name string
		doc  string
		want []string
	}{
		{"a href", `<a href="next.html">x</a>`, []string{"L http://example.com/dir/next.html a/@href"}},
		{"area href", `<map><area href="/m" shape=rect></map>`, []string{"L http://example.com/m area/@href"}},
		{"img src and srcset", `<img src="a.png" srcset="b.png 2x, c.png 3x">`, []string{
			"E http://example.com/dir/a.png img/@src",
			"E http://example.com/dir/b.png img/@srcset",
			"E http://example.com/dir/c.png img/@srcset"}},
		{"img lowsrc longdesc usemap", `<img lowsrc=l.gif longdesc=d.html usemap=/map>`, []string{
			"E http://example.com/dir/l.gif img/@lowsrc",
			"E http://example.com/dir/d.html img/@longdesc",
			"E http://example.com/map img/@usemap"}},
		{"lazy images", `<img data-src="lazy.jpg" data-srcset="s1.jpg 1x, s2.jpg 2x">`, []string{
			"E http://example.com/dir/lazy.jpg img/@data-src",
			"E http://example.com/dir/s1.jpg img/@data-srcset",
			"E http://example.com/dir/s2.jpg img/@data-srcset"}},
		{"script src", `<script src="/js/app.js"></script>`, []string{"E http://example.com/js/app.js script/@src"}},
		{"iframe and frame embed", `<iframe src="if.html"></iframe><frameset><frame src="f.html"></frameset>`, []string{
			"E http://example.com/dir/if.html iframe/@src",
			"E http://example.com/dir/f.html frame/@src"}},
		{"embed and object", `<embed src="movie.swf"><object data="obj.svg"></object>`, []string{
			"E http://example.com/dir/movie.swf embed/@src",
			"E http://example.com/dir/obj.svg object/@data"}},
		{"object codebase", `<object codebase="http://cdn.example/lib/" data="x.swf" archive="a.jar b.jar"></object>`, []string{
			"L http://cdn.example/lib/ object/@codebase",
			"E http://cdn.example/lib/x.swf object/@data",
			"E http://cdn.example/lib/a.jar object/@archive",
			"E http://cdn.example/lib/b.jar object/@archive"}},
		{"applet code", `<applet code="Game" codebase="/classes/"></applet>`, []string{
			"L http://example.com/classes/ applet/@codebase",
			"E http://example.com/classes/Game.class applet/@code"}},
		{"video audio source track", `<video src=v.mp4 poster=p.jpg><source src=v.webm srcset="a.webp"><track src=subs.vtt></video><audio src=/a.mp3></audio>`, []string{
			"E http://example.com/dir/v.mp4 video/@src",
			"E http://example.com/dir/p.jpg video/@poster",
			"E http://example.com/dir/v.webm source/@src",
			"E http://example.com/dir/a.webp source/@srcset",
			"E http://example.com/dir/subs.vtt track/@src",
			"E http://example.com/a.mp3 audio/@src"}},
		{"link rels", `<link rel="stylesheet" href="s.css"><link rel="shortcut icon" href="/favicon.ico"><link rel=alternate href=feed.xml><link rel=preconnect href=//cdn.example><link rel=pingback href=/xmlrpc><link href=norel.html><link rel="preload" imagesrcset="i1.png 1x, i2.png 2x">`, []string{
			"E http://example.com/dir/s.css link[rel='stylesheet']/@href",
			"E http://example.com/favicon.ico link[rel='icon']/@href",
			"L http://example.com/dir/feed.xml link/@href",
			"E http://example.com/dir/i1.png link/@imagesrcset",
			"E http://example.com/dir/i2.png link/@imagesrcset"}},
		{"body and table background", `<body background="bg.gif"><table background=t.gif><td background=c.gif>`, []string{
			"E http://example.com/dir/bg.gif body/@background",
			"E http://example.com/dir/t.gif table/@background",
			"E http://example.com/dir/c.gif td/@background"}},
		{"blockquote cite", `<blockquote cite="/src">q</blockquote>`, []string{"L http://example.com/src blockquote/@cite"}},
		{"input image", `<input type=image src="go.png">`, []string{"E http://example.com/dir/go.png input/@src"}},
		{"forms", `<form action="/search"></form><form action="/s2" method="GET"></form><form action="/post" method=post></form>`, []string{
			"L http://example.com/search form/@action",
			"L http://example.com/s2 form/@action"}},
		{"meta refresh", `<meta http-equiv="Refresh" content="5; URL='/moved'">`, []string{"R http://example.com/moved meta"}},
		{"meta og:image", `<meta property="og:image" content="https://img.example/x.jpg"><meta name="description" content="not a url">`, []string{
			"X https://img.example/x.jpg meta"}},
		{"inline style", `<div style="background: url('bg.png')"></div>`, []string{"E http://example.com/dir/bg.png =EMBED_MISC"}},
		{"style block", "<style>@import 'theme.css';\nbody { background: url(/b.png) }</style><p style=x>", []string{
			"E http://example.com/dir/theme.css =EMBED_MISC",
			"E http://example.com/b.png =EMBED_MISC"}},
		{"style block text is not markup", `<style>/* <a href="no.html"> */</style><a href=yes.html>`, []string{
			"L http://example.com/dir/yes.html a/@href"}},
		{"script text is not markup", `<script>var s = '<a href="no.html">';</script><a href=yes.html>`, []string{
			"L http://example.com/dir/yes.html a/@href"}},
		{"noscript content scanned", `<noscript><img src="pixel.gif"></noscript>`, []string{"E http://example.com/dir/pixel.gif img/@src"}},
		{"conditional comment", `<!--[if lt IE 9]><link rel=stylesheet href="ie.css"><![endif]--><!-- <a href="hidden.html"> -->`, []string{
			"E http://example.com/dir/ie.css link[rel='stylesheet']/@href"}},
		{"entities decoded", `<a href="q?a=1&amp;b=2">`, []string{"L http://example.com/dir/q?a=1&b=2 a/@href"}},
		{"whitespace in attribute", "<a href=\"  spaced\n/path.html \">", []string{"L http://example.com/dir/spaced/path.html a/@href"}},
		{"fragments stripped, fragment-only dropped", `<a href="#top"><a href="other.html#s">`, []string{"L http://example.com/dir/other.html a/@href"}},
		{"unsupported schemes", `<a href="javascript:void(0)"><a href="mailto:x@example.com"><img src="data:image/png;base64,AAAA"><a href="tel:123"><a href="ftp://f.example/">`, nil},
		{"dedupe same hop, keep other hop", `<a href=x.html><a href="x.html"><img src=x.html>`, []string{
			"L http://example.com/dir/x.html a/@href",
			"E http://example.com/dir/x.html img/@src"}},
		{"upper-case markup", `<A HREF="UP.HTML"><IMG SRC=I.GIF>`, []string{
			"L http://example.com/dir/UP.HTML a/@href",
			"E http://example.com/dir/I.GIF img/@src"}},
		{"protocol-relative", `<a href="//other.example/p">`, []string{"L http://other.example/p a/@href"}},
		{"empty href", `<a href=""><a href>`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := extractHTML(t, tc.doc, HTMLOptions{})
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestNoForms(t *testing.T) {
	got, _ := extractHTML(t, `<form action="/search"></form><a href=/a>`, HTMLOptions{NoForms: true})
	if !slices.Equal(got, []string{"L http://example.com/a a/@href"}) {
		t.Fatalf("got %v", got)
	}
}

func TestBaseHref(t *testing.T) {
	doc := `<a href="before.html"><base href="http://cdn.example/root/"><base href="/ignored/"><a href="after.html"><img src="/abs.png">`
	got, meta := extractHTML(t, doc, HTMLOptions{})
	want := []string{
		"L http://example.com/dir/before.html a/@href",
		"L http://cdn.example/root/ base/@href",
		"L http://cdn.example/ignored/ base/@href",
		"L http://cdn.example/root/after.html a/@href",
		"E http://cdn.example/abs.png img/@src",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s", strings.Join(got, "\n"))
	}
	if meta.Base != "http://cdn.example/root/" {
		t.Fatalf("meta base %q", meta.Base)
	}
	_, meta = extractHTML(t, `<base href="javascript:alert(1)"><a href=x>`, HTMLOptions{})
	if meta.Base != docURL {
		t.Fatalf("javascript: base accepted: %q", meta.Base)
	}
}

func TestMetaRobots(t *testing.T) {
	doc := `<link rel=stylesheet href=s.css><meta name="ROBOTS" content="NOINDEX, NoFollow"><a href=after.html>`
	got, meta := extractHTML(t, doc, HTMLOptions{})
	if !meta.NoFollow || !meta.NoIndex || len(got) != 2 {
		t.Fatalf("not obeying: meta %+v links %v", meta, got)
	}
	got, meta = extractHTML(t, doc, HTMLOptions{ObeyMetaNoFollow: true})
	if !meta.NoFollow || !slices.Equal(got, []string{"E http://example.com/dir/s.css link[rel='stylesheet']/@href"}) {
		t.Fatalf("obeying: meta %+v links %v", meta, got)
	}
	_, meta = extractHTML(t, `<meta name=robots content=none>`, HTMLOptions{})
	if !meta.NoFollow || !meta.NoIndex {
		t.Fatalf("none: %+v", meta)
	}
	_, meta = extractHTML(t, `<meta name=robots content="index,follow">`, HTMLOptions{})
	if meta.NoFollow || meta.NoIndex {
		t.Fatalf("index,follow: %+v", meta)
	}
}

func TestMalformedHTML(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"unclosed tags and quotes", `<div><a href="a.html>text<img src=b.png`, nil},
		{"unquoted and stray", `<<a href=ok.html>>< img src=x>`, []string{"L http://example.com/dir/ok.html a/@href"}},
		{"duplicate attribute first wins", `<a href=first.html href=second.html>`, []string{"L http://example.com/dir/first.html a/@href"}},
		{"nul bytes", "<a href=\"n\x00.html\">", []string{"L http://example.com/dir/n%EF%BF%BD.html a/@href"}},
		{"unparseable url", `<a href="http://[::1">`, nil},
		{"unterminated comment", `<a href=a.html><!-- <a href=b.html>`, []string{"L http://example.com/dir/a.html a/@href"}},
		{"unterminated script", `<script>document.write('<a href=x>')`, nil},
		{"eof in tag", `<a href=a.html><img src="b.png"`, []string{"L http://example.com/dir/a.html a/@href"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := extractHTML(t, tc.doc, HTMLOptions{})
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHugeAttributeValues(t *testing.T) {
	huge := strings.Repeat("A", 1<<20)
	doc := `<img src="data:image/png;base64,` + huge + `"><a href="` + huge + `"><a title="` + huge + `" href=ok.html>`
	got, _ := extractHTML(t, doc, HTMLOptions{Options: Options{MaxBytes: 8 << 20}})
	if !slices.Equal(got, []string{"L http://example.com/dir/ok.html a/@href"}) {
		t.Fatalf("got %d links: %.200q", len(got), got)
	}
}

func TestGarbage(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	garbage := make([]byte, 1<<20)
	for i := range garbage {
		garbage[i] = byte(r.Uint32())
	}
	// Sprinkle markup fragments so the tokenizer takes every path.
	for _, frag := range []string{"<a href=", "<img src='", "<!--", "<style>", "<script>", "<base href=", "url(", "\"", "<meta http-equiv=refresh content='"} {
		for k := 0; k < 200; k++ {
			copy(garbage[r.IntN(len(garbage)-20):], frag)
		}
	}
	start := time.Now()
	links, _, err := HTML(bytes.NewReader(garbage), docURL, HTMLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("1 MB of garbage took %v", time.Since(start))
	}
	for _, l := range links {
		if !strings.HasPrefix(l.URL, "http://") && !strings.HasPrefix(l.URL, "https://") || len(l.URL) > DefaultMaxURLLength {
			t.Fatalf("bad link out of garbage: %q", l.URL)
		}
	}
	if _, err := CSS(bytes.NewReader(garbage), docURL, Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestLimits(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, `<a href="p%d.html">`, i)
	}
	links, meta, err := HTML(strings.NewReader(b.String()), docURL, HTMLOptions{Options: Options{MaxLinks: 10}})
	if err != nil || len(links) != 10 || !meta.Truncated {
		t.Fatalf("MaxLinks: %d links, meta %+v, err %v", len(links), meta, err)
	}
	if links[9].URL != "http://example.com/dir/p9.html" {
		t.Fatalf("kept the wrong links: last %s", links[9].URL)
	}
	doc := `<a href=a.html>` + strings.Repeat(" ", 1000) + `<a href=b.html>`
	links, meta, _ = HTML(strings.NewReader(doc), docURL, HTMLOptions{Options: Options{MaxBytes: 500}})
	if len(links) != 1 || !meta.Truncated {
		t.Fatalf("MaxBytes: %v, meta %+v", render(links), meta)
	}
	links, meta, _ = HTML(strings.NewReader(doc), docURL, HTMLOptions{Options: Options{MaxBytes: int64(len(doc))}})
	if len(links) != 2 || meta.Truncated {
		t.Fatalf("exact MaxBytes: %v, meta %+v", render(links), meta)
	}
	long := "http://example.com/" + strings.Repeat("x", 3000)
	links, _, _ = HTML(strings.NewReader(`<a href="`+long+`">`), docURL, HTMLOptions{})
	if len(links) != 0 {
		t.Fatal("over-long URL kept")
	}
}

func TestResolveHook(t *testing.T) {
	var calls []string
	hook := func(base, ref string) (string, error) {
		calls = append(calls, base+"|"+ref)
		if ref == "bad" {
			return "", errors.New("refused")
		}
		return "https://canon.example/" + ref, nil
	}
	links, _, err := HTML(strings.NewReader(`<a href=x><a href=bad>`), docURL, HTMLOptions{Options: Options{Resolve: hook}})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(links); !slices.Equal(got, []string{"L https://canon.example/x a/@href"}) {
		t.Fatalf("got %v", got)
	}
	if !slices.Equal(calls, []string{docURL + "|x", docURL + "|bad"}) {
		t.Fatalf("hook calls %v", calls)
	}
}

// failingReader returns data and then an error.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReadErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	links, _, err := HTML(&failingReader{data: []byte(`<a href=a.html> <a href=b.html>`), err: boom}, docURL, HTMLOptions{})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "byte 31") {
		t.Fatalf("error %v should wrap the cause and give the position", err)
	}
	if len(links) != 2 {
		t.Fatalf("links before the failure lost: %v", render(links))
	}
	_, err = CSS(&failingReader{data: []byte(`a{}`), err: boom}, docURL, Options{})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "byte 3") {
		t.Fatalf("CSS error %v", err)
	}
	if _, _, err := HTML(io.LimitReader(strings.NewReader("<a href=x>"), 3), docURL, HTMLOptions{}); err != nil {
		t.Fatalf("plain EOF reported as error: %v", err)
	}
}
