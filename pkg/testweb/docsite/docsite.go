// Package docsite writes a static documentation site to disk and serves
// it, for crawl benchmarks: the gzip-bound workload of a crawler that
// archives ordinary text pages (issue 5).
//
// Generate writes index.html (a table of contents linking every page),
// one shared style.css and pages/NNNNN.html: pages of PageBytesMin to
// PageBytesMax bytes of documentation-like prose, code samples, lists and
// tables, which compress about 3 to 4 times under gzip -6 like real
// documentation. Each page links the shared style sheet, the index and 10
// to 20 other pages (fewer when the site is smaller), always including the
// next page in order, so every page is reachable from the index even
// without it. All links are relative, so the site works under any base
// URL. The same pages and seed give the same bytes.
//
// Serve serves a generated directory with http.FileServer (no
// compression); Reachable crawls the files on disk and returns the URLs a
// crawler starting at the index fetches.
package docsite

import (
	"errors"
	"fmt"
	"html"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Files and limits of a generated site.
const (
	// IndexFile is the home page, served at the base URL's "/".
	IndexFile = "index.html"
	// StyleFile is the style sheet every page links.
	StyleFile = "style.css"
	// PagesDir holds the numbered pages.
	PagesDir = "pages"
	// MaxPages bounds the page count (five-digit file names).
	MaxPages = 99_999
	// PageBytesMin and PageBytesMax bound the size of a numbered page: the
	// text grows to a random target in that range, then the remaining
	// links and the footer are added.
	PageBytesMin = 90_000
	PageBytesMax = 110_000
	// minLinks and maxLinks bound a page's links to other pages.
	minLinks, maxLinks = 10, 20
)

// PagePath returns the slash-separated path, relative to the site root,
// of page i (1-based): pages/00001.html.
func PagePath(i int) string { return fmt.Sprintf("%s/%05d.html", PagesDir, i) }

// Generate writes a site of pages numbered pages into dir, creating it if
// needed and overwriting files of an earlier run (pages beyond the new
// count are left as they are, unlinked). The output is a pure function of
// pages and seed.
func Generate(dir string, pages int, seed int64) error { return generateSite(dir, pages, 0, seed) }

// GenerateTree writes a site whose pages form a tree of the given fanout
// instead of a flat table of contents: the index links pages 1..fanout,
// and page i its children fanout*i+1 .. fanout*i+fanout, so a crawler
// reaches them level by level (557 pages of fanout 4 are 5 levels below
// the index). Each page's other links (its next page, related pages) only
// point to pages no deeper than its children, so no link shortens the
// tree. Levels returns the depth.
func GenerateTree(dir string, pages, fanout int, seed int64) error {
	if fanout < 2 {
		return fmt.Errorf("docsite generate: fanout %d: want at least 2", fanout)
	}
	return generateSite(dir, pages, fanout, seed)
}

// Levels is how many levels of pages below the index a tree of pages
// pages and the given fanout has.
func Levels(pages, fanout int) int {
	levels, first := 0, 1 // first: the first page number of the next level
	for first <= pages {
		levels++
		first = fanout*first + 1
	}
	return levels
}

func generateSite(dir string, pages, fanout int, seed int64) error {
	if dir == "" {
		return errors.New("docsite generate: empty directory name")
	}
	if pages < 1 || pages > MaxPages {
		return fmt.Errorf("docsite generate: pages %d out of range 1..%d", pages, MaxPages)
	}
	if err := os.MkdirAll(filepath.Join(dir, PagesDir), 0o755); err != nil {
		return fmt.Errorf("docsite generate: %w", err)
	}
	titles := make([]string, pages+1) // 1-based
	for i := 1; i <= pages; i++ {
		titles[i] = pageTitle(seed, i)
	}
	if err := write(dir, StyleFile, styleSheet(seed)); err != nil {
		return err
	}
	if err := write(dir, IndexFile, indexPage(seed, titles, fanout)); err != nil {
		return err
	}
	for i := 1; i <= pages; i++ {
		if err := write(dir, PagePath(i), renderPage(seed, i, titles, fanout)); err != nil {
			return err
		}
	}
	return nil
}

// write stores one file of the site.
func write(dir, rel, body string) error {
	name := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		return fmt.Errorf("docsite generate: write %s: %w", rel, err)
	}
	return nil
}

// Salts separate the random streams of one page.
const (
	saltTitle uint64 = iota + 1
	saltPage
	saltIndex
	saltStyle
)

// rngFor returns the random stream for one purpose of one page.
func rngFor(seed int64, page int, salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), uint64(page)<<8|salt))
}

// pageTitle returns the title of page i.
func pageTitle(seed int64, i int) string {
	p := newProse(rngFor(seed, i, saltTitle))
	return p.heading()
}

