package launcher

import (
	"fmt"
	"testing"
	"time"
)

func utc(y int, m time.Month, d, h, mi int) time.Time {
	return time.Date(y, m, d, h, mi, 0, 0, time.UTC)
}

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("time zone data: %v", err)
	}
	return loc
}

// schedule is a one-schedule feed fragment.
func schedule(freq, start, end string) string {
	return fmt.Sprintf(`[{"startDate": %q, "endDate": %q, "frequency": %q}]`, start, end, freq)
}

// TestDue is the hourly rule table: every frequency across month ends,
// leap years, daylight-saving changes in Europe/London, start and end
// boundaries, and the hour rule. Times are given in UTC; London is GMT
// (UTC+0) in winter and BST (UTC+1) from 31 March to 27 October 2024.
func TestDue(t *testing.T) {
	daily9 := schedule("DAILY", "2024-01-01 09:00:00", "")
	daily1 := schedule("DAILY", "2024-01-01 01:00:00", "")
	tests := []struct {
		name      string
		schedules string
		at        time.Time
		zone      string
		reason    string // "" = due
	}{
		// The hour rule.
		{"daily at its hour", daily9, utc(2024, 1, 1, 9, 0), "", ""},
		{"daily late in its hour", daily9, utc(2024, 1, 5, 9, 59), "", ""},
		{"daily an hour late", daily9, utc(2024, 1, 5, 10, 0), "", SkipNotDue},
		{"daily an hour early", daily9, utc(2024, 1, 5, 8, 0), "", SkipNotDue},
		{"daily in summer: 09 BST is 08 UTC", daily9, utc(2024, 7, 1, 8, 0), "", ""},
		{"daily in summer: 09 UTC is 10 BST", daily9, utc(2024, 7, 1, 9, 0), "", SkipNotDue},
		{"minutes of the start are ignored, first day included", schedule("DAILY", "2024-01-01 09:30:00", ""), utc(2024, 1, 1, 9, 5), "", ""},
		// Start and end boundaries (start inclusive, end exclusive).
		{"the hour before the start", daily9, utc(2024, 1, 1, 8, 0), "", SkipNotStarted},
		{"the day before the start", daily9, utc(2023, 12, 31, 9, 0), "", SkipNotStarted},
		{"last run before the end", schedule("DAILY", "2024-01-01 09:00:00", "2024-01-10 09:00:00"), utc(2024, 1, 9, 9, 0), "", ""},
		{"the end hour is not run", schedule("DAILY", "2024-01-01 09:00:00", "2024-01-10 09:00:00"), utc(2024, 1, 10, 9, 0), "", SkipEnded},
		{"an end inside the hour still runs it", schedule("DAILY", "2024-01-01 09:00:00", "2024-01-10 09:30:00"), utc(2024, 1, 10, 9, 0), "", ""},
		{"after the end", schedule("WEEKLY", "2024-01-01 09:00:00", "2024-02-01 00:00:00"), utc(2024, 2, 5, 9, 0), "", SkipEnded},
		// WEEKLY: the start's weekday (3 January 2024 is a Wednesday).
		{"weekly on its weekday", schedule("WEEKLY", "2024-01-03 14:00:00", ""), utc(2024, 1, 17, 14, 0), "", ""},
		{"weekly the next day", schedule("WEEKLY", "2024-01-03 14:00:00", ""), utc(2024, 1, 18, 14, 0), "", SkipNotDue},
		{"weekly across the year end", schedule("WEEKLY", "2024-01-03 14:00:00", ""), utc(2025, 1, 1, 14, 0), "", ""},
		{"weekly in summer", schedule("WEEKLY", "2024-01-03 14:00:00", ""), utc(2024, 7, 3, 13, 0), "", ""},
		// MONTHLY: the start's day; no day moved to a shorter month's end.
		{"monthly on the 15th", schedule("MONTHLY", "2023-11-15 00:00:00", "2030-01-01 00:00:00"), utc(2024, 1, 15, 0, 0), "", ""},
		{"monthly midnight BST is 23 UTC the day before", schedule("MONTHLY", "2023-11-15 00:00:00", ""), utc(2024, 6, 14, 23, 0), "", ""},
		{"monthly 00 UTC in summer is 01 BST", schedule("MONTHLY", "2023-11-15 00:00:00", ""), utc(2024, 6, 15, 0, 0), "", SkipNotDue},
		{"monthly 31st: 31 January", schedule("MONTHLY", "2024-01-31 06:00:00", ""), utc(2024, 1, 31, 6, 0), "", ""},
		{"monthly 31st: not 29 February", schedule("MONTHLY", "2024-01-31 06:00:00", ""), utc(2024, 2, 29, 6, 0), "", SkipNotDue},
		{"monthly 31st: 31 March", schedule("MONTHLY", "2024-01-31 06:00:00", ""), utc(2024, 3, 31, 5, 0), "", ""},
		{"monthly 31st: not 30 April", schedule("MONTHLY", "2024-01-31 06:00:00", ""), utc(2024, 4, 30, 5, 0), "", SkipNotDue},
		{"monthly 31st: not 1 May", schedule("MONTHLY", "2024-01-31 06:00:00", ""), utc(2024, 5, 1, 5, 0), "", SkipNotDue},
		{"monthly 29th: 29 February of a leap year", schedule("MONTHLY", "2023-12-29 06:00:00", ""), utc(2024, 2, 29, 6, 0), "", ""},
		{"monthly 29th: not 28 February", schedule("MONTHLY", "2023-12-29 06:00:00", ""), utc(2025, 2, 28, 6, 0), "", SkipNotDue},
		// QUARTERLY: months congruent modulo 3 (February: 2, 5, 8, 11).
		{"quarterly first run", schedule("QUARTERLY", "2023-02-10 06:00:00", ""), utc(2023, 2, 10, 6, 0), "", ""},
		{"quarterly in May", schedule("QUARTERLY", "2023-02-10 06:00:00", ""), utc(2024, 5, 10, 5, 0), "", ""},
		{"quarterly not in April", schedule("QUARTERLY", "2023-02-10 06:00:00", ""), utc(2024, 4, 10, 5, 0), "", SkipNotDue},
		{"quarterly in November", schedule("QUARTERLY", "2023-02-10 06:00:00", ""), utc(2024, 11, 10, 6, 0), "", ""},
		{"quarterly December start runs in March", schedule("QUARTERLY", "2023-12-05 06:00:00", ""), utc(2024, 3, 5, 6, 0), "", ""},
		{"quarterly 31st: not in a 30-day month", schedule("QUARTERLY", "2024-01-31 06:00:00", ""), utc(2024, 4, 30, 5, 0), "", SkipNotDue},
		{"quarterly 31st: July", schedule("QUARTERLY", "2024-01-31 06:00:00", ""), utc(2024, 7, 31, 5, 0), "", ""},
		// SIXMONTHLY: months congruent modulo 6 (March: 3, 9).
		{"six-monthly in September", schedule("SIXMONTHLY", "2022-03-20 12:00:00", ""), utc(2024, 9, 20, 11, 0), "", ""},
		{"six-monthly not in June", schedule("SIXMONTHLY", "2022-03-20 12:00:00", ""), utc(2024, 6, 20, 11, 0), "", SkipNotDue},
		{"six-monthly in March (GMT)", schedule("SIXMONTHLY", "2022-03-20 12:00:00", ""), utc(2025, 3, 20, 12, 0), "", ""},
		{"six-monthly December start runs in June", schedule("SIXMONTHLY", "2023-12-01 12:00:00", ""), utc(2024, 6, 1, 11, 0), "", ""},
		// ANNUAL: day and month; 29 February only in leap years.
		{"annual", schedule("ANNUAL", "2021-08-01 10:00:00", ""), utc(2024, 8, 1, 9, 0), "", ""},
		{"annual another month", schedule("ANNUAL", "2021-08-01 10:00:00", ""), utc(2024, 9, 1, 9, 0), "", SkipNotDue},
		{"annual 29 February in a leap year", schedule("ANNUAL", "2020-02-29 10:00:00", ""), utc(2024, 2, 29, 10, 0), "", ""},
		{"annual 29 February: not 28 February", schedule("ANNUAL", "2020-02-29 10:00:00", ""), utc(2023, 2, 28, 10, 0), "", SkipNotDue},
		{"annual 29 February: not 1 March", schedule("ANNUAL", "2020-02-29 10:00:00", ""), utc(2023, 3, 1, 10, 0), "", SkipNotDue},
		{"annual 29 February: 2028", schedule("ANNUAL", "2020-02-29 10:00:00", ""), utc(2028, 2, 29, 10, 0), "", ""},
		// Daylight saving in Europe/London: clocks skip 01:00-02:00 on 31
		// March 2024 and repeat 01:00-02:00 on 27 October 2024.
		{"spring: the skipped hour's target runs just after the gap", daily1, utc(2024, 3, 31, 1, 0), "", ""},
		{"spring: not in the hour before the gap", daily1, utc(2024, 3, 31, 0, 0), "", SkipNotDue},
		{"spring: back at 01 BST the next day", daily1, utc(2024, 4, 1, 0, 0), "", ""},
		{"spring: a 02:00 target on the short day", schedule("DAILY", "2024-01-01 02:00:00", ""), utc(2024, 3, 31, 1, 0), "", ""},
		{"spring: a start inside the gap runs on its first day", schedule("DAILY", "2024-03-31 01:30:00", ""), utc(2024, 3, 31, 1, 0), "", ""},
		{"autumn: the first 01:00 runs", daily1, utc(2024, 10, 27, 0, 0), "", ""},
		{"autumn: the repeated 01:00 does not", daily1, utc(2024, 10, 27, 1, 0), "", SkipNotDue},
		{"autumn: 02:00 GMT", schedule("DAILY", "2024-01-01 02:00:00", ""), utc(2024, 10, 27, 2, 0), "", ""},
		{"autumn: back at 01 GMT the next day", daily1, utc(2024, 10, 28, 1, 0), "", ""},
		// Legacy epoch-millisecond starts: the instant's hour on the zone's clock.
		{"legacy start 09:00 GMT, run 09:00 BST", `[{"startDate": 1704099600000, "endDate": null, "frequency": "DAILY"}]`, utc(2024, 7, 1, 8, 0), "", ""},
		{"legacy start, wrong hour", `[{"startDate": 1704099600000, "endDate": null, "frequency": "DAILY"}]`, utc(2024, 7, 1, 9, 0), "", SkipNotDue},
		// Never launched hourly.
		{"domain crawl at its hour", schedule("DOMAINCRAWL", "2024-01-01 09:00:00", ""), utc(2024, 1, 1, 9, 0), "", SkipFrequency},
		{"never crawl at its hour", schedule("NEVERCRAWL", "2024-01-01 09:00:00", ""), utc(2024, 1, 1, 9, 0), "", SkipFrequency},
		// Several schedules: any due one launches; else the most telling reason.
		{"second schedule due", `[{"startDate": "2024-01-01 09:00:00", "frequency": "WEEKLY"}, {"startDate": "2024-01-01 10:00:00", "frequency": "DAILY"}]`, utc(2024, 1, 2, 10, 0), "", ""},
		{"not due beats ended", `[{"startDate": "2020-01-01 09:00:00", "endDate": "2021-01-01 00:00:00", "frequency": "DAILY"}, {"startDate": "2024-01-01 10:00:00", "frequency": "DAILY"}]`, utc(2024, 1, 2, 9, 0), "", SkipNotDue},
		// Other zones.
		{"UTC zone", daily9, utc(2024, 7, 1, 9, 0), "UTC", ""},
		{"New York in summer (UTC-4)", daily9, utc(2024, 7, 1, 13, 0), "America/New_York", ""},
		{"Kolkata (UTC+5:30): hours start at :30 UTC", daily9, utc(2024, 1, 2, 3, 45), "Asia/Kolkata", ""},
		{"Kolkata: the hour before", daily9, utc(2024, 1, 2, 3, 15), "Asia/Kolkata", SkipNotDue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.zone
			if name == "" {
				name = "Europe/London"
			}
			loc := zone(t, name)
			tg := schedTarget(t, tc.schedules)
			ok, reason := decide(tg, HourOf(tc.at, loc), loc, true)
			if ok != (tc.reason == "") || reason != tc.reason {
				t.Errorf("at %v (%v): due %v reason %q, want reason %q", tc.at, tc.at.In(loc), ok, reason, tc.reason)
			}
			if Due(tg, tc.at, loc) != ok {
				t.Error("Due disagrees with decide")
			}
		})
	}
}

