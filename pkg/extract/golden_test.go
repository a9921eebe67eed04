package extract

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected lines of testdata/golden.txt")

const goldenFile = "testdata/golden.txt"

// goldenCase is one "=== kind name" block of the golden file: its input and
// the expected "URL HOP CONTEXT" lines.
type goldenCase struct {
	kind, name string
	input      string
	want       []string
	line       int
}

// parseGolden reads the golden file. Lines starting with "#" before the
// first case are a header kept on -update.
func parseGolden(t *testing.T, data string) (header string, cases []*goldenCase) {
	t.Helper()
	var cur *goldenCase
	var in []string
	inExpected := false
	for i, line := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "=== "):
			kind, name, ok := strings.Cut(line[4:], " ")
			if !ok {
				t.Fatalf("%s:%d: case line needs a kind and a name", goldenFile, i+1)
			}
			cur = &goldenCase{kind: kind, name: name, line: i + 1}
			cases = append(cases, cur)
			in, inExpected = nil, false
		case cur == nil:
			header += line + "\n"
		case line == "---" && !inExpected:
			cur.input, inExpected = strings.Join(in, "\n"), true
		case inExpected:
			if line != "" {
				cur.want = append(cur.want, line)
			}
		default:
			in = append(in, line)
		}
	}
	for _, c := range cases {
		if c.input == "" && c.want == nil {
			t.Fatalf("%s:%d: case %q has no --- separator", goldenFile, c.line, c.name)
		}
	}
	return header, cases
}

// runGolden extracts links from one case's input with the extractor its
// kind names.
func runGolden(t *testing.T, c *goldenCase) []string {
	t.Helper()
	var links []Link
	var err error
	switch c.kind {
	case "html", "html-js", "html-noforms":
		o := HTMLOptions{Javascript: c.kind == "html-js", NoForms: c.kind == "html-noforms"}
		links, _, err = HTML(strings.NewReader(c.input), docURL, o)
		// The reference path (no skipper, no prefilter) must meet every
		// golden case too.
		ref, _, rerr := htmlDoc(strings.NewReader(c.input), docURL, o, false)
		if !reflect.DeepEqual(ref, links) || (rerr == nil) != (err == nil) {
			t.Errorf("%s:%d: reference path gives %v (%v), fast path %v (%v)", goldenFile, c.line, ref, rerr, links, err)
		}
	case "css":
		links, err = CSS(strings.NewReader(c.input), docURL, Options{})
	case "js":
		links, err = JS(strings.NewReader(c.input), docURL, Options{})
	case "headers":
		links = Headers(parseHeaderLines(t, c.input), docURL, Options{})
	case "sitemap", "sitemap-gz":
		in := []byte(c.input)
		if c.kind == "sitemap-gz" {
			in = gzipBytes(t, in)
		}
		var info SitemapInfo
		links, info, err = Sitemap(bytes.NewReader(in), docURL, Options{})
		if info.Index != strings.Contains(c.name, "index") {
			t.Errorf("Index = %v for %q", info.Index, c.name)
		}
	case "refs":
		links = Refs(docURL, strings.Split(c.input, "\n"), hopManifest, ContextManifestMisc, Options{})
	default:
		t.Fatalf("%s:%d: unknown kind %q", goldenFile, c.line, c.kind)
	}
	if err != nil {
		t.Fatalf("%s: %v", c.kind, err)
	}
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = fmt.Sprintf("%s %c %s", l.URL, l.Hop, l.Context)
	}
	return out
}

func parseHeaderLines(t *testing.T, s string) http.Header {
	t.Helper()
	h := http.Header{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("header line %q has no colon", line)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return h
}

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGolden checks every element type, header and document kind against
// reviewed expectations (hop letters and Heritrix contexts). Run with
// -update to regenerate the expected lines, then review the diff.
func TestGolden(t *testing.T) {
	data, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	header, cases := parseGolden(t, string(data))
	if len(cases) < 40 {
		t.Fatalf("only %d golden cases parsed", len(cases))
	}
	for _, c := range cases {
		t.Run(c.kind+" "+c.name, func(t *testing.T) {
			got := runGolden(t, c)
			if *update {
				c.want = got
				return
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("%s:%d\ngot:\n%s\nwant:\n%s", goldenFile, c.line,
					strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
	if *update {
		writeGolden(t, header, cases)
	}
}

func writeGolden(t *testing.T, header string, cases []*goldenCase) {
	t.Helper()
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	_, _ = w.WriteString(header)
	for _, c := range cases {
		_, _ = fmt.Fprintf(w, "=== %s %s\n%s\n---\n", c.kind, c.name, c.input)
		for _, l := range c.want {
			_, _ = fmt.Fprintln(w, l)
		}
		_, _ = fmt.Fprintln(w)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenFile, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
