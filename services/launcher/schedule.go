package launcher

import "time"

// Reasons a target is not launched, as counted in Summary.Skipped.
const (
	// SkipNoSchedule: the target has no schedule with a start date.
	SkipNoSchedule = "no_schedule"
	// SkipEnded: every dated schedule ended at or before the launch time.
	SkipEnded = "ended"
	// SkipNotStarted: a schedule starts after the launch time.
	SkipNotStarted = "not_started"
	// SkipFrequency: the schedule covering the launch time is NEVERCRAWL or
	// DOMAINCRAWL, which the frequent crawl's launcher does not launch.
	SkipFrequency = "excluded_frequency"
)

// skipRank orders skip reasons by how much they tell an operator, so a
// target with several schedules is reported by its most telling one.
func skipRank(reason string) int {
	switch reason {
	case SkipEnded:
		return 1
	case SkipNotStarted:
		return 2
	case SkipFrequency:
		return 3
	}
	return 0
}

// Active reports whether one of t's schedules covers at (start ≤ at < end,
// wall-clock dates read in loc, UTC if nil) with a frequency other than
// NEVERCRAWL and DOMAINCRAWL. A schedule without a start date is never
// active: W3ACT always sets one, and without it there is no time to launch
// against.
func Active(t Target, at time.Time, loc *time.Location) bool {
	ok, _ := activity(t, at, loc)
	return ok
}

// activity is Active with the reason when the target is not active.
func activity(t Target, at time.Time, loc *time.Location) (bool, string) {
	reason := SkipNoSchedule
	worse := func(r string) {
		if skipRank(r) > skipRank(reason) {
			reason = r
		}
	}
	for _, s := range t.Schedules {
		if s.StartDate.IsZero() {
			continue
		}
		if at.Before(s.StartDate.In(loc)) {
			worse(SkipNotStarted)
			continue
		}
		if !s.EndDate.IsZero() && !at.Before(s.EndDate.In(loc)) {
			worse(SkipEnded)
			continue
		}
		if s.Frequency == NeverCrawl || s.Frequency == DomainCrawl {
			worse(SkipFrequency)
			continue
		}
		return true, ""
	}
	return false, reason
}
