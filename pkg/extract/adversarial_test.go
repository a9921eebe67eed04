package extract

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/countio"
)

// adversarialDeadline is generous: linear work on these inputs takes well
// under a second even under -race on a loaded machine, while any
// quadratic path would take hours.
const adversarialDeadline = 60 * time.Second

// within fails the test if f does not return before the deadline. A
// runaway f is left behind: the test has failed anyway and the process is
// about to report it.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	timer := time.NewTimer(adversarialDeadline)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		t.Fatalf("%s: still running after %v; extraction is not linear", what, adversarialDeadline)
	}
}

func TestAdversarialHTML(t *testing.T) {
	big := strings.Repeat("x", 50<<20)
	cases := []struct {
		name string
		doc  string
		o    HTMLOptions
		max  int // most links expected
	}{
		{"1e6 open tags", strings.Repeat("<div><span>", 1_000_000) + `<a href="/end">`, HTMLOptions{Options: Options{MaxBytes: 32 << 20}}, 1},
		{"50 MB attribute", `<a href="` + big + `">x</a><img src=/after.png>`, HTMLOptions{Options: Options{MaxBytes: 64 << 20}}, 1},
		{"50 MB event handler", `<a onclick="` + big + `">x</a>`, HTMLOptions{Options: Options{MaxBytes: 64 << 20}, Javascript: true}, 0},
		{"unterminated comment", "<!--" + strings.Repeat("<a href=x>", 1_000_000), HTMLOptions{}, 0},
		{"unterminated script", "<script>" + strings.Repeat(`"a/b.js" '`, 1_000_000), HTMLOptions{Javascript: true}, DefaultMaxLinks},
		{"unterminated attribute string", `<a href="` + strings.Repeat("/p ", 1_000_000), HTMLOptions{}, 0},
		{"conditional comments", strings.Repeat("<!--[if IE]><!--[if IE]><link rel=stylesheet href=ie.css><![endif]-->", 100_000), HTMLOptions{}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var links []Link
			var err error
			within(t, tc.name, func() {
				links, _, err = HTML(strings.NewReader(tc.doc), docURL, tc.o)
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(links) > tc.max {
				t.Errorf("%d links, at most %d expected", len(links), tc.max)
			}
		})
	}
}

func TestAdversarialJS(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{`"`, `'`, `\`, `\\\\`, `u0022`, `\u0027`, "/", ".", "a"}
	var b strings.Builder
	for b.Len() < 10<<20 {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	cases := []struct{ name, doc string }{
		{"10 MB of quotes and backslashes", b.String()},
		{"10 MB of one unterminated string", `"` + strings.Repeat(`a/\`, 10<<20/3)},
		{"10 MB of backslash-escaped quotes", strings.Repeat(`\\\\\\\\\"`, 1<<20)},
		{"10 MB of u0022 without quotes", strings.Repeat("u0027 u0022", 1<<20)},
		{"10 MB of url-like strings", strings.Repeat(`"/a/b.js",`, 1<<20)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var links []Link
			var err error
			within(t, tc.name, func() {
				links, err = JS(strings.NewReader(tc.doc), docURL, Options{MaxLinks: 100})
			})
			if err != nil || len(links) > 100 {
				t.Fatalf("%d links, err %v", len(links), err)
			}
		})
	}
}

func TestAdversarialCSS(t *testing.T) {
	cases := []struct{ name, doc string }{
		{"1e6 nested url(", strings.Repeat("url(", 1_000_000)},
		{"1e6 nested image-set(", strings.Repeat("image-set(", 1_000_000)},
		{"unterminated strings", strings.Repeat(`a{b:"`, 1_000_000)},
		{"unterminated url string", `url("` + strings.Repeat("x", 10<<20)},
		{"unterminated comment", "/*" + strings.Repeat("url(x)", 1_000_000)},
		{"1e6 imports", strings.Repeat("@import 'a.css';", 1_000_000)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var links []Link
			var err error
			within(t, tc.name, func() {
				links, err = CSS(strings.NewReader(tc.doc), docURL, Options{MaxLinks: 100})
			})
			if err != nil || len(links) > 100 {
				t.Fatalf("%d links, err %v", len(links), err)
			}
		})
	}
}

