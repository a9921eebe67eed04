package crawllog

import (
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

func TestEventTime(t *testing.T) {
	at := time.Date(2024, 1, 17, 9, 0, 1, 234e6, time.UTC)
	if got := EventTime(messages.Crawled{Timestamp: messages.FormatTimestamp(at)}); !got.Equal(at) {
		t.Errorf("EventTime = %v, want the event's %v", got, at)
	}
	for _, ts := range []string{"", "yesterday"} {
		before := time.Now()
		if got := EventTime(messages.Crawled{Timestamp: ts}); got.Before(before) || got.After(time.Now()) {
			t.Errorf("timestamp %q: EventTime = %v, want now", ts, got)
		}
	}
}
