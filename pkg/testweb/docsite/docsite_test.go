package docsite

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// generate writes a site into a fresh directory.
func generate(t *testing.T, pages int, seed int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := Generate(dir, pages, seed); err != nil {
		t.Fatalf("Generate(%d, %d): %v", pages, seed, err)
	}
	return dir
}

// readTree returns every file under dir by slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateIsDeterministic(t *testing.T) {
	a, b, c := readTree(t, generate(t, 12, 7)), readTree(t, generate(t, 12, 7)), readTree(t, generate(t, 12, 8))
	if len(a) != 12+2 {
		t.Fatalf("%d files, want 12 pages, the index and the style sheet", len(a))
	}
	for name, body := range a {
		if !bytes.Equal(body, b[name]) {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
		if strings.HasPrefix(name, PagesDir) && bytes.Equal(body, c[name]) {
			t.Errorf("%s is the same under another seed", name)
		}
	}
}

// gzipSize compresses b at level 6.
func gzipSize(t *testing.T, b []byte) int {
	t.Helper()
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, 6)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Len()
}

// longSentence matches a sentence of plain text of at least 40 bytes.
var longSentence = regexp.MustCompile(`[A-Z][^.?<>]{40,}[.?]`)

func TestPageSizeAndCompressibility(t *testing.T) {
	const pages = 12
	files := readTree(t, generate(t, pages, 1))
	var raw, packed int
	sentences := map[string]int{}
	total := 0
	for i := 1; i <= pages; i++ {
		body := files[PagePath(i)]
		// The footer and the links left over come after the target size.
		if len(body) < PageBytesMin || len(body) > PageBytesMax+8<<10 {
			t.Errorf("%s: %d bytes, want %d..%d", PagePath(i), len(body), PageBytesMin, PageBytesMax+8<<10)
		}
		z := gzipSize(t, body)
		if r := float64(len(body)) / float64(z); r < 2.8 || r > 4.5 {
			t.Errorf("%s: gzip -6 ratio %.2f, want about 3 to 4", PagePath(i), r)
		}
		raw, packed = raw+len(body), packed+z
		for _, s := range longSentence.FindAll(body, -1) {
			sentences[string(s)]++
			total++
		}
	}
	if r := float64(raw) / float64(packed); r < 3 || r > 4 {
		t.Errorf("whole site: gzip -6 ratio %.2f, want 3 to 4", r)
	}
	// Built sentence by sentence, not from repeated blocks: long
	// sentences almost never recur.
	if total < 1000 || float64(len(sentences)) < 0.97*float64(total) {
		t.Errorf("%d distinct of %d long sentences, want nearly all distinct", len(sentences), total)
	}
}

var pageLink = regexp.MustCompile(`href="(\d{5})\.html"`)

func TestPageLinks(t *testing.T) {
	for _, pages := range []int{1, 2, 5, 25} {
		t.Run(fmt.Sprint(pages), func(t *testing.T) {
			files := readTree(t, generate(t, pages, 3))
			for i := 1; i <= pages; i++ {
				body := files[PagePath(i)]
				var links []string
				for _, m := range pageLink.FindAllSubmatch(body, -1) {
					links = append(links, string(m[1]))
				}
				want := min(pages-1, 10)
				if len(links) < want || len(links) > min(pages-1, 20) {
					t.Errorf("%s links %d pages, want %d..%d", PagePath(i), len(links), want, min(pages-1, 20))
				}
				if slices.Contains(links, fmt.Sprintf("%05d", i)) {
					t.Errorf("%s links itself", PagePath(i))
				}
				if next := fmt.Sprintf("%05d", i%pages+1); pages > 1 && !slices.Contains(links, next) {
					t.Errorf("%s does not link the next page %s", PagePath(i), next)
				}
				if slices.Sort(links); len(slices.Compact(links)) != len(links) {
					t.Errorf("%s links a page twice", PagePath(i))
				}
				for _, must := range []string{`href="../style.css"`, `href="../"`} {
					if !bytes.Contains(body, []byte(must)) {
						t.Errorf("%s lacks %s", PagePath(i), must)
					}
				}
			}
			index := files[IndexFile]
			if n := bytes.Count(index, []byte(`href="`+PagesDir+`/`)); n != pages {
				t.Errorf("index links %d pages, want %d", n, pages)
			}
		})
	}
}

func TestReachable(t *testing.T) {
	for _, pages := range []int{1, 3, 25} {
		dir := generate(t, pages, 5)
		got, err := Reachable(dir, "http://docs.test:8080/")
		if err != nil {
			t.Fatalf("Reachable: %v", err)
		}
		want := []string{"http://docs.test:8080/", "http://docs.test:8080/" + StyleFile}
		for i := 1; i <= pages; i++ {
			want = append(want, "http://docs.test:8080/"+PagePath(i))
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%d pages: Reachable\n got %q\nwant %q", pages, got, want)
		}
	}
	// Under a path prefix the relative links still resolve.
	got, err := Reachable(generate(t, 3, 5), "http://docs.test/manual")
	if err != nil || len(got) != 5 || got[0] != "http://docs.test/manual/" {
		t.Errorf("under /manual: %q, %v", got, err)
	}
}

func TestGenerateBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		dir   string
		pages int
		want  string
	}{
		{"", 3, "empty directory"},
		{t.TempDir(), 0, "pages 0 out of range"},
		{t.TempDir(), -1, "pages -1 out of range"},
		{t.TempDir(), MaxPages + 1, "out of range"},
		{filepath.Join(file, "site"), 3, "not a directory"},
	}
	for _, c := range cases {
		err := Generate(c.dir, c.pages, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Generate(%q, %d) = %v, want an error containing %q", c.dir, c.pages, err, c.want)
		}
	}
}

func TestReachableBadInput(t *testing.T) {
	broken := generate(t, 5, 2)
	if err := os.Remove(filepath.Join(broken, filepath.FromSlash(PagePath(3)))); err != nil {
		t.Fatal(err)
	}
	badHTML := generate(t, 2, 2)
	if err := os.WriteFile(filepath.Join(badHTML, IndexFile), []byte(`<a href="http://[::1">x</a>`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ dir, base, want string }{
		{generate(t, 2, 2), "not a url", "not an absolute http(s) URL"},
		{generate(t, 2, 2), "ftp://docs.test/", "not an absolute http(s) URL"},
		{generate(t, 2, 2), "http://[::1/", "not an absolute http(s) URL"},
		{t.TempDir(), "http://docs.test/", IndexFile},
		{broken, "http://docs.test/", "00003.html"},
		{badHTML, "http://docs.test/", `index.html links "http://[::1"`},
	}
	for _, c := range cases {
		got, err := Reachable(c.dir, c.base)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Reachable(%s) = %d URLs, %v; want an error containing %q", c.base, len(got), err, c.want)
		}
	}
}
