package harveststats

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// A launch's events are read in pages of eventPage (a launch of millions
// in one reply outlasted the client's read timeout): every event of a
// launch of two and a half pages comes back once, in time order, named
// ones and unnamed ones merged.
func TestEventsReadInPages(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	s := New(rdb, "fc", nil)
	const id = "20240101000000"
	t0 := time.Date(2024, 1, 1, 0, 0, 1, 0, time.UTC)
	n := 2*eventPage + eventPage/2
	var batch []messages.Crawled
	for i := range n {
		e := ev(fmt.Sprintf("http://a.example/%d", i), 200, 10, "")
		if i == 0 {
			e.Annotations = "launchTimestamp:" + id
		}
		e.Timestamp = messages.FormatTimestamp(t0.Add(time.Duration(i) * time.Millisecond))
		if i%10 != 3 { // one in ten from a producer that names no launch
			e.ExtraInfo = map[string]any{messages.ExtraLaunchID: id}
		}
		batch = append(batch, e)
		if len(batch) == 1000 {
			if err := s.Record(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := s.Record(ctx, batch); err != nil {
		t.Fatal(err)
	}
	l := Launch{Source: src, Timestamp: id}
	got := 0
	var last time.Time
	if err := s.Events(ctx, l, true, func(e messages.Crawled) error {
		at, err := e.Time()
		if err != nil || at.Before(last) {
			return fmt.Errorf("event %d at %s after %s (%v)", got, e.Timestamp, last, err)
		}
		last = at
		got++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != n {
		t.Fatalf("read %d events of %d", got, n)
	}
	if st, err := s.Stats(ctx, l); err != nil || st.Totals.URIs != int64(n) {
		t.Fatalf("statistics: %d URIs, %v; want %d", st.Totals.URIs, err, n)
	}
}
