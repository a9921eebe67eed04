// Package testweb generates and serves a deterministic synthetic web on
// loopback addresses, for tests, `trawler demo` and benchmarks. Nothing it
// serves or resolves leaves 127.0.0.0/8.
//
// Generate builds a Site from a Config (same Seed, same site); Site.Start
// serves it with one listener per host IP (127.0.0.2, .3, ... by default,
// all on one port when possible) and returns a Server, whose Resolver maps
// the host names to those IPs. Pages are rendered on request from hashes of
// the seed; nothing is stored per page.
//
// # Site hosts
//
// Host i is www.siteN.test for odd N = i+1 and siteN.test for even N. Every
// host serves:
//
//   - / and /secS/pageN.html or /secS/archive/pageN.html: HTML pages in a
//     tree (each page links its parent and up to four children) with cross
//     links, written in every form a crawler must resolve (absolute,
//     root-relative, relative, ./, protocol-relative, with a #fragment, with
//     surrounding spaces), some under a <base href>, some to other site
//     hosts, some with a ?ref= query. Embeds: <link rel=stylesheet>,
//     <script src>, <img src> and srcset (/img/N.png, /img/N-2x.png). Pages
//     also link off-site names that never resolve (*.invalid), mailto: and
//     javascript: URIs and an in-page #top. About a third of the HTML is
//     sent chunked, the rest with Content-Length; all of it carries ETag
//     and Last-Modified and answers conditional requests with 304.
//   - The last PagesPerHost/20 numbered pages (when PagesPerHost >= 20)
//     are linked from nowhere: they are listed only in the sitemaps.
//   - /css/site.css, which @imports /css/base.css and /css/print.css; the
//     sheets reference /img/bg.png, /img/logo.png, /img/base.png,
//     /img/print.png, /fonts/site.woff2 and the 404 /img/missing.png.
//     /js/app.js has no string literals at all.
//   - /robots.txt: Disallow: /private/ for every agent (and Disallow: / for
//     "BadBot"), plus Sitemap: lines for /sitemap.xml and
//     /sitemap-index.xml; the index lists /sitemaps/part-1.xml and the
//     gzipped /sitemaps/part-2.xml.gz (application/gzip).
//   - /private/ with /private/doc1..3.html, linked from one page; the
//     documents link /members.html, which nothing outside /private/ links.
//     /private-notes.html is linked too and is NOT disallowed (a prefix
//     trap for robots matchers that drop the trailing slash).
//   - Redirects: /r/moved 301 (relative Location) to /r/moved-again, 302 to
//     a page; /r/away 302 to a page on the next host; /r/loop-a 307 and
//     /r/loop-b 308 redirecting to each other.
//   - 404s, by design: /gone.html, /secS/missing-N.html, /img/missing.png,
//     and any other path. 404 bodies contain no links.
//   - /files/large.bin: LargeFileBytes of pseudo-random bytes generated
//     while streaming; with Content-Length on hosts 0, 2, ..., chunked on
//     hosts 1, 3, ...
//   - With Trap, one host links /calendar/2024/01; every month links the
//     previous and next month (years 1000 to 9999) and the home page.
//   - With Hostile, one page links http://hostile.test:PORT/, whose index
//     links the Path* endpoints, except the ever-growing query
//     (PathGrowingQuery) and the bot challenge (PathChallenge), which
//     tests reach by their URLs so that crawls keep their shape.
//
// Requests whose Host header names another host get 421; methods other
// than GET and HEAD get 405.
//
// # Oracles
//
// Server.Reachable computes, from the generator's own reference graph, the
// exact URL set a crawler following everything within the site hosts
// fetches; Server.Changed lists the URLs whose content differs between two
// epochs set with Server.SetEpoch.
package testweb