// pageLinks picks the pages page i links: the next page (wrapping) and
// distinct others, never itself. In a tree (fanout > 0) they are the next
// page (not wrapping), the page's children, and others chosen among pages
// before it, none of which is deeper than its children.
func pageLinks(r *rand.Rand, i, pages, fanout int) []int {
	k := min(minLinks+r.IntN(maxLinks-minLinks+1), pages-1)
	if k <= 0 {
		return nil
	}
	next := i%pages + 1
	pool := pages // others are drawn from 1..pool
	var chosen map[int]bool
	var out []int
	if fanout > 0 {
		pool = i - 1
		chosen, out = map[int]bool{}, nil
		if i < pages {
			out = append(out, i+1)
			chosen[i+1] = true
		}
		for c := fanout*i + 1; c <= min(fanout*i+fanout, pages); c++ {
			if !chosen[c] {
				chosen[c] = true
				out = append(out, c)
			}
		}
		k = min(max(k, len(out)), len(out)+pool)
	} else {
		chosen, out = map[int]bool{next: true}, []int{next}
	}
	for len(out) < k {
		j := 1 + r.IntN(pool)
		if j != i && !chosen[j] {
			chosen[j] = true
			out = append(out, j)
		}
	}
	return out
}

// anchor renders a link from one page to page j.
func anchor(j int, titles []string) string {
	return fmt.Sprintf(`<a href="%05d.html">%s</a>`, j, html.EscapeString(titles[j]))
}

// renderPage builds numbered page i.
func renderPage(seed int64, i int, titles []string, fanout int) string {
	r := rngFor(seed, i, saltPage)
	p := newProse(r)
	links := pageLinks(r, i, len(titles)-1, fanout)
	var b strings.Builder
	b.Grow(PageBytesMax + 8<<10)
	title := html.EscapeString(titles[i])
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s - Documentation</title>\n"+
		"<link rel=\"stylesheet\" href=\"../%s\">\n</head>\n<body>\n<header><a href=\"../\">Documentation</a> &rsaquo; %s</header>\n",
		title, StyleFile, title)
	var next string
	if len(links) > 0 {
		next, links = anchor(links[0], titles), links[1:]
	}
	related := len(links) / 3
	b.WriteString("<nav><h2>Related</h2>\n<ul>\n")
	for _, j := range links[:related] {
		fmt.Fprintf(&b, "<li>%s</li>\n", anchor(j, titles))
	}
	b.WriteString("</ul></nav>\n<main>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n", title)
	inline := links[related:]
	target := PageBytesMin + r.IntN(PageBytesMax-PageBytesMin+1)
	for b.Len() < target {
		fmt.Fprintf(&b, "<h2>%s</h2>\n", html.EscapeString(p.heading()))
		for range 2 + r.IntN(5) {
			inline = block(&b, p, inline, titles)
		}
	}
	for len(inline) > 0 { // links not placed yet still go in
		p.paragraph(&b, anchor(inline[0], titles))
		inline = inline[1:]
	}
	b.WriteString("</main>\n<footer>")
	if next != "" {
		fmt.Fprintf(&b, "Next: %s", next)
	}
	b.WriteString("</footer>\n</body>\n</html>\n")
	return b.String()
}

// block writes one paragraph, code sample, list or table, spending one of
// the inline links on about one paragraph in three; it returns the links
// left.
func block(b *strings.Builder, p *prose, inline []int, titles []string) []int {
	switch n := p.r.IntN(12); {
	case n == 0:
		p.codeBlock(b)
	case n == 1:
		p.list(b)
	case n == 2:
		p.table(b)
	case len(inline) > 0 && p.chance(1, 3):
		p.paragraph(b, anchor(inline[0], titles))
		return inline[1:]
	default:
		p.paragraph(b, "")
	}
	return inline
}

// indexPage builds the home page: an introduction and a table of contents
// linking every page, or in a tree the first level's.
func indexPage(seed int64, titles []string, fanout int) string {
	p := newProse(rngFor(seed, 0, saltIndex))
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Documentation</title>\n"+
		"<link rel=\"stylesheet\" href=\"%s\">\n</head>\n<body>\n<main>\n<h1>Documentation</h1>\n", StyleFile)
	for range 3 {
		p.paragraph(&b, "")
	}
	b.WriteString("<h2>Contents</h2>\n<ol>\n")
	last := len(titles) - 1
	if fanout > 0 {
		last = min(fanout, last)
	}
	for i := 1; i <= last; i++ {
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", PagePath(i), html.EscapeString(titles[i]))
	}
	b.WriteString("</ol>\n</main>\n</body>\n</html>\n")
	return b.String()
}

// styleSheet returns the shared style sheet, a few kilobytes like a real
// documentation theme's.
func styleSheet(seed int64) string {
	r := rngFor(seed, 0, saltStyle)
	var b strings.Builder
	sels := []string{"body", "header", "nav", "main", "footer", "h1", "h2", "p", "pre", "code", "ul", "ol", "li",
		"table", "th", "td", "a", "a:hover", "nav ul", "nav li", "pre code", "table tr:nth-child(even)"}
	props := []string{"margin", "padding", "font-size", "line-height", "color", "background", "border", "max-width"}
	for _, s := range sels {
		fmt.Fprintf(&b, "%s {\n", s)
		for _, pr := range props[:3+r.IntN(len(props)-3)] {
			switch pr {
			case "color", "background":
				fmt.Fprintf(&b, "  %s: #%06x;\n", pr, r.IntN(1<<24))
			case "border":
				fmt.Fprintf(&b, "  %s: %dpx solid #%06x;\n", pr, 1+r.IntN(3), r.IntN(1<<24))
			case "line-height":
				fmt.Fprintf(&b, "  %s: 1.%d;\n", pr, 2+r.IntN(6))
			default:
				fmt.Fprintf(&b, "  %s: %dpx;\n", pr, r.IntN(40))
			}
		}
		b.WriteString("}\n")
	}
	return b.String()
}
