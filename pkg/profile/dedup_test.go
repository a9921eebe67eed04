package profile

import (
	"strings"
	"testing"
	"time"
)

func TestDedupPeriods(t *testing.T) {
	day := func(s string) time.Time {
		v, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		days      int
		orig, now string
		same      bool
		start     string
	}{
		{0, "2000-01-01 00:00:00", "2026-01-01 00:00:00", true, ""},
		{1, "2026-03-04 00:00:00", "2026-03-04 23:59:59", true, "2026-03-04 00:00:00"},
		{1, "2026-03-04 23:59:59", "2026-03-05 00:00:00", false, "2026-03-05 00:00:00"},
		// 30-day periods counted from 1970-01-01: 20520 days is 684 periods.
		{30, "2026-03-08 00:00:00", "2026-04-06 23:59:59", true, "2026-03-08 00:00:00"},
		{30, "2026-03-07 23:59:59", "2026-03-08 00:00:00", false, "2026-03-08 00:00:00"},
		{365, "1969-12-31 00:00:00", "1970-01-01 00:00:00", false, "1970-01-01 00:00:00"},
	} {
		d := Dedup{PeriodDays: tc.days}
		orig, now := day(tc.orig), day(tc.now)
		if got := d.SamePeriod(orig, now); got != tc.same {
			t.Errorf("periodDays %d: SamePeriod(%s, %s) = %v, want %v", tc.days, tc.orig, tc.now, got, tc.same)
		}
		want := time.Time{}
		if tc.start != "" {
			want = day(tc.start)
		}
		if got := d.PeriodStart(now); !got.Equal(want) {
			t.Errorf("periodDays %d: PeriodStart(%s) = %s, want %s", tc.days, tc.now, got, want)
		}
	}
	d := Dedup{MinPayloadBytes: 100}
	for size, want := range map[int64]bool{0: false, 99: false, 100: true, 1 << 20: true} {
		if got := d.Worthwhile(size); got != want {
			t.Errorf("Worthwhile(%d) = %v, want %v", size, got, want)
		}
	}
	if (Dedup{}).Worthwhile(0) {
		t.Error("an empty payload is worth a revisit")
	}
}

// Bad dedup and adaptive recrawl settings are errors naming the key.
func TestDedupAndAdaptiveValidation(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Profile)
		want string
	}{
		{func(p *Profile) { p.Dedup.PeriodDays = -1 }, "dedup.periodDays"},
		{func(p *Profile) { p.Dedup.MinPayloadBytes = -5 }, "dedup.minPayloadBytes"},
		{func(p *Profile) { p.Dedup.DigestIndexMaxEntries = 0 }, "dedup.digestIndexMaxEntries"},
		{func(p *Profile) { p.Frontier.RecrawlMinIntervalSeconds = 0 }, "recrawlMinInterval"},
		{func(p *Profile) { p.Frontier.RecrawlMaxIntervalSeconds = 10 }, "recrawlMaxInterval"},
		{func(p *Profile) { p.Frontier.RecrawlIncreaseFactor = 0.9 }, "recrawlIncreaseFactor"},
		{func(p *Profile) { p.Frontier.RecrawlDecreaseFactor = 0 }, "recrawlDecreaseFactor"},
		{func(p *Profile) { p.Frontier.RecrawlDecreaseFactor = 1.5 }, "recrawlDecreaseFactor"},
	} {
		p := Default()
		tc.set(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one naming %s", err, tc.want)
		}
	}
	p := Default()
	p.Dedup.AcrossURLs, p.Dedup.DigestIndexMaxEntries = false, 0
	if err := p.Validate(); err != nil {
		t.Errorf("no digest index bound needed without acrossUrls: %v", err)
	}
}
