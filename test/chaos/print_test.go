//go:build chaos

package chaos_test

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// print writes the report: a fixed format, one figure per line, which
// docs/chaos.md quotes and CI logs keep.
func (r *report) print(seed int64, crawl, total time.Duration) {
	p := func(name string, v any) { fmt.Printf("chaos: %s: %v\n", name, v) }
	p("seed", seed)
	p("crawl time", crawl.Round(time.Second))
	p("total time", total.Round(time.Second))
	p("admitted URIs", r.admitted)
	p("finished URIs (admitted, with a crawled event)", r.finished)
	p("admitted never finished", r.neverFinished)
	p("site URLs (reachable in the site model)", r.reachable)
	p("site URLs never finished", r.unreached)
	p("crawled events", r.events)
	p("URLs with more than one crawled event", r.dupEvents)
	p("finished URLs never admitted (dns:, robots.txt)", r.notAdmittedFinished)
	p("captures (response/revisit records)", r.captures)
	p("captured URLs", r.capturedURLs)
	p("captured more than once", r.capturedTwice)
	p("in flight at kills (bound)", r.bound)
	p("robots.txt captured more than once (Redis wipe)", r.robotsTwice)
	p("captures without a crawled event", r.capturesNoEvent)
	p("WARC files", r.warcFiles)
	p("WARC records", r.warcRecords)
	p("WARC records failing validation", r.warcInvalid)
	p("WARC files left open", r.openFiles)
	p("CDX lines", r.cdxLines)
	p("CDX lines missing for captures", r.cdxMissing)
	p("CDX lines without a capture", r.cdxOrphans)
	p("crawl.log lines", r.logLines)
	p("crawl.log lines missing", r.logMissing)
	p("faults that struck an idle crawl", len(r.idleFaults))
	for _, f := range r.idleFaults {
		p("  idle", f)
	}
	var ev []string
	for k := range r.evidence {
		ev = append(ev, k)
	}
	sort.Strings(ev)
	for _, k := range ev {
		p("evidence: "+k, r.evidence[k])
	}
	p("processes that gave up starting (restarted)", len(r.failedStarts))
	for _, u := range r.failedStarts {
		p("  gave up", u)
	}
	p("processes that exited unasked", len(r.unasked))
	for _, u := range r.unasked {
		p("  exited", u)
	}
	total2 := 0
	var reasons []string
	for k, n := range r.dlq {
		total2 += n
		reasons = append(reasons, fmt.Sprintf("%d × %s", n, k))
	}
	sort.Strings(reasons)
	p("DLQ events", total2)
	for _, s := range reasons {
		p("  DLQ", s)
	}
}

// failures says which figures break the suite's rules; "" when none.
func (r *report) failures() string {
	var out []string
	zero := map[string]int{
		"admitted never finished":          r.neverFinished,
		"site URLs never finished":         r.unreached,
		"WARC records failing validation":  r.warcInvalid,
		"WARC files left open":             r.openFiles,
		"CDX lines missing for captures":   r.cdxMissing,
		"CDX lines without a capture":      r.cdxOrphans,
		"crawl.log lines missing":          r.logMissing,
		"processes that exited unasked":    len(r.unasked),
		"faults that struck an idle crawl": len(r.idleFaults),
	}
	for name, n := range zero {
		if n != 0 {
			out = append(out, fmt.Sprintf("%s: %d, want 0", name, n))
		}
	}
	if int64(r.capturedTwice) > r.bound {
		out = append(out, fmt.Sprintf("captured more than once: %d, more than the %d in flight at the kills", r.capturedTwice, r.bound))
	}
	if int64(r.capturesNoEvent) > r.bound {
		out = append(out, fmt.Sprintf("captures without a crawled event: %d, more than the %d in flight at the kills", r.capturesNoEvent, r.bound))
	}
	for _, k := range []string{"clamd unavailable (scan held for a retry)", "disk guard stopped claims"} {
		if r.evidence[k] == 0 {
			out = append(out, "no evidence that a fault struck: "+k+": 0")
		}
	}
	if r.admitted == 0 || r.captures == 0 {
		out = append(out, "nothing was crawled")
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// details lists a few examples of each non-zero figure.
func (r *report) details() string {
	var b strings.Builder
	var names []string
	for k := range r.examples {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s:\n  %s\n", k, strings.Join(r.examples[k], "\n  "))
	}
	return b.String()
}