func TestAdversarialSitemap(t *testing.T) {
	t.Run("1e6 entries stop at MaxLinks", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("<urlset>")
		for i := range 1_000_000 {
			fmt.Fprintf(&b, "<url><loc>http://example.com/%d</loc></url>", i)
		}
		b.WriteString("</urlset>")
		cr := &countio.Reader{R: strings.NewReader(b.String())}
		var links []Link
		var info SitemapInfo
		var err error
		within(t, "1e6 entries", func() {
			links, info, err = Sitemap(cr, smBase, Options{MaxLinks: 1000})
		})
		if err != nil || len(links) != 1000 || !info.Truncated {
			t.Fatalf("%d links, %+v, %v", len(links), info, err)
		}
		if cr.N > int64(b.Len())/10 {
			t.Errorf("read %d of %d bytes after MaxLinks was reached", cr.N, b.Len())
		}
	})
	t.Run("billion laughs does not expand", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY lol "lol">`)
		for i := 1; i <= 9; i++ {
			fmt.Fprintf(&b, `<!ENTITY lol%d "%s">`, i, strings.Repeat(fmt.Sprintf("&lol%d;", i-1), 10))
		}
		b.WriteString(`]><urlset><url><loc>http://example.com/&lol9;</loc></url></urlset>`)
		links, _, err := Sitemap(strings.NewReader(b.String()), smBase, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(links) != 1 || links[0].URL != "http://example.com/&lol9;" {
			t.Fatalf("entity handled unexpectedly: %v", render(links))
		}
	})
	t.Run("gzip bomb stops at MaxBytes", func(t *testing.T) {
		var zb bytes.Buffer
		zw, err := gzip.NewWriterLevel(&zb, gzip.BestSpeed)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(zw, "<urlset><url><loc>http://example.com/first</loc></url>")
		spaces := bytes.Repeat([]byte(" "), 1<<20)
		for range 64 { // 64 MB of whitespace inside the document element
			_, _ = zw.Write(spaces)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		cr := &countio.Reader{R: bytes.NewReader(zb.Bytes())}
		var links []Link
		var info SitemapInfo
		within(t, "gzip bomb", func() {
			links, info, err = Sitemap(cr, smBase, Options{MaxBytes: 1 << 20})
		})
		if err != nil || len(links) != 1 || !info.Truncated {
			t.Fatalf("%v, %+v, %v", render(links), info, err)
		}
		if cr.N > int64(zb.Len())/4 {
			t.Errorf("read %d of %d compressed bytes: decompression not bounded", cr.N, zb.Len())
		}
	})
	t.Run("deep nesting", func(t *testing.T) {
		doc := "<urlset>" + strings.Repeat("<url>", 1_000_000) + "<loc>http://example.com/deep</loc>"
		var links []Link
		var err error
		within(t, "deep nesting", func() {
			links, _, err = Sitemap(strings.NewReader(doc), smBase, Options{})
		})
		if err == nil || len(links) != 0 {
			t.Fatalf("%v, %v", render(links), err)
		}
	})
}

func BenchmarkJS(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 1<<20; i++ {
		fmt.Fprintf(&sb, `function f%d(a) { var u = "/static/js/mod%d.min.js", s = 'div.menu', n = "%d.5"; return a + "text" + u; }`+"\n", i, i, i)
	}
	doc := sb.String()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := JS(strings.NewReader(doc), docURL, Options{MaxLinks: 1 << 30}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSitemap(b *testing.B) {
	locs := make([]string, 10000)
	for i := range locs {
		locs[i] = fmt.Sprintf("https://example.com/section/page-%d.html", i)
	}
	doc := urlset(locs...)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Sitemap(strings.NewReader(doc), smBase, Options{MaxLinks: 1 << 30}); err != nil {
			b.Fatal(err)
		}
	}
}