// Over a whole year each frequency launches the expected number of times,
// each at its hour: no day is launched twice, across both DST changes.
func TestDueOverAYear(t *testing.T) {
	lon := zone(t, "Europe/London")
	tests := []struct {
		freq, start string
		want        int
	}{
		{"DAILY", "2023-06-01 01:00:00", 366}, // 2024 is a leap year; 01:00 is the DST hour
		{"WEEKLY", "2023-06-07 14:00:00", 52},
		{"MONTHLY", "2023-06-15 00:00:00", 12},
		{"MONTHLY", "2023-05-31 00:00:00", 7}, // only 31-day months
		{"QUARTERLY", "2023-06-30 06:00:00", 4},
		{"QUARTERLY", "2023-05-31 06:00:00", 2}, // May and August; not February or November
		{"SIXMONTHLY", "2023-06-10 12:00:00", 2},
		{"ANNUAL", "2020-02-29 23:00:00", 1},
		{"ANNUAL", "2023-06-01 23:00:00", 1},
	}
	for _, tc := range tests {
		tg := schedTarget(t, schedule(tc.freq, tc.start, ""))
		n := 0
		seen := map[string]bool{}
		for h := utc(2024, 1, 1, 0, 0); h.Year() == 2024; h = h.Add(time.Hour) {
			if !Due(tg, h, lon) {
				continue
			}
			n++
			day := h.In(lon).Format("2006-01-02")
			if seen[day] {
				t.Errorf("%s from %s: launched twice on %s", tc.freq, tc.start, day)
			}
			seen[day] = true
		}
		if n != tc.want {
			t.Errorf("%s from %s: launched %d times in 2024, want %d", tc.freq, tc.start, n, tc.want)
		}
	}
}

