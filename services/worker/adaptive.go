package worker

import (
	"context"
	"time"

	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
)

// adapt sets the URL's next adaptive recrawl interval on t's outcome
// (profile frontier.recrawlAdaptive): longer after a fetch that found the
// payload unchanged (the same digest as the last capture, or a 304),
// shorter after one that found it changed. The event carries it to the
// recently-crawled DB.
func (w *Worker) adapt(t *task, resp *fetch.Response) {
	f := t.eff.Profile.Frontier
	if !f.RecrawlAdaptive {
		return
	}
	var prev time.Duration
	changed := resp.StatusCode != 304
	if c := t.prior.Capture; c != nil {
		prev = c.Interval
		changed = changed && c.Digest != resp.PayloadDigest
	}
	initial := f.RecrawlIntervalSeconds
	if t.l.RecrawlInterval != nil {
		initial = *t.l.RecrawlInterval
	}
	s := recentdb.Schedule{Initial: seconds(initial), Min: seconds(f.RecrawlMinIntervalSeconds),
		Max: seconds(f.RecrawlMaxIntervalSeconds), Increase: f.RecrawlIncreaseFactor, Decrease: f.RecrawlDecreaseFactor}
	t.out.adaptiveInterval = s.Next(prev, changed)
}

// countAdaptiveSaved counts, per launch, the candidates the frontier found
// seen only because of their adaptive interval: the fetches it saved.
func (w *Worker) countAdaptiveSaved(ctx context.Context, cands []frontier.Candidate, res []frontier.AdmitResult) {
	now := time.Now()
	saved := map[string]int64{}
	for i, r := range res {
		if r.Verdict == frontier.Seen && cands[i].HeldByAdaptive(now) {
			saved[cands[i].Launch.LaunchID()]++
		}
	}
	for id, n := range saved {
		w.metrics.adaptiveSaved.Add(float64(n))
		if err := w.front.CountAdaptiveSaved(ctx, id, n); err != nil {
			w.log.Warn("count adaptive recrawl savings", "launch", id, "err", err)
		}
	}
}
