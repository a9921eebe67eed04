package testweb

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// This file is an independent mini-crawler: it knows nothing of the
// generator and learns the site only from what the server sends, so
// comparing its result with Reachable tests the oracle and the rendering
// against each other.

// fetchResult is what the crawler saw for one URL.
type fetchResult struct {
	hop     int
	status  int
	ctype   string
	body    []byte
	header  http.Header
	chunked bool
}

// extracted is one reference found in a response.
type extracted struct {
	from, raw string
	resolved  *url.URL // nil if it did not parse
	context   string   // "a", "img", "srcset", "link", "script", "base", "css", "location", "sitemap", "robots"
}

// miniCrawl is the crawl state and result.
type miniCrawl struct {
	t        *testing.T
	client   *http.Client
	opts     ReachOptions
	scope    map[string]bool // authorities of the seeds
	fetched  map[string]*fetchResult
	links    []extracted
	robots   map[string][]string // authority -> disallowed prefixes for *
	queue    [][]string          // queue[hop]: processed strictly in hop order
	pending  map[string]int      // queued URL -> hop
	maxFetch int
}

// crawl runs the mini-crawler from the seeds of srv.
func crawl(t *testing.T, srv *Server, opts ReachOptions) *miniCrawl {
	t.Helper()
	c := &miniCrawl{
		t: t, client: newClient(t, srv), opts: opts,
		scope: map[string]bool{}, fetched: map[string]*fetchResult{},
		robots: map[string][]string{}, pending: map[string]int{}, maxFetch: 20000,
	}
	for _, s := range srv.Seeds() {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("seed %q: %v", s, err)
		}
		c.scope[u.Host] = true
		c.enqueue(s, 0)
	}
	for hop := 0; hop < len(c.queue); hop++ {
		for len(c.queue[hop]) > 0 {
			if len(c.fetched) > c.maxFetch {
				t.Fatalf("crawl did not converge after %d fetches", c.maxFetch)
			}
			u := c.queue[hop][0]
			c.queue[hop] = c.queue[hop][1:]
			c.process(u, hop)
		}
	}
	return c
}

// enqueue adds an in-scope URL unless seen, beyond the hop limit, or
// excluded by robots.txt.
func (c *miniCrawl) enqueue(raw string, hop int) {
	if _, ok := c.pending[raw]; ok {
		return
	}
	u, _ := url.Parse(raw)
	if c.opts.MaxHops > 0 && hop > c.opts.MaxHops {
		return
	}
	// The documented contract: without a hop limit the trap is left out.
	if c.opts.MaxHops == 0 && strings.HasPrefix(u.Path, "/calendar/") {
		return
	}
	if c.opts.ObeyRobots || c.opts.IncludeRobotsTxt || c.opts.FollowSitemaps {
		c.ensureRobots(u)
	}
	if c.opts.ObeyRobots {
		for _, prefix := range c.robots[u.Host] {
			if prefix != "" && strings.HasPrefix(u.RequestURI(), prefix) {
				return
			}
		}
	}
	c.pending[raw] = hop
	for len(c.queue) <= hop {
		c.queue = append(c.queue, nil)
	}
	c.queue[hop] = append(c.queue[hop], raw)
}

// ensureRobots fetches and parses robots.txt for u's host once, as a
// prerequisite at hop 1.
func (c *miniCrawl) ensureRobots(u *url.URL) {
	if _, ok := c.robots[u.Host]; ok {
		return
	}
	c.robots[u.Host] = nil
	ru := "http://" + u.Host + "/robots.txt"
	res := c.fetch(ru, 1)
	if c.opts.IncludeRobotsTxt || c.opts.FollowSitemaps {
		c.fetched[ru] = res
		c.pending[ru] = 1
	}
	var group, applies bool
	sc := bufio.NewScanner(bytes.NewReader(res.body))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		switch key {
		case "user-agent":
			if !group {
				applies = false
			}
			group = true
			applies = applies || val == "*"
		case "disallow":
			group = false
			if applies {
				c.robots[u.Host] = append(c.robots[u.Host], val)
			}
		case "sitemap":
			if c.opts.FollowSitemaps {
				c.addRef(ru, ru, val, "robots", 2)
			}
		}
	}
}

