package launcher

import "time"

// Reasons a target is not launched, as counted in Summary.Skipped.
const (
	// SkipNoSchedule: the target has no schedule with a start date.
	SkipNoSchedule = "no_schedule"
	// SkipEnded: every dated schedule ended at or before the launch hour.
	SkipEnded = "ended"
	// SkipNotStarted: a schedule starts after the launch hour.
	SkipNotStarted = "not_started"
	// SkipFrequency: the schedule covering the launch hour is NEVERCRAWL or
	// DOMAINCRAWL, which the hourly launcher never launches.
	SkipFrequency = "excluded_frequency"
	// SkipNotDue: a schedule is running but its day or hour is not this
	// one (hourly runs only).
	SkipNotDue = "not_due"
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
	case SkipNotDue:
		return 4
	}
	return 0
}

// Active reports whether one of t's schedules covers the hour holding at
// (the start's hour ≤ that hour < end, wall-clock dates read in loc, UTC if
// nil) with a frequency other than NEVERCRAWL and DOMAINCRAWL, whatever its
// day and hour rule. A schedule without a start date is never active: W3ACT
// always sets one, and without it there is no time to launch against.
func Active(t Target, at time.Time, loc *time.Location) bool {
	ok, _ := decide(t, HourOf(at, loc), loc, false)
	return ok
}

// Due reports whether the hourly run for the hour holding at launches t:
// one of its active schedules (see Active) falls on that hour.
//
// The rules are those of the UK Web Archive's launcher (ukwa-manage
// tasks/crawl/launch.py), applied to the start date's wall-clock fields in
// loc:
//
//   - the hour must equal the start's hour (minutes and seconds are ignored,
//     so a 09:30 start launches in the 09:00 run, on its first day too);
//   - DAILY: every day; WEEKLY: the start's weekday; MONTHLY: the start's
//     day of the month; QUARTERLY and SIXMONTHLY: that day in months whose
//     number is congruent to the start's modulo 3 or 6; ANNUAL: the start's
//     day and month;
//   - the day must match exactly, as UKWA's launcher does: a MONTHLY target
//     starting on the 31st is launched only in 31-day months, a target
//     starting on 29 February only in leap years. Nothing is moved to the
//     last day of a shorter month, so a target is never launched on a day
//     its curator did not pick;
//   - the start is inclusive, the end exclusive: a schedule ending at
//     midnight is not launched by the midnight run. (UKWA's launcher still
//     launched at the exact end instant.)
//
// Daylight saving: when the clocks skip the start's hour (01:00 on the
// spring change in Europe/London) the target is launched in the first hour
// after the gap, so a daily crawl is not lost once a year; when the clocks
// repeat it (autumn), only the first of the two hours launches.
func Due(t Target, at time.Time, loc *time.Location) bool {
	ok, _ := decide(t, HourOf(at, loc), loc, true)
	return ok
}

// HourOf returns the start of the hour holding at on loc's clock (UTC if
// loc is nil). In zones whose offset is not a whole number of hours the
// hour does not start on a UTC hour.
func HourOf(at time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	l := at.In(loc)
	return l.Add(-time.Duration(l.Minute())*time.Minute - time.Duration(l.Second())*time.Second -
		time.Duration(l.Nanosecond()))
}

// decide reports whether t launches in the hour starting at slot and, when
// not, the most telling reason. hourly applies the day and hour rule of
// Due; without it every active schedule launches.
func decide(t Target, slot time.Time, loc *time.Location, hourly bool) (bool, string) {
	if loc == nil {
		loc = time.UTC
	}
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
		if slot.Before(HourOf(s.StartDate.In(loc), loc)) {
			worse(SkipNotStarted)
			continue
		}
		if !s.EndDate.IsZero() && !slot.Before(s.EndDate.In(loc)) {
			worse(SkipEnded)
			continue
		}
		if s.Frequency == NeverCrawl || s.Frequency == DomainCrawl {
			worse(SkipFrequency)
			continue
		}
		if hourly && !onHour(s, slot, loc) {
			worse(SkipNotDue)
			continue
		}
		return true, ""
	}
	return false, reason
}

// onHour applies the day and hour rule of Due to one running schedule.
func onHour(s Schedule, slot time.Time, loc *time.Location) bool {
	start := s.StartDate.wall(loc)
	local := slot.In(loc)
	y, m, d := local.Date()
	if !sameDay(s.Frequency, start, local) {
		return false
	}
	return occurrence(y, m, d, start.Hour(), loc).Equal(slot)
}

// sameDay reports whether day is one the frequency launches on, given the
// start's wall-clock date.
func sameDay(f Frequency, start, day time.Time) bool {
	switch f {
	case Daily:
		return true
	case Weekly:
		return day.Weekday() == start.Weekday()
	case Monthly:
		return day.Day() == start.Day()
	case Quarterly:
		return day.Day() == start.Day() && int(day.Month())%3 == int(start.Month())%3
	case SixMonthly:
		return day.Day() == start.Day() && int(day.Month())%6 == int(start.Month())%6
	case Annual:
		return day.Day() == start.Day() && day.Month() == start.Month()
	}
	return false
}

// occurrence returns the hour on date y-m-d in loc when the clock first
// reads hour:00 or, if the clocks skip that hour, the first hour after the
// gap.
func occurrence(y int, m time.Month, d, hour int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, hour, 0, 0, 0, loc)
	// In a repeated hour time.Date may pick either instant; the earlier
	// one is wanted.
	if earlier := t.Add(-time.Hour).In(loc); earlier.Hour() == hour && earlier.Day() == d {
		return HourOf(earlier, loc)
	}
	// In a skipped hour time.Date normalises forward in Go's zone tables,
	// but step past the gap explicitly so the result is an hour on the
	// clock after it whatever the normalisation.
	for l := t.In(loc); l.Day() == d && l.Hour() < hour; l = t.In(loc) {
		t = HourOf(t.Add(time.Hour), loc)
	}
	return HourOf(t, loc)
}

// NeverCrawled reports whether t must never be crawled: one of its
// schedules is NEVERCRAWL. The dates of such a schedule are not looked at:
// a block is a block from the moment it is in the feed until it is removed.
func NeverCrawled(t Target) bool {
	for _, s := range t.Schedules {
		if s.Frequency == NeverCrawl {
			return true
		}
	}
	return false
}
