package cdxwriter

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/trawler-crawl/trawler/pkg/kafka"
)

// pollLag keeps trawler_cdxwriter_lag_records current for the writer's
// groups. Lag is polled rather than computed at scrape time so a slow
// broker never stalls /metrics.
func (w *Writer) pollLag(ctx context.Context) error {
	adm := kadm.NewClient(w.dlq)
	groups := []string{w.cfg.Group()}
	if w.fw != nil {
		groups = append(groups, w.cfg.ForwardGroup())
	}
	t := time.NewTicker(w.d.LagInterval)
	defer t.Stop()
	for {
		w.updateLag(ctx, adm, groups)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// maxLagPoll bounds one poll (or the poll interval, if longer): a poll
// that takes longer is given up, so one request the broker never answers
// cannot stop the gauges for good; the next poll asks again.
const maxLagPoll = 5 * time.Second

// updateLag sets the lag gauge of each group it could measure.
func (w *Writer) updateLag(ctx context.Context, adm *kadm.Client, groups []string) {
	pollCtx, cancel := context.WithTimeout(ctx, max(w.d.LagInterval, maxLagPoll))
	defer cancel()
	// A copy: kadm's Lag reuses its argument's backing array for the
	// groups it still has to ask about, so passing ours let a poll
	// overwrite one group's name with another's and its gauge was never
	// set again.
	lags, err := adm.Lag(pollCtx, slices.Clone(groups)...)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Debug("consumer lag", "err", err)
		}
		return
	}
	for _, g := range groups {
		l, ok := lags[g]
		switch {
		case ok && l.Error() == nil:
			w.m.lag.WithLabelValues(g).Set(float64(l.Lag.Total()))
			continue
		case !ok:
			w.log.Debug("consumer lag: group missing from the answer", "group", g)
		default:
			// The group is being described mid-rebalance, has not
			// committed yet, or the broker did not answer.
			w.log.Debug("consumer lag of group", "group", g, "err", l.Error())
		}
		// The lag is committed offsets against end offsets, which need no
		// description of the group: a group that is rebalancing (a busy
		// machine can keep one at it for long) still has a lag.
		if n, err := kafka.GroupLag(pollCtx, adm, g, w.cfg.Topic()); err == nil {
			w.m.lag.WithLabelValues(g).Set(float64(n))
		} else {
			w.log.Debug("consumer lag from committed offsets", "group", g, "err", err)
		}
	}
}
