package recentdb

import (
	"fmt"
	"math"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// ExtraAdaptiveInterval is the crawled event's extra_info key for the
// URL's adaptive recrawl interval after the capture, in whole seconds (a
// JSON number); the worker computes it (Schedule.Next) and the DB keeps it
// with the capture, where the next admission of the URL reads it.
const ExtraAdaptiveInterval = "adaptiveInterval"

// Schedule is an adaptive recrawl schedule (StormCrawler's
// AdaptiveScheduler): a URL found unchanged waits longer before it is due
// again, one found changed less.
type Schedule struct {
	// Initial is the interval of a URL with no history yet.
	Initial time.Duration
	// Min and Max bound every interval.
	Min, Max time.Duration
	// Increase (>= 1) multiplies the interval after an unchanged fetch,
	// Decrease (0 < d <= 1) after a changed one.
	Increase, Decrease float64
}

// Next is the interval after a fetch that found the URL changed or not,
// given its interval before (zero: none yet, the fetch was its first).
func (s Schedule) Next(prev time.Duration, changed bool) time.Duration {
	if prev <= 0 {
		return s.clamp(s.Initial)
	}
	f := s.Increase
	if changed {
		f = s.Decrease
	}
	next := float64(prev) * f
	if next > math.MaxInt64 {
		return s.clamp(time.Duration(math.MaxInt64))
	}
	return s.clamp(time.Duration(next).Truncate(time.Second))
}

func (s Schedule) clamp(d time.Duration) time.Duration {
	return max(s.Min, min(d, s.Max))
}

// extraSeconds reads an optional whole number of seconds from extra_info.
func extraSeconds(ev messages.Crawled, key string) (time.Duration, error) {
	v, ok := ev.ExtraInfo[key]
	if !ok || v == nil {
		return 0, nil
	}
	n, isNum := messages.WholeNumber(v)
	var err error
	if !isNum {
		err = fmt.Errorf("%v is not a whole number", v)
	}
	if err == nil && (n < 0 || n > math.MaxInt64/int64(time.Second)) {
		err = fmt.Errorf("%d is out of range", n)
	}
	if err != nil {
		return 0, fmt.Errorf("crawled event for %s: extra_info.%s: %w, want whole seconds", ev.URL, key, err)
	}
	return time.Duration(n) * time.Second, nil
}
