package worker

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
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
// seen only because of their adaptive interval: the fetches it saved (the
// frontier counts each URL once per launch; the metric counts decisions).
// It returns those candidates.
func (w *Worker) countAdaptiveSaved(ctx context.Context, cands []frontier.Candidate, res []frontier.AdmitResult) []messages.Launch {
	now := time.Now()
	saved := map[string][]string{}
	var held []messages.Launch
	for i, r := range res {
		if r.Verdict == frontier.Seen && cands[i].HeldByAdaptive(now) {
			l := cands[i].Launch
			saved[l.LaunchID()] = append(saved[l.LaunchID()], l.URL)
			held = append(held, l)
		}
	}
	for id, urls := range saved {
		w.metrics.adaptiveSaved.Add(float64(len(urls)))
		if err := w.front.CountAdaptiveSaved(ctx, id, urls); err != nil {
			w.log.Warn("count adaptive recrawl savings", "launch", id, "err", err)
		}
	}
	return held
}

// followHeld offers the outlinks kept with the last full capture of each
// page adaptive recrawl held back, as a 304 page's are followed: a launch
// that does not fetch an unchanged page still reaches what lies below it,
// and fetches what is due there (the pages that change). Each held page is
// expanded once per launch and worker: the admission cache answers for it
// afterwards, which also ends cycles.
func (w *Worker) followHeld(ctx context.Context, held []messages.Launch) ([]*kgo.Record, error) {
	now := time.Now()
	var children []messages.Launch
	for _, parent := range held {
		for _, l := range w.keptLinks(ctx, parent.URL, "a page adaptive recrawl held back") {
			children = append(children, messages.ChildLaunch(parent, l.URL, string(l.Hop), now))
		}
	}
	if len(children) == 0 {
		return nil, nil
	}
	return w.admit(ctx, children, false, false)
}
