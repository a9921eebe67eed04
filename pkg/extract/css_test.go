package extract

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

const stylesheetURL = "http://example.com/css/site.css"

func TestCSS(t *testing.T) {
	cases := []struct {
		name string
		css  string
		want []string // resolved URLs, all E =EMBED_MISC
	}{
		{"url forms", `a{background:url(a.png)} b{background:URL( "b.png" )} c{background:url('c.png')}`,
			[]string{"http://example.com/css/a.png", "http://example.com/css/b.png", "http://example.com/css/c.png"}},
		{"import forms", `@import "one.css"; @import url(two.css) screen; @IMPORT 'three.css';`,
			[]string{"http://example.com/css/one.css", "http://example.com/css/two.css", "http://example.com/css/three.css"}},
		{"absolute and root", `x{src:url(/fonts/f.woff2) format("woff2"), url(https://cdn.example/f.woff)}`,
			[]string{"http://example.com/fonts/f.woff2", "https://cdn.example/f.woff"}},
		{"comments skipped", `/* url(no.png) */ a{b:url(yes.png)} /* unterminated url(no2.png)`,
			[]string{"http://example.com/css/yes.png"}},
		{"strings are not urls", `a::after{content:"url(no.png)"} b{c:url(yes.png)}`,
			[]string{"http://example.com/css/yes.png"}},
		{"escapes", `a{b:url(sp\ ace\(1\).png)} c{d:url("q\"uote.png")} e{f:url(\68 ex.png)}`,
			[]string{"http://example.com/css/sp%20ace%281%29.png", "http://example.com/css/q%22uote.png", "http://example.com/css/hex.png"}},
		{"identifier ending in url is not url()", `a{b:myurl(no.png); c:-x-url(no2.png)}`, nil},
		{"image-set", `a{background-image:image-set("lo.png" 1x, url(hi.png) 2x, "av.avif" type("image/avif"))}`,
			[]string{"http://example.com/css/lo.png", "http://example.com/css/hi.png", "http://example.com/css/av.avif"}},
		{"webkit image-set", `a{b:-webkit-image-set('w.png' 1x)}`, []string{"http://example.com/css/w.png"}},
		{"bad url skipped", `a{b:url(bad url.png)} c{d:url(ok.png)}`, []string{"http://example.com/css/ok.png"}},
		{"empty and data urls dropped", `a{b:url()} c{d:url(data:image/png;base64,AAA)} e{f:url("  ")}`, nil},
		{"unterminated", `a{b:url("open.png`, []string{"http://example.com/css/open.png"}},
		{"duplicates", `a{b:url(x.png)} c{d:url("x.png")}`, []string{"http://example.com/css/x.png"}},
		{"escaped at end", `a{b:url(x.png\`, []string{"http://example.com/css/x.png"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			links, err := CSS(strings.NewReader(tc.css), stylesheetURL, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range links {
				if l.Hop != 'E' || l.Context != ContextEmbedMisc {
					t.Fatalf("link %+v: want E %s", l, ContextEmbedMisc)
				}
				got = append(got, l.URL)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCSSMaxLinks(t *testing.T) {
	css := strings.Repeat("a{b:url(x.png)} ", 10) + "c{d:url(1.png)} e{f:url(2.png)} g{h:url(3.png)}"
	links, err := CSS(strings.NewReader(css), stylesheetURL, Options{MaxLinks: 2})
	if err != nil || len(links) != 2 {
		t.Fatalf("%d links, err %v", len(links), err)
	}
}

func TestHeaders(t *testing.T) {
	h := http.Header{}
	h.Add("Location", "/moved?x=1#frag")
	h.Add("Content-Location", "page.en.html")
	h.Add("Refresh", "3; url=https://other.example/")
	h.Add("Link", `</style.css>; rel=stylesheet, <https://example.com/next>; rel="next"; title="a, b", </x>; rel=preconnect`)
	h.Add("Link", `<//cdn.example/font.woff2>; rel=preload; as=font, </no-rel>, garbage, <mailto:a@b.c>; rel=author, </unterminated`)
	got := render(Headers(h, docURL, Options{}))
	want := []string{
		"R http://example.com/moved?x=1 Location:",
		"R http://example.com/dir/page.en.html Content-Location:",
		"R https://other.example/ Refresh:",
		"E http://example.com/style.css Link[rel='stylesheet']:",
		"L https://example.com/next Link:",
		"E http://cdn.example/font.woff2 Link[rel='preload']:",
		"L http://example.com/no-rel Link:",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := Headers(http.Header{"Location": {"javascript:alert(1)"}}, docURL, Options{}); len(got) != 0 {
		t.Fatalf("javascript Location kept: %v", got)
	}
}

func TestSrcsetParsing(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"a.png", []string{"a.png"}},
		{"a.png 1x, b.png 2x", []string{"a.png", "b.png"}},
		{"a.png,b.png", []string{"a.png,b.png"}}, // commas inside a URL belong to it
		{"img,v=1.png 100w, other.png 200w", []string{"img,v=1.png", "other.png"}},
		{" , ,a.png  2x  ,  ", []string{"a.png"}},
		{"a.png (max-width: 10px, foo) 1x, b.png", []string{"a.png", "b.png"}},
		{"", nil},
		{",,,", nil},
	}
	for _, tc := range cases {
		if got := srcsetURLs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("srcsetURLs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRefreshURL(t *testing.T) {
	cases := map[string]string{
		"5; url=http://a.example/":   "http://a.example/",
		"0;URL='/quoted'":            "/quoted",
		`0; url="/dq" `:              "/dq",
		"3, /comma":                  "/comma",
		"10;/no-url-prefix":          "/no-url-prefix",
		"  2.5 ;  Url = spaced.html": "spaced.html",
		"5":                          "",
		"":                           "",
		"0; url=":                    "",
	}
	for in, want := range cases {
		if got := refreshURL(in); got != want {
			t.Errorf("refreshURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRelHop(t *testing.T) {
	cases := []struct {
		rel  string
		hop  byte
		ctx  string
		okay bool
	}{
		{"stylesheet", 'E', "link[rel='stylesheet']/@href", true},
		{"Alternate StyleSheet", 'E', "link[rel='stylesheet']/@href", true},
		{"shortcut icon", 'E', "link[rel='icon']/@href", true},
		{"canonical", 'L', "link/@href", true},
		{"dns-prefetch", 0, "", false},
		{"pingback", 0, "", false},
		{"", 0, "", false},
	}
	for _, tc := range cases {
		hop, ctx, ok := relHop(tc.rel, "link", "/@href")
		if hop != tc.hop || ctx != tc.ctx || ok != tc.okay {
			t.Errorf("relHop(%q) = %c %q %v", tc.rel, hop, ctx, ok)
		}
	}
}
