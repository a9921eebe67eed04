package launcher

import (
	"context"
	"errors"
	"time"
)

// Serve is the long-running hourly scheduler: it runs the hour in progress
// at once, then every hour at the top of the hour on the configured zone's
// clock, until ctx ends (SIGTERM), which is not an error.
//
// After a start, and after a failed run, Serve also runs the hours it may
// have missed, at most Config.CatchUpHours before the current one. Each is
// run again in full, but the ledger makes that cheap and exact: launches
// already recorded are not sent again, so a missed hour is caught up at
// most once however often the launcher restarts. A failed run (a feed
// unavailable, the broker refusing) is retried after Config.RetryDelay.
func (s *Service) Serve(ctx context.Context) error {
	switch {
	case !s.cfg.Hourly:
		return errors.New("launcher serve: runs the hourly rule only (--all-active is for one-shot runs)")
	case s.deps.Ledger == nil && !s.cfg.DryRun:
		return errors.New("launcher serve: no ledger: catching up and restarts would launch twice")
	}
	const hour = time.Hour
	var done time.Time // every hour up to this one was run without error
	for {
		now := s.deps.Clock.Now()
		current := HourOf(now, s.loc)
		from := current.Add(-time.Duration(s.cfg.CatchUpHours) * hour)
		if !done.IsZero() && done.Add(hour).After(from) {
			from = done.Add(hour)
		}
		ok := true
		for h := from; !h.After(current); h = HourOf(h.Add(hour), s.loc) {
			_, err := s.RunOnce(ctx, h)
			if ctx.Err() != nil {
				s.log.Info("launcher stopping", "reason", context.Cause(ctx))
				return nil
			}
			if err != nil {
				s.log.Error("launch run failed; will retry", "hour", h.UTC(), "retry_in", s.cfg.RetryDelay, "err", err)
				ok = false
				continue
			}
			if ok {
				done = h
			}
		}
		next := HourOf(current.Add(hour), s.loc)
		if !ok {
			next = minTime(next, now.Add(s.cfg.RetryDelay))
		}
		s.log.Debug("launcher waiting", "until", next)
		if err := s.deps.Wait(ctx, next); err != nil {
			s.log.Info("launcher stopping", "reason", context.Cause(ctx))
			return nil
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
