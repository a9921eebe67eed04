package launcher

import (
	"testing"
	"time"
)

func london(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/London")
	if err != nil {
		t.Fatalf("time zone data: %v", err)
	}
	return loc
}

func TestActiveGoldenFeed(t *testing.T) {
	targets, _ := readTestFeed(t, "crawl-feed-npld.jsonl")
	at := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	want := map[int64]string{
		1001: "", 1002: "", 1003: "", 1004: "", 1005: "", 1006: "", 1010: "",
		1007: SkipEnded, 1008: SkipFrequency, 1009: SkipNotStarted,
	}
	for _, tg := range targets {
		ok, reason := decide(tg, HourOf(at, london(t)), london(t), false)
		if w := want[tg.ID]; ok != (w == "") || reason != w {
			t.Errorf("target %d: active %v reason %q, want reason %q", tg.ID, ok, reason, w)
		}
		if Active(tg, at, london(t)) != ok {
			t.Errorf("target %d: Active disagrees with decide", tg.ID)
		}
	}
}

// schedTarget builds a target from a feed line, so dates go through the
// same parsing as in production.
func schedTarget(t *testing.T, schedules string) Target {
	t.Helper()
	tg, _, err := parseTarget([]byte(`{"id": 1, "seeds": ["https://a.example/"], "schedules": ` + schedules + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestActiveBoundariesAndZones(t *testing.T) {
	lon := london(t)
	// 09:00 London in July is 08:00 UTC; end 2024-07-02 00:00 London is
	// 2024-07-01 23:00 UTC.
	summer := `[{"startDate": "2024-07-01 09:00:00", "endDate": "2024-07-02 00:00:00", "frequency": "DAILY"}]`
	tests := []struct {
		name      string
		schedules string
		at        time.Time
		loc       *time.Location
		reason    string
	}{
		{"at start", summer, time.Date(2024, 7, 1, 8, 0, 0, 0, time.UTC), lon, ""},
		{"before start", summer, time.Date(2024, 7, 1, 7, 59, 59, 0, time.UTC), lon, SkipNotStarted},
		{"same wall time read as UTC", summer, time.Date(2024, 7, 1, 8, 30, 0, 0, time.UTC), time.UTC, SkipNotStarted},
		{"nil zone is UTC", summer, time.Date(2024, 7, 1, 8, 30, 0, 0, time.UTC), nil, SkipNotStarted},
		{"just before end", summer, time.Date(2024, 7, 1, 22, 59, 59, 0, time.UTC), lon, ""},
		{"at end", summer, time.Date(2024, 7, 1, 23, 0, 0, 0, time.UTC), lon, SkipEnded},
		{"legacy instant ignores zone", `[{"startDate": 1719820800000, "endDate": null, "frequency": "WEEKLY"}]`,
			time.Date(2024, 7, 1, 8, 0, 0, 0, time.UTC), lon, ""},
		{"legacy instant not yet", `[{"startDate": 1719820800000, "endDate": null, "frequency": "WEEKLY"}]`,
			time.Date(2024, 7, 1, 7, 59, 0, 0, time.UTC), lon, SkipNotStarted},
		{"no schedules", `[]`, time.Date(2024, 7, 1, 8, 0, 0, 0, time.UTC), lon, SkipNoSchedule},
		{"no start date", `[{"startDate": "", "frequency": "DAILY"}]`, time.Date(2024, 7, 1, 8, 0, 0, 0, time.UTC), lon, SkipNoSchedule},
		{"never crawl", `[{"startDate": "2020-01-01 00:00:00", "frequency": "NEVERCRAWL"}]`, time.Date(2024, 7, 1, 8, 0, 0, 0, time.UTC), lon, SkipFrequency},
		{"second schedule active", `[{"startDate": "2020-01-01 00:00:00", "endDate": "2021-01-01 00:00:00", "frequency": "DAILY"},
			{"startDate": "2020-01-01 00:00:00", "frequency": "ANNUAL"}]`, time.Date(2024, 7, 1, 8, 0, 0, 0, time.UTC), lon, ""},
		{"most telling reason", `[{"startDate": "2020-01-01 00:00:00", "endDate": "2021-01-01 00:00:00", "frequency": "DAILY"},
			{"startDate": "2030-01-01 00:00:00", "frequency": "DAILY"}]`, time.Date(2024, 7, 1, 8, 0, 0, 0, time.UTC), lon, SkipNotStarted},
		{"end before start", `[{"startDate": "2024-01-01 00:00:00", "endDate": "2023-01-01 00:00:00", "frequency": "DAILY"}]`,
			time.Date(2024, 7, 1, 8, 0, 0, 0, time.UTC), lon, SkipEnded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := decide(schedTarget(t, tc.schedules), HourOf(tc.at, tc.loc), tc.loc, false)
			if ok != (tc.reason == "") || reason != tc.reason {
				t.Errorf("active %v reason %q, want reason %q", ok, reason, tc.reason)
			}
		})
	}
}

func TestFeedTime(t *testing.T) {
	var zero FeedTime
	if !zero.IsZero() || !zero.In(time.UTC).IsZero() || zero.String() != "" {
		t.Errorf("zero FeedTime: %v %q", zero.In(time.UTC), zero.String())
	}
	wall := WallTime(time.Date(2024, 3, 31, 1, 30, 0, 0, time.FixedZone("x", 7200)))
	if wall.String() != "2024-03-31 01:30:00" {
		t.Errorf("wall String %q", wall.String())
	}
	// 01:30 on the day British clocks go forward does not exist; it must
	// still give an instant within the skipped hour's bounds.
	got := wall.In(london(t)).UTC()
	if got.Before(time.Date(2024, 3, 31, 0, 30, 0, 0, time.UTC)) || got.After(time.Date(2024, 3, 31, 1, 30, 0, 0, time.UTC)) {
		t.Errorf("wall in London %v", got)
	}
	inst := Instant(time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC))
	if inst.String() != "2024-01-01T09:00:00Z" || !inst.In(london(t)).Equal(inst.In(nil)) {
		t.Errorf("instant %q", inst.String())
	}
}
