// Package qa checks whether a crawl replays: each page is loaded in
// Chromium (pkg/browser) through a proxy that answers only from the
// archive (pkg/replay's Proxy), and scored as Browsertrix scores its QA
// runs:
//
//   - resources: of the requests the page made in replay, the share the
//     archive answered. Requests the crawl could not have captured do not
//     count against the page: those to a host the archive has nothing
//     from (Offsite) and those the host's archived robots.txt forbade
//     (Robots). Missing and Broken ones do.
//   - screenshot: the replayed viewport against the capture-time
//     screenshot:<url> record, pixel by pixel with pixelmatch's YIQ colour
//     distance at threshold 0.1 (1 − differing pixels / pixels).
//   - text: the replayed page's visible text against the capture-time
//     onreadydom:<url> record's, 1 − Levenshtein distance / length.
//
// Each score is graded as Browsertrix grades it (below 0.5 severe, below
// 0.9 moderate, else good); a page's score is its lowest. A Report lists
// the pages worst first with the URLs the archive lacked, as JSON and as
// a self-contained HTML page, and Patch turns the missing URLs into
// launch messages for tocrawl (hop E, via the page), bounded per page and
// per launch, so that a patch crawl fetches them and a second QA run shows
// the difference.
package qa
