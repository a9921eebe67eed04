package extract

import (
	"fmt"
	"strings"
	"testing"
)

// TestPlausibleGuess checks Trawler's rules on top of ExtractorJS's, with
// strings taken from real scripts: a Sphinx search index (searchindex.js),
// its glossary.json, jQuery and the golden script cases.
func TestPlausibleGuess(t *testing.T) {
	cases := []struct {
		lit  string
		want bool
	}{
		// Links scripts build: kept.
		{"/img/logo.png", true},
		{"sub/page.html", true},
		{"popup.html", true},
		{"inner.js", true},
		{"jquery.min.js", true},
		{"deep/link.html", true},
		{"_static/glossary.json", true},
		{"library/2to3.html#module-lib2to3", true},
		{"search.php?q=x&page=2", true},
		{"IMG/PHOTO.JPG", true},
		{"fonts/icons.woff2", true},
		{"file name.jpg", true},
		{"/api/items", true}, // rooted: written as a path on purpose
		{"/", true},          // jQuery's default
		{"./rel/x", true},    // dot-relative
		{"../up/", true},     // dot-relative
		{"/docs/", true},     // rooted directory
		{`\/escaped\/path.html`, true},
		{`\u002fu\u002fpage.html`, true},
		{"http://cdn.example/lib.min.js", true},
		{"https://peps.python.org/pep-0484/", true},
		{"//cdn.example.net/lib.js", true},
		{"http%3A%2F%2Fexample.com%2Fenc.html", true},
		{"www.example.org", true},
		{"www.example.org/page", true},
		{"example.co.uk/page", true},
		// Identifiers and names that look like paths: dropped.
		{"os.path", false},
		{"turtle.begin_poly", false},
		{"BaseException.__notes__", false},
		{"c.PyMethod_New", false},
		{"config.debug", false},
		{"my.file", false},
		{"c-api/abstract", false}, // a Sphinx docname
		{"Language/Builtins", false},
		{"library/os.rst", false}, // a Sphinx source name
		{"index/", false},
		{"image/banner", false},
		{"a/b/c?x=1", false},
		{"data.v2", false},
		// Dotted names Heritrix's fix-up turns into host names: dropped.
		{"os.name", false},
		{"logging.info", false},
		{"typing.IO", false},
		{"nis.cat", false},
		{"example.com", false},
		// XML namespace names: identifiers in URL form.
		{"http://www.w3.org/2000/svg", false},
		{"http://www.w3.org/1999/xhtml", false},
		{"https://www.w3.org/1999/xlink", false},
		{"//www.w3.org/2000/svg", false},
		{"http://www.w3.org/2000/svg/icons.svg", true},
	}
	for _, tc := range cases {
		ref, ok := jsCandidate(tc.lit, docURL)
		if !ok {
			t.Errorf("jsCandidate(%q) rejects it; the case tests plausibleGuess", tc.lit)
			continue
		}
		if got := plausibleGuess(tc.lit, ref); got != tc.want {
			t.Errorf("plausibleGuess(%q, %q) = %v, want %v", tc.lit, ref, got, tc.want)
		}
	}
}

func TestExtensionOf(t *testing.T) {
	cases := map[string]string{
		"a.html":             "html",
		"dir/A.PNG?x=1#f":    "png",
		"dir.v1/file":        "",
		"file.":              "",
		"x.webmanifest":      "webmanifest",
		"x.averylongextname": "",
		"noext":              "",
		"a/b.tar.gz":         "gz",
		"?q=a.html":          "",
		"a.b#c.html":         "b",
	}
	for in, want := range cases {
		if got := extensionOf(in); got != want {
			t.Errorf("extensionOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestJSSearchIndex feeds JS a script shaped like Sphinx's searchindex.js:
// thousands of document names, source names, dotted object names and
// titles, and the one real link it holds. Heritrix guessed a URI from
// nearly every entry.
func TestJSSearchIndex(t *testing.T) {
	var b strings.Builder
	b.WriteString(`Search.setIndex({"docnames":[`)
	for i := range 3000 {
		fmt.Fprintf(&b, `"section%d/page_%d",`, i%17, i)
	}
	b.WriteString(`],"filenames":[`)
	for i := range 3000 {
		fmt.Fprintf(&b, `"section%d/page_%d.rst",`, i%17, i)
	}
	b.WriteString(`],"objects":{"":[`)
	for i := range 3000 {
		fmt.Fprintf(&b, `[0,"module%d.Class%d.method_%d",1,"x"],["os.name"],["logging.info"],["token.NL"],`, i, i, i)
	}
	b.WriteString(`]},"titles":["A title. With sentences.","2.3. What's new"],`)
	b.WriteString(`"logo":"/_static/py.svg"});`)
	links, err := JS(strings.NewReader(b.String()), docURL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := render(links); len(got) != 1 || got[0] != "X http://example.com/_static/py.svg =JS_MISC" {
		t.Errorf("got %d links, want only the logo: %q", len(got), got[:min(len(got), 10)])
	}
}

// TestJSGuessAdversarial: strings built to pass ExtractorJS's tests and
// look like paths, in bulk, never yield more than MaxLinks, and the rules
// keep what they should from a huge script.
func TestJSGuessAdversarial(t *testing.T) {
	cases := []struct {
		name, unit string
		want       int // links from 1<<16 repetitions (distinct strings)
	}{
		{"dotted identifiers", `"a%d.b%d",`, 0},
		{"extensionless relative paths", `"a%d/b%d",`, 0},
		{"source names", `"doc%d/x%d.rst",`, 0},
		{"bare host names", `"h%d.example%d.com",`, 0},
		{"relative pages", `"p%d/x%d.html",`, 1000},
		{"rooted paths", `"/p%d/x%d",`, 1000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for i := range 1 << 16 {
				fmt.Fprintf(&b, tc.unit, i, i)
			}
			var links []Link
			var err error
			within(t, tc.name, func() {
				links, err = JS(strings.NewReader(b.String()), docURL, Options{MaxLinks: 1000})
			})
			if err != nil || len(links) != tc.want {
				t.Fatalf("%d links, want %d (err %v); first %q", len(links), tc.want, err, render(links[:min(len(links), 5)]))
			}
		})
	}
}
