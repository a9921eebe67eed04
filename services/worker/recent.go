package worker

import (
	"context"

	"github.com/trawler-crawl/trawler/pkg/frontier"
)

// maxLookupBatch caps the URLs of one coalesced lookup pipeline.
const maxLookupBatch = 2000

// lastCrawled fills each candidate's last-crawl time from the
// recently-crawled DB in one round trip, for the recently-seen filter. A
// DB that cannot be read leaves the times zero: the frontier's own record
// of what it finished still keeps duplicates out within the crawl.
func (w *Worker) lastCrawled(ctx context.Context, cands []frontier.Candidate) {
	urls := make([]string, len(cands))
	for i, c := range cands {
		urls[i] = c.Launch.URL
	}
	es, err := w.lookups.Do(ctx, urls)
	if err != nil {
		w.log.Warn("recently-crawled lookup for admission", "err", err)
		return
	}
	for i, e := range es {
		if t := e.LastCrawled(); !t.IsZero() {
			cands[i].LastCrawled = t
			cands[i].AdaptiveInterval = e.Capture.Interval
		}
	}
}
