package extract

import (
	"bufio"
	"bytes"
	"errors"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Fuzz targets for every extractor: whatever a server sends, extraction
// stops (inputs are bounded by Options), never panics, and every link it
// returns is an absolute URL that parses, within MaxURLLength, with a known
// hop letter and a context, at most MaxLinks of them and no repeats.

// fuzzOptions keeps each exec small: a few KiB read, few links kept, so
// the limits themselves are exercised too.
var fuzzOptions = Options{MaxLinks: 50, MaxBytes: 64 << 10, MaxURLLength: 512}

// seedGolden adds the inputs of the golden cases of the given kinds.
func seedGolden(f *testing.F, kinds ...string) {
	f.Helper()
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		f.Fatal(err)
	}
	_, cases := parseGolden(&testing.T{}, string(b))
	for _, c := range cases {
		for _, k := range kinds {
			if strings.HasPrefix(c.kind, k) {
				f.Add([]byte(c.input))
			}
		}
	}
}

func checkLinks(t *testing.T, in []byte, links []Link, o Options) {
	t.Helper()
	if len(links) > o.MaxLinks {
		t.Fatalf("%d links, MaxLinks %d", len(links), o.MaxLinks)
	}
	seen := map[linkKey]bool{}
	for _, l := range links {
		if len(l.URL) > o.MaxURLLength {
			t.Fatalf("link of %d bytes > MaxURLLength %d", len(l.URL), o.MaxURLLength)
		}
		u, err := url.Parse(l.URL)
		if err != nil || !u.IsAbs() {
			t.Fatalf("link %q from %q is not an absolute URL: %v", l.URL, in, err)
		}
		if !strings.ContainsRune("REXLPIMS", rune(l.Hop)) || l.Hop == 0 {
			t.Fatalf("link %q: hop %q", l.URL, l.Hop)
		}
		if l.Context == "" {
			t.Fatalf("link %q has no context", l.URL)
		}
		k := linkKey{l.URL, l.Hop}
		if seen[k] {
			t.Fatalf("link %q hop %c twice", l.URL, l.Hop)
		}
		seen[k] = true
	}
}

func FuzzHTML(f *testing.F) {
	seedGolden(f, "html")
	f.Add([]byte(`<base href="http://other/"><a href=x><script>"/a.js"</script><meta name=robots content=nofollow><a href=y>`))
	f.Add([]byte("<!--[if IE]><link rel=stylesheet href=ie.css><![endif]--><form action=/f method=get><input src=i>"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, o := range []HTMLOptions{
			{Options: fuzzOptions},
			{Options: fuzzOptions, Javascript: true, NoForms: true, ObeyMetaNoFollow: true},
		} {
			var links []Link
			var meta Meta
			var err error
			bounded(t, in, func() { links, meta, err = HTML(bytes.NewReader(in), docURL, o) })
			if err != nil {
				t.Fatalf("HTML: %v (the only error is a failed read)", err)
			}
			checkLinks(t, in, links, o.Options)
			if meta.Base == "" {
				t.Fatalf("empty base for %q", in)
			}
		}
	})
}

// FuzzFastEqualsReference holds the fast HTML path (skipper, prefilter
// and direct tags) to the reference path, which hands every byte to the
// tokenizer and reads every tag's attributes: the same links and meta.
func FuzzFastEqualsReference(f *testing.F) {
	seedGolden(f, "html")
	for _, frag := range skipFragments {
		f.Add([]byte("x " + frag + " <a href=/tail>"))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, o := range []HTMLOptions{
			{Options: fuzzOptions},
			{Options: Options{MaxLinks: 3, MaxBytes: 200}, Javascript: true, ObeyMetaNoFollow: true},
		} {
			want, wantMeta, wantErr := htmlDoc(bytes.NewReader(in), docURL, o, false)
			got, meta, err := htmlDoc(bytes.NewReader(in), docURL, o, true)
			if !reflect.DeepEqual(got, want) || meta != wantMeta || (err == nil) != (wantErr == nil) {
				t.Fatalf("%q with %+v:\nfast:      %v %+v %v\nreference: %v %+v %v", in, o, got, meta, err, want, wantMeta, wantErr)
			}
		}
	})
}

func FuzzCSS(f *testing.F) {
	seedGolden(f, "css")
	f.Add([]byte(`@import "a.css"; a{background:url( 'b.png' )} @import url(c.css) screen;`))
	f.Add([]byte(`url(\"x\)y) url(/*c*/) url("`))
	f.Fuzz(func(t *testing.T, in []byte) {
		links, err := CSS(bytes.NewReader(in), docURL, fuzzOptions)
		if err != nil {
			t.Fatalf("CSS: %v", err)
		}
		checkLinks(t, in, links, fuzzOptions)
	})
}

