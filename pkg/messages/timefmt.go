package messages

import (
	"fmt"
	"strings"
	"time"
)

// FormatTimestamp formats t as the crawled event's timestamp,
// yyyy-MM-ddTHH:mm:ss.SSSZ in UTC.
func FormatTimestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// Timestamp14 formats t as the 14-digit UTC timestamp of CDX lines and
// launch timestamps (yyyyMMddHHmmss).
func Timestamp14(t time.Time) string {
	return t.UTC().Format("20060102150405")
}

// FormatStartPlusDuration formats a fetch's start and duration as Heritrix's
// crawl.log does: yyyyMMddHHmmssSSS+<milliseconds>. A zero start (nothing was
// fetched) gives "-"; a negative duration counts as 0.
func FormatStartPlusDuration(start time.Time, d time.Duration) string {
	if start.IsZero() {
		return "-"
	}
	ms := d.Milliseconds()
	if ms < 0 {
		ms = 0
	}
	s := start.UTC()
	return fmt.Sprintf("%s%03d+%d", s.Format("20060102150405"), s.Nanosecond()/int(time.Millisecond), ms)
}

// ParseTimestamp14 parses a 14-digit UTC timestamp (yyyyMMddHHmmss).
func ParseTimestamp14(s string) (time.Time, error) {
	if len(s) != 14 || strings.Trim(s, "0123456789") != "" {
		return time.Time{}, fmt.Errorf("timestamp %q: want 14 digits yyyyMMddHHmmss", s)
	}
	t, err := time.ParseInLocation("20060102150405", s, time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q: %w", s, err)
	}
	return t, nil
}

// ParseISOTime parses an ISO-8601 date-time as producers write it: "T" or a
// space between date and time, a fraction of any length, a "Z" or numeric
// zone, or no zone at all, which means UTC.
func ParseISOTime(s string) (time.Time, error) {
	v := strings.TrimSpace(s)
	if len(v) > 10 && v[10] == ' ' {
		v = v[:10] + "T" + v[11:]
	}
	v = truncateFraction(v)
	// The shapes producers write, most common first. Go accepts a fraction
	// of any length after the seconds even when the layout has none.
	layouts := [...]string{
		"2006-01-02T15:04:05Z07:00",
		"2006-01-02T15:04:05",
		"2006-01-02T15:04:05Z0700",
		"2006-01-02T15:04:05Z07",
		"2006-01-02T15:04Z07:00",
		"2006-01-02T15:04",
		"2006-01-02",
	}
	for _, layout := range layouts {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q is not ISO-8601 (e.g. 2024-01-17T09:00:00.123Z)", s)
}

// truncateFraction cuts a fractional second to 9 digits, the most time.Time
// holds, so over-precise producers still parse.
func truncateFraction(v string) string {
	dot := strings.IndexByte(v, '.')
	if dot < 0 {
		return v
	}
	end := dot + 1
	for end < len(v) && v[end] >= '0' && v[end] <= '9' {
		end++
	}
	if end-dot-1 <= 9 {
		return v
	}
	return v[:dot+10] + v[end:]
}
