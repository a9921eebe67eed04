package testweb

import (
	"slices"
	"strings"
)

// ReachOptions describe the crawler whose fetches Reachable predicts.
type ReachOptions struct {
	// MaxHops limits the hop count from the nearest seed (0: no limit).
	// Every link, embed, redirect, CSS reference and sitemap entry is one
	// hop.
	MaxHops int
	// ObeyRobots leaves out the robots.txt-disallowed /private/ subtree,
	// and so also what is linked only from inside it (/members.html).
	ObeyRobots bool
	// IncludeRobotsTxt adds every site host's /robots.txt, fetched as a
	// prerequisite and therefore exempt from MaxHops.
	IncludeRobotsTxt bool
	// FollowSitemaps follows the Sitemap: lines of robots.txt (implying
	// IncludeRobotsTxt), the sitemap index, the gzipped sitemap and their
	// entries. robots.txt counts as hop 1 (a prerequisite of the seed),
	// the sitemaps it names as hop 2, and so on.
	FollowSitemaps bool
}

// Reachable returns, sorted, the URLs a crawler starting from Seeds fetches
// when it follows every link, embed (img src and srcset, stylesheet,
// script), redirect and CSS url()/@import whose host is a site host, and
// nothing else (no hostile.test, no off-site names, no speculative
// JavaScript extraction: the script has no string literals).
//
// Redirect sources and their targets, 404 URLs and query-string variants
// are included, each URL once, without fragments. Pages listed only in the
// sitemaps (see SitemapOnly) are included only with FollowSitemaps. With
// Trap on and MaxHops 0 the infinite /calendar/ subtree is left out
// (calendar pages link only to each other and to the home page, so nothing
// else depends on them); with MaxHops > 0 its months within reach are in.
//
// With MaxHops > 0 the hop count is the shortest path. A crawler that
// admits a URL at a longer hop count first (one not processing in hop
// order) can see fewer URLs than this; compare limited crawls with care.
func (srv *Server) Reachable(o ReachOptions) []string {
	return srv.urls(srv.site.reach(o))
}

// SitemapOnly returns, sorted, the pages that no link reaches: they are
// listed in /sitemaps/part-2.xml.gz only.
func (srv *Server) SitemapOnly() []string {
	s := srv.site
	var out []string
	for h := range s.cfg.Hosts {
		for idx := s.linked; idx < s.cfg.PagesPerHost; idx++ {
			out = append(out, target{h, s.pagePath(h, idx)}.url(srv.authority))
		}
	}
	slices.Sort(out)
	return out
}

// Changed returns, sorted, the URLs whose content differs between epochs a
// and b: the volatile HTML documents (with their query-string variants)
// and the sitemaps listing one. It is empty when a == b. Headers ETag and
// Last-Modified change exactly for these URLs.
func (srv *Server) Changed(a, b int) []string {
	s := srv.site
	all := s.reach(ReachOptions{FollowSitemaps: true})
	changed := make(map[target]int)
	for t, hop := range all {
		res := s.route(t.host, stripQuery(t.path))
		if s.version(res, a) != s.version(res, b) {
			changed[t] = hop
		}
	}
	return srv.urls(changed)
}

// urls renders a set of targets as sorted URLs.
func (srv *Server) urls(set map[target]int) []string {
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t.url(srv.authority))
	}
	slices.Sort(out)
	return out
}

// stripQuery removes a query string from a path.
func stripQuery(p string) string {
	p, _, _ = strings.Cut(p, "?")
	return p
}

// reach runs a breadth-first search over the site's own reference graph
// and returns every fetched target with its shortest hop count.
func (s *Site) reach(o ReachOptions) map[target]int {
	seen := make(map[target]int)
	var queue []target
	visit := func(t target, hop int) {
		switch {
		case t.host < 0: // hostile.test and off-site names are out of scope
		case o.MaxHops > 0 && hop > o.MaxHops:
		case o.ObeyRobots && strings.HasPrefix(t.path, privatePrefix):
		case o.MaxHops <= 0 && s.route(t.host, stripQuery(t.path)).kind == kindCalendar:
		default:
			if _, ok := seen[t]; !ok {
				seen[t] = hop
				queue = append(queue, t)
			}
		}
	}
	for h := range s.cfg.Hosts {
		visit(target{h, "/"}, 0)
	}
	if o.FollowSitemaps {
		for h := range s.cfg.Hosts { // hop 1 keeps the queue in hop order
			seen[target{h, pathRobots}] = 1
			queue = append(queue, target{h, pathRobots})
		}
	}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		for _, r := range s.refsOf(t) {
			visit(r.to, seen[t]+1)
		}
	}
	if o.IncludeRobotsTxt {
		for h := range s.cfg.Hosts {
			if _, ok := seen[target{h, pathRobots}]; !ok {
				seen[target{h, pathRobots}] = 1
			}
		}
	}
	return seen
}

// refsOf lists the outgoing references of the resource at t, as a crawler
// extracts them from the response.
func (s *Site) refsOf(t target) []ref {
	res := s.route(t.host, stripQuery(t.path))
	switch res.kind {
	case kindPage, kindMisc, kindCalendar:
		d := s.doc(res)
		return d.refs()
	case kindCSS:
		items := cssItems(res.host, res.idx)
		out := make([]ref, len(items))
		for i, it := range items {
			out[i] = it.ref
		}
		return out
	case kindRedirect:
		spec, _ := s.redirect(res.host, res.path)
		return []ref{spec.to}
	case kindRobots:
		return robotsRefs(res.host)
	case kindSitemap:
		return s.sitemapRefs(res.host, res.idx)
	}
	return nil
}
