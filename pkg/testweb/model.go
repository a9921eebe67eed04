package testweb

import (
	"fmt"
	"strconv"
	"strings"
)

// Fixed paths present on every site host.
const (
	pathRobots       = "/robots.txt"
	pathSitemap      = "/sitemap.xml"
	pathSitemapIndex = "/sitemap-index.xml"
	pathSitemapPart1 = "/sitemaps/part-1.xml"
	pathSitemapPart2 = "/sitemaps/part-2.xml.gz"
	pathCSSSite      = "/css/site.css"
	pathCSSBase      = "/css/base.css"
	pathCSSPrint     = "/css/print.css"
	pathJS           = "/js/app.js"
	pathFont         = "/fonts/site.woff2"
	pathLarge        = "/files/large.bin"
	pathPrivate      = "/private/"
	pathMembers      = "/members.html"
	pathNotes        = "/private-notes.html"
	pathGone         = "/gone.html"
	pathMissingImage = "/img/missing.png"
	pathCalendar     = "/calendar/2024/01"
	privatePrefix    = "/private/"
	privateDocs      = 3
	calendarMinYear  = 1000
	calendarMaxYear  = 9999
)

// kind classifies a served resource.
type kind uint8

const (
	kindNotFound kind = iota
	kindPage          // numbered page, idx = page number
	kindMisc          // fixed HTML page: private index/docs, members, notes
	kindCSS
	kindJS
	kindImage
	kindFont
	kindLarge
	kindRedirect
	kindCalendar // idx = year*12 + month-1
	kindRobots
	kindSitemap // idx: 0 sitemap.xml, 1 index, 2 part-1, 3 part-2.xml.gz
)

// resource is a routed request: what a host serves at a path.
type resource struct {
	kind kind
	host int
	path string // without query
	idx  int
}

// isHTML reports whether r renders as an HTML document.
func (r resource) isHTML() bool {
	return r.kind == kindPage || r.kind == kindMisc || r.kind == kindCalendar
}

// redirectSpec is one redirect: its status and where it points.
type redirectSpec struct {
	status int
	to     ref
}

// pagePath is the path of numbered page idx on host h.
func (s *Site) pagePath(h, idx int) string {
	if idx == 0 {
		return "/"
	}
	// Appends, not Sprintf: every page render and route computes several
	// of these, and this costs one allocation.
	b := make([]byte, 0, 48)
	b = strconv.AppendInt(append(b, "/sec"...), int64(1+(idx-1)%s.sections), 10)
	if s.hashOf(uint64(h), uint64(idx), saltDeep)%4 == 0 {
		b = append(b, "/archive"...)
	}
	b = strconv.AppendInt(append(b, "/page"...), int64(idx), 10)
	return string(append(b, ".html"...))
}

// route maps a request path (query already removed) on site host h to the
// resource served there; unknown paths give kindNotFound.
func (s *Site) route(h int, p string) resource {
	r := resource{kind: kindNotFound, host: h, path: p}
	switch p {
	case "/":
		r.kind = kindPage
	case pathRobots:
		r.kind = kindRobots
	case pathSitemap, pathSitemapIndex, pathSitemapPart1, pathSitemapPart2:
		r.kind, r.idx = kindSitemap, indexOf(p, pathSitemap, pathSitemapIndex, pathSitemapPart1, pathSitemapPart2)
	case pathCSSSite, pathCSSBase, pathCSSPrint:
		r.kind, r.idx = kindCSS, indexOf(p, pathCSSSite, pathCSSBase, pathCSSPrint)
	case pathJS:
		r.kind = kindJS
	case pathFont:
		r.kind = kindFont
	case pathLarge:
		r.kind = kindLarge
	case pathPrivate, pathMembers, pathNotes:
		r.kind = kindMisc
	default:
		s.routeDynamic(&r)
	}
	return r
}

// indexOf returns the position of p in list.
func indexOf(p string, list ...string) int {
	for i, v := range list {
		if v == p {
			return i
		}
	}
	return -1
}

// routeDynamic handles the parameterised paths: pages, images, private
// documents, redirects and the calendar.
func (s *Site) routeDynamic(r *resource) {
	p := r.path
	switch {
	case strings.HasPrefix(p, "/sec"):
		if idx, ok := lastNumber(p, "page", ".html"); ok && idx > 0 && idx < s.cfg.PagesPerHost && s.pagePath(r.host, idx) == p {
			r.kind, r.idx = kindPage, idx
		}
	case strings.HasPrefix(p, "/img/"):
		if s.isImage(p) {
			r.kind = kindImage
		}
	case strings.HasPrefix(p, privatePrefix):
		if n, ok := lastNumber(p, "doc", ".html"); ok && n >= 1 && n <= privateDocs && p == privateDocPath(n) {
			r.kind, r.idx = kindMisc, n
		}
	case strings.HasPrefix(p, "/r/"):
		if _, ok := s.redirect(r.host, p); ok {
			r.kind = kindRedirect
		}
	case strings.HasPrefix(p, "/calendar/"):
		if m, ok := parseCalendar(p); ok && s.cfg.Trap && r.host == s.trapHost {
			r.kind, r.idx = kindCalendar, m
		}
	}
}

