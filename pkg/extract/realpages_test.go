package extract

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// realPageDirs are where Debian's documentation packages put HTML that
// nobody here wrote: python3-doc, postgresql-doc-15 and git-doc, which
// make test installs (scripts/install-test-deps.sh), give over 2,000
// pages. TRAWLER_HTML_CORPUS adds directories (colon-separated).
func realPageDirs() []string {
	dirs := []string{"/usr/share/doc"}
	if extra := os.Getenv("TRAWLER_HTML_CORPUS"); extra != "" {
		dirs = append(dirs, filepath.SplitList(extra)...)
	}
	return dirs
}

// minRealPages is how many distinct real pages the differential test
// wants (issue 24's acceptance).
const minRealPages = 2000

// realPage is one HTML file of the corpus.
type realPage struct {
	path string
	body []byte
}

// realPages reads every distinct .html, .htm and .html.gz file under dirs.
func realPages(t testing.TB, dirs []string) []realPage {
	t.Helper()
	seen := map[[32]byte]bool{}
	var pages []realPage
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable corner of the tree is not the test's business
			}
			if d.IsDir() || !isHTMLName(d.Name()) {
				return nil
			}
			body, err := readPage(path)
			if err != nil {
				t.Logf("skip %s: %v", path, err)
				return nil
			}
			if sum := sha256.Sum256(body); !seen[sum] {
				seen[sum] = true
				pages = append(pages, realPage{path, body})
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", dir, err)
		}
	}
	return pages
}

func isHTMLName(name string) bool {
	name = strings.TrimSuffix(strings.ToLower(name), ".gz")
	return strings.HasSuffix(name, ".html") || strings.HasSuffix(name, ".htm") || strings.HasSuffix(name, ".xhtml")
}

func readPage(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		r = zr
	}
	return io.ReadAll(io.LimitReader(r, DefaultMaxBytes))
}

// TestRealPagesFastEqualsReference holds the fast extraction (the text
// skipper and the attribute prefilter) to the reference path, which
// hands every byte to x/net/html's tokenizer and reads every tag's
// attributes, over at least 2,000 real documentation pages: the same
// links, in the same order, with the same hops and contexts, and the same
// meta, under each option that changes which tokens matter, read whole,
// and on some pages in halves and a byte at a time.
func TestRealPagesFastEqualsReference(t *testing.T) {
	if raceEnabled {
		t.Skip("ten times slower under -race; make test runs it without")
	}
	pages := realPages(t, realPageDirs())
	if len(pages) < minRealPages {
		t.Fatalf("found %d distinct HTML pages under %v, want at least %d: install python3-doc, postgresql-doc-15 and git-doc (make test does), or point TRAWLER_HTML_CORPUS at more",
			len(pages), realPageDirs(), minRealPages)
	}
	opts := []HTMLOptions{
		{},
		{Javascript: true, ObeyMetaNoFollow: true},
		{NoForms: true, Options: Options{MaxBytes: 4000, MaxLinks: 20}},
	}
	var links, docs int
	for i, p := range pages {
		base := "http://docs.example/" + strings.TrimPrefix(filepath.ToSlash(p.path), "/")
		// Reads that split the input (the skipper's boundaries) on a
		// quarter of the pages keep the run short under -race.
		readers := map[string]func(io.Reader) io.Reader{
			"whole": func(r io.Reader) io.Reader { return r },
		}
		if i%4 == 0 {
			readers["half"] = iotest.HalfReader
		}
		if i%16 == 0 {
			readers["byte"] = iotest.OneByteReader
		}
		for _, o := range opts {
			want, wantMeta, wantErr := htmlDoc(bytes.NewReader(p.body), base, o, false)
			links += len(want)
			docs++
			for name, wrap := range readers {
				got, meta, err := htmlDoc(wrap(bytes.NewReader(p.body)), base, o, true)
				if !reflect.DeepEqual(got, want) || meta != wantMeta || (err == nil) != (wantErr == nil) {
					t.Fatalf("%s read %s with %+v:\nfast:      %d links %+v %v\nreference: %d links %+v %v\nfirst difference: %s",
						p.path, name, o, len(got), meta, err, len(want), wantMeta, wantErr, firstDifference(got, want))
				}
			}
		}
	}
	t.Logf("%d real pages, %d extractions, %d links: fast and reference agree", len(pages), docs, links)
	if links < len(pages) {
		t.Fatalf("only %d links in %d pages: the corpus is not HTML with links", links, len(pages))
	}
}

// firstDifference describes where two link lists first part.
func firstDifference(got, want []Link) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return "link " + strconv.Itoa(i) + ": fast " + linkString(got[i]) + ", reference " + linkString(want[i])
		}
	}
	switch {
	case len(got) > len(want):
		return "fast has more, first extra " + linkString(got[len(want)])
	case len(want) > len(got):
		return "reference has more, first missing " + linkString(want[len(got)])
	}
	return "none in the links"
}

func linkString(l Link) string { return l.URL + " " + string(l.Hop) + " " + l.Context }