func TestHourOf(t *testing.T) {
	tests := []struct {
		at   time.Time
		zone string
		want time.Time
	}{
		{utc(2024, 1, 2, 3, 45), "UTC", utc(2024, 1, 2, 3, 0)},
		{utc(2024, 1, 2, 3, 45), "Asia/Kolkata", utc(2024, 1, 2, 3, 30)},
		{utc(2024, 1, 2, 3, 15), "Asia/Kolkata", utc(2024, 1, 2, 2, 30)},
		{utc(2024, 10, 27, 1, 30), "Europe/London", utc(2024, 10, 27, 1, 0)},
	}
	for _, tc := range tests {
		if got := HourOf(tc.at, zone(t, tc.zone)); !got.Equal(tc.want) {
			t.Errorf("HourOf(%v, %s) = %v, want %v", tc.at, tc.zone, got.UTC(), tc.want)
		}
	}
	if got := HourOf(utc(2024, 1, 2, 3, 45).Add(123), nil); !got.Equal(utc(2024, 1, 2, 3, 0)) {
		t.Errorf("nil zone: %v", got)
	}
}

// The golden feed: which targets launch at a few hours.
func TestDueGoldenFeed(t *testing.T) {
	targets, _ := readTestFeed(t, "crawl-feed-npld.jsonl")
	lon := london(t)
	tests := []struct {
		at   time.Time
		want []int64
	}{
		{utc(2024, 1, 17, 9, 0), []int64{1001, 1010}}, // daily 09:00 and the legacy 09:00 UTC
		{utc(2024, 1, 17, 14, 0), []int64{1002}},      // Wednesday 14:00
		{utc(2024, 2, 15, 0, 0), []int64{1003}},       // monthly on the 15th at midnight
		{utc(2024, 5, 10, 5, 0), []int64{1004}},       // quarterly, 06:00 BST
		{utc(2024, 9, 20, 11, 0), []int64{1005}},      // six-monthly, 12:00 BST
		{utc(2024, 8, 1, 9, 0), []int64{1006}},        // annual, 10:00 BST
		{utc(2024, 8, 1, 12, 0), nil},
	}
	for _, tc := range tests {
		var got []int64
		for _, tg := range targets {
			if Due(tg, tc.at, lon) {
				got = append(got, tg.ID)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("at %v: due %v, want %v", tc.at, got, tc.want)
		}
	}
}