// lastNumber parses the decimal number between the last occurrence of
// prefix and the suffix at the end of p ("page" 17 ".html"). Only the
// canonical spelling (no sign, no leading zeros) is accepted.
func lastNumber(p, prefix, suffix string) (int, bool) {
	rest, ok := strings.CutSuffix(p, suffix)
	i := strings.LastIndex(rest, prefix)
	if !ok || i < 0 {
		return 0, false
	}
	digits := rest[i+len(prefix):]
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || strconv.Itoa(n) != digits {
		return 0, false
	}
	return n, true
}

// privateDocPath is the path of private document n (1-based).
func privateDocPath(n int) string { return fmt.Sprintf("/private/doc%d.html", n) }

// namedImages are the images referenced from style sheets.
var namedImages = [...]string{"/img/bg.png", "/img/logo.png", "/img/base.png", "/img/print.png"}

// isImage reports whether p is a served image: a named one, /img/N.png or
// its /img/N-2x.png srcset variant.
func (s *Site) isImage(p string) bool {
	if indexOf(p, namedImages[:]...) >= 0 {
		return true
	}
	name, ok := strings.CutSuffix(strings.TrimPrefix(p, "/img/"), ".png")
	if !ok {
		return false
	}
	name = strings.TrimSuffix(name, "-2x")
	n, err := strconv.Atoi(name)
	return err == nil && n >= 0 && n < s.images && strconv.Itoa(n) == name
}

// imagePath is the path of numbered image k, or its 2x variant.
func imagePath(k int, x2 bool) string {
	b := strconv.AppendInt(append(make([]byte, 0, 32), "/img/"...), int64(k), 10)
	if x2 {
		b = append(b, "-2x"...)
	}
	return string(append(b, ".png"...))
}

// calendarPath is the path of the calendar month m (year*12 + month-1).
func calendarPath(m int) string {
	return fmt.Sprintf("/calendar/%04d/%02d", m/12, m%12+1)
}

// parseCalendar parses /calendar/YYYY/MM in canonical form.
func parseCalendar(p string) (int, bool) {
	var y, mo int
	if _, err := fmt.Sscanf(p, "/calendar/%4d/%2d", &y, &mo); err != nil {
		return 0, false
	}
	if y < calendarMinYear || y > calendarMaxYear || mo < 1 || mo > 12 {
		return 0, false
	}
	m := y*12 + mo - 1
	return m, calendarPath(m) == p
}

// redirect returns the redirect served at p on host h.
func (s *Site) redirect(h int, p string) (redirectSpec, bool) {
	switch p {
	case "/r/moved":
		return redirectSpec{301, ref{target{h, "/r/moved-again"}, formRelative}}, true
	case "/r/moved-again":
		idx := int(s.hashOf(uint64(h), saltRedirect) % uint64(s.linked))
		return redirectSpec{302, ref{target{h, s.pagePath(h, idx)}, formRoot}}, true
	case "/r/away":
		other := (h + 1) % s.cfg.Hosts
		idx := int(s.hashOf(uint64(h), saltRedirect, 1) % uint64(s.linked))
		return redirectSpec{302, ref{target{other, s.pagePath(other, idx)}, formAbsolute}}, true
	case "/r/loop-a":
		return redirectSpec{307, ref{target{h, "/r/loop-b"}, formAbsolute}}, true
	case "/r/loop-b":
		return redirectSpec{308, ref{target{h, "/r/loop-a"}, formRoot}}, true
	}
	return redirectSpec{}, false
}

// volatile reports whether the HTML document at p on host h changes with
// the epoch. About one in VolatileOneIn documents does (one in five by
// default); calendar pages never do.
func (s *Site) volatile(h int, p string) bool {
	return s.hashOf(uint64(h), pathKey(p), saltVolatile)%uint64(s.cfg.VolatileOneIn) == 0
}

// version is the content version of r at an epoch: the epoch for volatile
// documents and sitemaps listing one, zero for everything else.
func (s *Site) version(r resource, epoch int) int {
	switch r.kind {
	case kindPage, kindMisc:
		if s.volatile(r.host, r.path) {
			return epoch
		}
	case kindSitemap:
		for _, t := range s.sitemapEntries(r.host, r.idx) {
			if s.volatile(t.host, t.path) {
				return epoch
			}
		}
	}
	return 0
}

// sitemapEntries lists the page targets of a urlset sitemap (index 0, 2 or
// 3): the linked pages split in two halves, then the sitemap-only pages.
func (s *Site) sitemapEntries(h, which int) []target {
	var lo, hi int
	switch which {
	case 0:
		lo, hi = 0, (s.linked+1)/2
	case 2:
		lo, hi = (s.linked+1)/2, s.linked
	case 3:
		lo, hi = s.linked, s.cfg.PagesPerHost
	default:
		return nil
	}
	out := make([]target, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, target{h, s.pagePath(h, i)})
	}
	return out
}