// fetch GETs a URL and records the response.
func (c *miniCrawl) fetch(raw string, hop int) *fetchResult {
	resp, err := c.client.Get(raw)
	if err != nil {
		c.t.Fatalf("GET %s: %v", raw, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		c.t.Fatalf("read %s: %v", raw, err)
	}
	if resp.ContentLength >= 0 && int64(len(body)) != resp.ContentLength {
		c.t.Errorf("%s: Content-Length %d but %d bytes", raw, resp.ContentLength, len(body))
	}
	return &fetchResult{
		hop: hop, status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: body,
		header: resp.Header, chunked: slices.Contains(resp.TransferEncoding, "chunked"),
	}
}

// process fetches one URL and queues what it references.
func (c *miniCrawl) process(raw string, hop int) {
	res := c.fetch(raw, hop)
	c.fetched[raw] = res
	if loc := res.header.Get("Location"); loc != "" {
		c.addRef(raw, raw, loc, "location", hop+1)
	}
	mt, _, _ := strings.Cut(res.ctype, ";")
	switch {
	case mt == "text/html":
		c.extractHTML(raw, res.body, hop)
	case mt == "text/css":
		c.extractCSS(raw, res.body, hop)
	case mt == "application/xml" && c.opts.FollowSitemaps:
		c.extractSitemap(raw, res.body, hop)
	case mt == "application/gzip" && c.opts.FollowSitemaps:
		zr, err := gzip.NewReader(bytes.NewReader(res.body))
		if err != nil {
			c.t.Fatalf("gunzip %s: %v", raw, err)
		}
		xmlBody, err := io.ReadAll(zr)
		if err != nil {
			c.t.Fatalf("gunzip %s: %v", raw, err)
		}
		c.extractSitemap(raw, xmlBody, hop)
	}
}

// addRef resolves a reference against base, records it, and queues it when
// it is an in-scope http URL.
func (c *miniCrawl) addRef(from, base, raw, context string, hop int) {
	e := extracted{from: from, raw: raw, context: context}
	b, err := url.Parse(base)
	if err != nil {
		c.t.Fatalf("base %q: %v", base, err)
	}
	ref, err := url.Parse(strings.TrimSpace(raw))
	if err == nil {
		e.resolved = b.ResolveReference(ref)
		e.resolved.Fragment = ""
		e.resolved.Host = strings.ToLower(e.resolved.Host)
	}
	c.links = append(c.links, e)
	if e.resolved != nil && e.resolved.Scheme == "http" && c.scope[e.resolved.Host] {
		c.enqueue(e.resolved.String(), hop)
	}
}

// extractHTML follows a, img src and srcset, stylesheet links and script
// src, honouring <base href>.
func (c *miniCrawl) extractHTML(from string, body []byte, hop int) {
	base := from
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() != io.EOF {
				c.t.Errorf("%s: html: %v", from, z.Err())
			}
			return
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		attrs := map[string]string{}
		for _, a := range tok.Attr {
			attrs[a.Key] = a.Val
		}
		switch tok.Data {
		case "base":
			if v, ok := attrs["href"]; ok {
				c.addRef(from, base, v, "base", hop+1)
				if r, err := url.Parse(base); err == nil {
					if ref, err := url.Parse(strings.TrimSpace(v)); err == nil {
						base = r.ResolveReference(ref).String()
					}
				}
			}
		case "a":
			c.addAttr(from, base, attrs, "href", "a", hop)
		case "script":
			c.addAttr(from, base, attrs, "src", "script", hop)
		case "link":
			if strings.EqualFold(attrs["rel"], "stylesheet") {
				c.addAttr(from, base, attrs, "href", "link", hop)
			}
		case "img":
			c.addAttr(from, base, attrs, "src", "img", hop)
			if ss, ok := attrs["srcset"]; ok {
				for cand := range strings.SplitSeq(ss, ",") {
					fields := strings.Fields(cand)
					if len(fields) > 0 {
						c.addRef(from, base, fields[0], "srcset", hop+1)
					}
				}
			}
		}
	}
}

// addAttr adds the reference in attribute key, if present.
func (c *miniCrawl) addAttr(from, base string, attrs map[string]string, key, context string, hop int) {
	if v, ok := attrs[key]; ok {
		c.addRef(from, base, v, context, hop+1)
	}
}

// cssRefs finds url(...) and @import "..." references.
var cssRefs = regexp.MustCompile(`url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)|@import\s+"([^"]*)"`)

// extractCSS follows url() and @import references of a style sheet.
func (c *miniCrawl) extractCSS(from string, body []byte, hop int) {
	for _, m := range cssRefs.FindAllSubmatch(body, -1) {
		for _, g := range m[1:] {
			if len(g) > 0 {
				c.addRef(from, from, string(g), "css", hop+1)
			}
		}
	}
}

// extractSitemap follows <loc> entries of a urlset or sitemap index.
func (c *miniCrawl) extractSitemap(from string, body []byte, hop int) {
	var doc struct {
		URLs     []string `xml:"url>loc"`
		Sitemaps []string `xml:"sitemap>loc"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		c.t.Fatalf("sitemap %s: %v", from, err)
	}
	for _, loc := range append(doc.URLs, doc.Sitemaps...) {
		c.addRef(from, from, loc, "sitemap", hop+1)
	}
}

// urls returns the sorted fetched URLs.
func (c *miniCrawl) urls() []string {
	out := make([]string, 0, len(c.fetched))
	for u := range c.fetched {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

// diff describes the differences between two sorted URL lists.
func diff(want, got []string) string {
	var b strings.Builder
	for _, u := range want {
		if _, ok := slices.BinarySearch(got, u); !ok {
			fmt.Fprintf(&b, "  missing: %s\n", u)
		}
	}
	for _, u := range got {
		if _, ok := slices.BinarySearch(want, u); !ok {
			fmt.Fprintf(&b, "  extra:   %s\n", u)
		}
	}
	return b.String()
}
