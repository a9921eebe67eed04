package extract

import (
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// regexStrings is a deliberately naive model of ExtractorJS's
// java.util.regex pattern (\\{0,8}+['"])([^'"]{0,2083})\1 with find()
// restarting after group 1: try every start, take the backslashes
// possessively, extend the content greedily and back off until the
// delimiter follows. Quadratic, for checking scanJSStrings on small
// inputs.
func regexStrings(s string) []string {
	var out []string
	for p := 0; p < len(s); p++ {
		b := 0
		for b < maxJSBackslashes && p+b < len(s) && s[p+b] == '\\' {
			b++
		}
		q := p + b
		if q >= len(s) || (s[q] != '"' && s[q] != '\'') {
			continue
		}
		delim, cs := s[p:q+1], q+1
		end := cs
		for end < len(s) && end-cs < maxJSString && s[end] != '"' && s[end] != '\'' {
			end++
		}
		for ; end >= cs; end-- {
			if strings.HasPrefix(s[end:], delim) {
				out = append(out, s[cs:end])
				p = cs - 1
				break
			}
		}
	}
	return out
}

func jsStrings(s string) []string {
	var out []string
	scanJSStrings(s, func(lit string) bool {
		out = append(out, lit)
		return true
	})
	return out
}

func TestScanJSStringsMatchesRegexModel(t *testing.T) {
	alphabet := []string{`"`, `'`, `\`, `\\`, "a", "/", ".", " ", "\n"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := rng.IntN(40); n > 0; n-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		if got, want := jsStrings(s), regexStrings(s); !slices.Equal(got, want) {
			t.Fatalf("input %q:\ngot  %q\nwant %q", s, got, want)
		}
	}
}

func TestScanJSStrings(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
	}{
		{"plain", `f("a/b", 'c.d')`, []string{"a/b", "c.d"}},
		{"mismatched quotes", `"it's" + 'x'`, []string{"x"}},
		{"escaped quotes", `"<a href=\"x.html\">"`, []string{`<a href=\`, `x.html`, `>`}},
		{"unicode escaped quotes", `"\u0022a.html\u0022 \u0027b.html\u0027"`, []string{`\u0022a.html\u0022 \u0027b.html\u0027`, `a.html`, `b.html`}},
		{"nine backslashes are too many", `\\\\\\\\\"x\\\\\\\\\"`, []string{`x\`}},
		{"unterminated", `var s = "never closed`, nil},
		{"too long", `"` + strings.Repeat("a", maxJSString+1) + `"`, nil},
		{"longest", `"` + strings.Repeat("a", maxJSString) + `"`, []string{strings.Repeat("a", maxJSString)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := jsStrings(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestJSCandidate(t *testing.T) {
	cases := []struct {
		lit, want string // want "" means rejected
	}{
		{"/path/to/file.html", "/path/to/file.html"},
		{"./rel/x.php?a=1&b=c", "./rel/x.php?a=1&b=c"},
		{"../up.gif", "../up.gif"},
		{"https://example.org/a b", ""},
		{"http://example.org/x?y=<z>", ""},
		{"//cdn.example.net/lib.js", "//cdn.example.net/lib.js"},
		{"jquery.min.js", "jquery.min.js"},
		{"a.b.c", ""},
		{"text/css", ""},
		{"application/x-www-form-urlencoded", ""},
		{"image/png", ""},
		{"image/banner", "image/banner"},
		{"1.2.30", ""},
		{"a.help", ""},
		{"span.x", ""},
		{"my.file", "my.file"},
		{"no slash or dot", ""},
		{"hello world.", ""},
		{"www.example.com", "http://www.example.com"},
		{"example.co.uk/page", "http://example.co.uk/page"},
		{"div.menu", ""},
		{"script.min.map", ""},
		{"http%3A%2F%2Fexample.com%2Fenc.html", "http://example.com/enc.html"},
		{"page.html?x=1&amp;y=2", "page.html?x=1&y=2"},
		{"a.html?x=1", ""}, // Heritrix takes it for the selector "a.…"
		{`\/esc\/x.css`, "/esc/x.css"},
		{`\u002fu.png`, "/u.png"},
		{`\x2fhex.png`, "x2fhex.png"}, // no \x escapes in commons-text
		{"file name.jpg", "file name.jpg"},
		{"file name.txt", ""},
		{"{{template}}/x.html", ""},
	}
	for _, tc := range cases {
		got, ok := jsCandidate(tc.lit, docURL)
		if !ok {
			got = ""
		}
		if got != tc.want {
			t.Errorf("jsCandidate(%q) = %q, want %q", tc.lit, got, tc.want)
		}
	}
}

func TestUnescapeJS(t *testing.T) {
	cases := map[string]string{
		`a\/b`:          "a/b",
		`\u0041\uu0042`: "AB",
		`\n\t\r\b\f`:    "\n\t\r\b\f",
		`\101\7\477`:    "A\a'7",
		`\'\"\\`:        `'"\`,
		`\q`:            "q",
		`\u12`:          "u12",
		`trailing\`:     `trailing\`,
	}
	for in, want := range cases {
		if got := unescapeJS(in); got != want {
			t.Errorf("unescapeJS(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJSSchemeHostFixup(t *testing.T) {
	links, err := JS(strings.NewReader(`x = "example.com/same"; y = "other.org/x"`), "https://example.com/app.js", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := render(links)
	want := []string{"X https://example.com/same =JS_MISC", "X http://other.org/x =JS_MISC"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestJSLimits(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		b.WriteString(`load("/f` + strings.Repeat("x", i%7) + `/` + string(rune('a'+i%26)) + `.js");` + "\n")
	}
	doc := b.String()
	links, err := JS(strings.NewReader(doc), docURL, Options{MaxLinks: 5})
	if err != nil || len(links) != 5 {
		t.Fatalf("MaxLinks 5: %d links, err %v", len(links), err)
	}
	links, err = JS(strings.NewReader(doc), docURL, Options{MaxBytes: 30})
	if err != nil || len(links) != 1 || links[0].URL != "http://example.com/f/a.js" {
		t.Fatalf("MaxBytes 30: %v, err %v", render(links), err)
	}
}

func TestJSReadError(t *testing.T) {
	boom := errors.New("connection reset")
	links, err := JS(&failingReader{data: []byte(`a = "/x.js";`), err: boom}, docURL, Options{})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "extract js: read failed at byte 12") {
		t.Fatalf("err = %v", err)
	}
	if len(links) != 1 {
		t.Errorf("links before the error lost: %v", render(links))
	}
	if _, err := JS(&failingReader{err: io.ErrUnexpectedEOF}, docURL, Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v", err)
	}
}

func TestHTMLJavascriptOption(t *testing.T) {
	doc := `<script>a = "/s.js"</script><a onclick="go('/c.html')" href="javascript:open('/j.html')">x</a>` +
		`<form action="javascript:send('/f.html')"></form><button onmouseover='x("/m.png")'>`
	off, _ := extractHTML(t, doc, HTMLOptions{})
	if len(off) != 0 {
		t.Errorf("Javascript off found %q", off)
	}
	on, _ := extractHTML(t, doc, HTMLOptions{Javascript: true})
	want := []string{
		"X http://example.com/s.js =JS_MISC",
		"X http://example.com/c.html =JS_MISC",
		"X http://example.com/j.html =JS_MISC",
		"X http://example.com/f.html =JS_MISC",
		"X http://example.com/m.png =JS_MISC",
	}
	if !slices.Equal(on, want) {
		t.Errorf("got %q\nwant %q", on, want)
	}
}
