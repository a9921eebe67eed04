package standalone

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// shiftedClock runs at real speed from a chosen reading.
type shiftedClock struct{ by time.Duration }

func (c shiftedClock) Now() time.Time { return time.Now().Add(c.by) }

// clockAt is a clock that reads t now.
func clockAt(t time.Time) shiftedClock { return shiftedClock{by: time.Until(t)} }

// A relaunch is stamped with a second that begins after it is made, and
// sent once that second has begun, so whatever was crawled before it, in
// the same second included, is older than the launch, and whatever is
// crawled after it is not.
func TestLaunchSecond(t *testing.T) {
	whole := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		made time.Time // the clock's reading when the launch is made
		want time.Time
	}{
		{"made late in a second", whole.Add(950 * time.Millisecond), whole.Add(time.Second)},
		// Something may have finished in that very second (and the
		// frontier's finish records round up to its end).
		{"made on a whole second", whole, whole.Add(time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clockAt(tc.made)
			got, err := launchSecond(context.Background(), tc.made, clock)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.want) {
				t.Errorf("stamped %s, want %s", got.Format(time.StampMilli), tc.want.Format(time.StampMilli))
			}
			if now := clock.Now(); now.Before(got) {
				t.Errorf("returned at %s, before the launch second %s began", now.Format(time.StampMilli), got.Format(time.StampMilli))
			}
			// A URI the last run finished a millisecond before the launch
			// was made is older than the launch's 14-digit timestamp, even
			// as the frontier keeps it: to the end of its second.
			finished := tc.made.Add(-time.Millisecond)
			done := finished.Truncate(time.Second).Add(time.Second - time.Millisecond)
			l := messages.Launch{}
			relaunch(&l, got)
			if lt, ok := l.LaunchTime(); !ok || !done.Before(lt) {
				t.Errorf("launch timestamp %q (%v) is not after a URI finished at %s", l.LaunchTimestamp(), ok,
					finished.Format(time.StampMilli))
			}
		})
	}
}

func TestLaunchSecondEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	made := time.Date(2030, 1, 2, 3, 4, 5, 1e6, time.UTC) // a second to wait
	_, err := launchSecond(ctx, made, clockAt(made))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}