func FuzzJS(f *testing.F) {
	seedGolden(f, "js", "html-js")
	f.Add([]byte(`var a = "/x/y.html", b = '../z.js'; location.href = "http:\/\/e.example\/";`))
	f.Add([]byte("`/tpl/${x}.html` /re\"/g \"\\u002fa\\/b.php\""))
	f.Fuzz(func(t *testing.T, in []byte) {
		links, err := JS(bytes.NewReader(in), docURL, fuzzOptions)
		if err != nil {
			t.Fatalf("JS: %v", err)
		}
		checkLinks(t, in, links, fuzzOptions)
	})
}

func FuzzSitemap(f *testing.F) {
	seedGolden(f, "sitemap")
	f.Add([]byte(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://example.com/a</loc></url></urlset>`))
	f.Add([]byte(`<sitemapindex><sitemap><loc>http://example.com/s.xml.gz</loc></sitemap></sitemapindex>`))
	f.Add([]byte("http://example.com/a\nnot a url\nhttps://example.com/b\r\n"))
	f.Add([]byte(`<!DOCTYPE x [<!ENTITY a "aaaa">]><urlset><url><loc>&a;</loc></url>`))
	f.Add(gzipBytes(f, []byte(`<urlset><url><loc>http://example.com/z</loc></url></urlset>`)))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		links, info, err := Sitemap(bytes.NewReader(in), docURL, fuzzOptions)
		checkLinks(t, in, links, fuzzOptions)
		for _, l := range links {
			if l.Hop != hopManifest {
				t.Fatalf("sitemap link %q hop %c", l.URL, l.Hop)
			}
		}
		if err != nil && errors.Is(err, ErrMalformed) && !strings.Contains(err.Error(), "line") && !strings.Contains(err.Error(), "root element") {
			t.Fatalf("malformed-sitemap error without a position: %v", err)
		}
		_ = info
	})
}

func FuzzHeaders(f *testing.F) {
	seedGolden(f, "headers")
	f.Add([]byte("Location: /moved\nContent-Location: x\nLink: </style.css>; rel=stylesheet, <http://e/>; rel=\"preload\""))
	f.Add([]byte("Refresh: 0; url=/next\nLink: <"))
	f.Fuzz(func(t *testing.T, in []byte) {
		// Header lines as a server sends them, read as net/http reads a
		// response head (so the values are ones a fetch can produce).
		r := textproto.NewReader(bufioReader(append(bytes.ReplaceAll(in, []byte("\r"), nil), "\n\n"...)))
		mh, _ := r.ReadMIMEHeader()
		links := Headers(http.Header(mh), docURL, fuzzOptions)
		checkLinks(t, in, links, fuzzOptions)
	})
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

// bounded fails when f runs longer than 10 seconds: an exec on a few
// KiB that takes that long is a hang (or worse than linear), and Go's fuzzer
// would otherwise only stall.
func bounded(t *testing.T, in []byte, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("still running after 10s on %d bytes: %q", len(in), in)
	}
}

func FuzzStreams(f *testing.F) {
	f.Add([]byte(hlsMaster))
	f.Add([]byte(hlsMedia))
	f.Add([]byte(`<MPD mediaPresentationDuration="PT8S"><Period><AdaptationSet><SegmentTemplate duration="2" media="$RepresentationID$/$Number%04d$.m4s" initialization="i.mp4"/><Representation id="a" bandwidth="1"/><Representation id="b" bandwidth="2"/></AdaptationSet></Period></MPD>`))
	f.Add([]byte(`<MPD><Period><AdaptationSet><Representation id="r" bandwidth="5"><SegmentTemplate media="$Time$"><SegmentTimeline><S t="0" d="1" r="-1"/><S t="3" d="0" r="9"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet></Period></MPD>`))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, v := range []string{VariantsExtremes, VariantsAll} {
			o := StreamOptions{Options: fuzzOptions, Variants: v, MaxSegments: 20}
			links, info, err := HLS(bytes.NewReader(in), docURL, o)
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("HLS: %v (the only errors are ErrMalformed and a failed read)", err)
			}
			checkLinks(t, in, links, fuzzOptions)
			if info.Segments > o.MaxSegments {
				t.Fatalf("HLS listed %d segments, MaxSegments %d", info.Segments, o.MaxSegments)
			}
			links, info, err = DASH(bytes.NewReader(in), docURL, o)
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("DASH: %v", err)
			}
			checkLinks(t, in, links, fuzzOptions)
			if info.Chosen > info.Renditions {
				t.Fatalf("DASH chose %d of %d", info.Chosen, info.Renditions)
			}
		}
	})
}
