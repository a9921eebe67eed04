package recentdb

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

func TestScheduleNext(t *testing.T) {
	s := Schedule{Initial: 24 * time.Hour, Min: time.Hour, Max: 10 * 24 * time.Hour, Increase: 1.5, Decrease: 0.5}
	for _, tc := range []struct {
		prev    time.Duration
		changed bool
		want    time.Duration
	}{
		{0, true, 24 * time.Hour},
		{0, false, 24 * time.Hour},
		{24 * time.Hour, false, 36 * time.Hour},
		{24 * time.Hour, true, 12 * time.Hour},
		{90 * time.Minute, true, time.Hour},              // floored at Min
		{8 * 24 * time.Hour, false, 10 * 24 * time.Hour}, // capped at Max
		{1<<62 + 1, false, 10 * 24 * time.Hour},          // no overflow
	} {
		if got := s.Next(tc.prev, tc.changed); got != tc.want {
			t.Errorf("Next(%s, changed %v) = %s, want %s", tc.prev, tc.changed, got, tc.want)
		}
	}
	small := Schedule{Initial: 0, Min: time.Hour, Max: 2 * time.Hour, Increase: 1.5, Decrease: 0.5}
	if got := small.Next(0, false); got != time.Hour {
		t.Errorf("an initial interval below Min: %s, want Min", got)
	}
}

// The interval travels in the event and is kept with the capture; bad
// values are errors naming the key.
func TestAdaptiveIntervalFromEvent(t *testing.T) {
	base := `{"timestamp":"2026-01-01T00:00:00.000Z","url":"http://a.example/","status_code":200,` +
		`"content_digest":"sha1:AAAA","start_time_plus_duration":"20260101000000000+5",` +
		`"warc_filename":"f.warc.gz","warc_offset":0,"warc_length":10,"extra_info":{"adaptiveInterval":`
	ev, err := messages.DecodeCrawled([]byte(base + `5400}}`))
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := FromCrawled(ev)
	if err != nil || u.Capture.Interval != 90*time.Minute {
		t.Fatalf("interval %v (err %v), want 1h30m", u.Capture.Interval, err)
	}
	db, _ := newDB(t, 0)
	if err := db.Put(context.Background(), []Update{u}); err != nil {
		t.Fatal(err)
	}
	if e := lookupOne(t, db, "http://a.example/"); e.Capture == nil || e.Capture.Interval != 90*time.Minute {
		t.Errorf("stored capture %+v, want the interval back", e.Capture)
	}
	for _, bad := range []string{`"5400"`, `-1`, `1.5`, `{}`, `1e300`} {
		ev, err := messages.DecodeCrawled([]byte(base + bad + `}}`))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := FromCrawled(ev); err == nil || !strings.Contains(err.Error(), ExtraAdaptiveInterval) {
			t.Errorf("adaptiveInterval %s: error %v, want one naming the key", bad, err)
		}
	}
}
