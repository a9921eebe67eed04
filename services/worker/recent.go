package worker

import (
	"context"

	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// revisitOf returns the revisit to write instead of a response when the
// recently-crawled DB holds a full record of the URL with the same payload
// digest (profile identical-payload-digest); nil otherwise, or when the DB
// cannot be read, since a full response is always a safe record to write.
func (w *Worker) revisitOf(ctx context.Context, url string, resp *fetch.Response) *warcwriter.Revisit {
	if resp.PayloadDigest == "" || resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return nil
	}
	es, err := w.recent.Lookup(ctx, []string{url})
	if err != nil {
		w.log.Warn("recently-crawled lookup; writing a full response", "url", url, "err", err)
		return nil
	}
	o := es[0].Original
	if o == nil || o.Digest != resp.PayloadDigest {
		return nil
	}
	return &warcwriter.Revisit{RefersToURI: url, RefersToDate: o.Time, RefersToRecordID: o.RecordID}
}

// lastCrawled fills each candidate's last-crawl time from the
// recently-crawled DB in one round trip, for the recently-seen filter. A
// DB that cannot be read leaves the times zero: the frontier's own record
// of what it finished still keeps duplicates out within the crawl.
func (w *Worker) lastCrawled(ctx context.Context, cands []frontier.Candidate) {
	urls := make([]string, len(cands))
	for i, c := range cands {
		urls[i] = c.Launch.URL
	}
	es, err := w.recent.Lookup(ctx, urls)
	if err != nil {
		w.log.Warn("recently-crawled lookup for admission", "err", err)
		return
	}
	for i, e := range es {
		if t := e.LastCrawled(); !t.IsZero() {
			cands[i].LastCrawled = t
		}
	}
}
