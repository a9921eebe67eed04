package harveststats

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Bounded history: Expire drops a written launch's statistics, events and
// entries once it was written before the horizon, leaving its sealed and
// done entries so a late event does not make it active (or pending) again;
// one horizon later those go too, and a crawl whose launches all expired leaves no key behind.
// Launches written later, and unnamed events of other launches, are kept.
func TestExpireSealedLaunches(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	clock := time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)
	s := New(rdb, "fc", func() time.Time { return clock })
	day := 24 * time.Hour
	const id1, id2 = "20240101000000", "20240201000000"
	named := func(url, logged, id, ann string) messages.Crawled {
		e := ev(url, 200, 10, ann)
		e.Timestamp = logged
		e.ExtraInfo = map[string]any{messages.ExtraLaunchID: id}
		return e
	}
	unnamed := func(url, logged string) messages.Crawled {
		e := ev(url, 200, 10, "")
		e.Timestamp = logged
		return e
	}
	if err := s.Record(ctx, []messages.Crawled{
		named("http://a.example/", "2024-01-01T00:00:01.000Z", id1, "launchTimestamp:"+id1),
		unnamed("http://a.example/old-1", "2024-01-05T00:00:00.000Z"),
		named("http://a.example/", "2024-02-01T00:00:01.000Z", id2, "launchTimestamp:"+id2),
		unnamed("http://a.example/old-2", "2024-02-05T00:00:00.000Z"),
	}); err != nil {
		t.Fatal(err)
	}
	l1, l2 := Launch{Source: src, Timestamp: id1}, Launch{Source: src, Timestamp: id2}
	write := func(l Launch) {
		t.Helper()
		if err := s.Seal(ctx, l, StateCompleted); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkDone(ctx, l, "file-"+l.Timestamp, []byte(`{"state":"completed"}`)); err != nil {
			t.Fatal(err)
		}
	}
	clock = time.Date(2024, 1, 10, 0, 0, 0, 0, time.UTC)
	write(l1)
	clock = time.Date(2024, 2, 10, 0, 0, 0, 0, time.UTC)
	write(l2)
	// A stray member (not a launch key) is dropped without harm.
	if err := rdb.ZAdd(ctx, s.prefix+"donet", redisZ(0, "no-space-here")).Err(); err != nil {
		t.Fatal(err)
	}

	// 30 days after l1 was written, not l2.
	clock = time.Date(2024, 2, 12, 0, 0, 0, 0, time.UTC)
	n, err := s.Expire(ctx, clock.Add(-30*day))
	if err != nil || n != 2 {
		t.Fatalf("Expire: %d launches, %v; want l1 and the stray member", n, err)
	}
	if _, err := s.Stats(ctx, l1); !errors.Is(err, ErrUnknownLaunch) {
		t.Errorf("statistics of expired l1: %v, want ErrUnknownLaunch", err)
	}
	if f, _ := s.Done(ctx, l1); f != "file-"+id1 {
		t.Errorf("expired l1 done as %q: want its file until it is forgotten", f)
	}
	if sealed, err := s.Sealed(ctx); err != nil || len(sealed) != 0 {
		t.Errorf("sealed and not written after the expiry: %v, %v; want none", sealed, err)
	}
	if st, err := s.Stats(ctx, l2); err != nil || st.State != StateCompleted {
		t.Errorf("statistics of l2, written 2 days ago: %+v, %v", st, err)
	}
	if n, _ := rdb.ZCard(ctx, s.srcKey(src, "ev")).Result(); n != 1 {
		t.Errorf("unnamed events left: %d, want l2's one", n)
	}
	// A late event of l1 does not make it active again.
	if err := s.Record(ctx, []messages.Crawled{named("http://a.example/late", "2024-02-12T00:00:00.000Z", id1, "")}); err != nil {
		t.Fatal(err)
	}
	if act, err := s.Active(ctx); err != nil || len(act) != 0 {
		t.Errorf("active after a late event of expired l1: %+v, %v; want none", act, err)
	}

	// Once l2 expires too and a second horizon passes, nothing is left.
	clock = clock.Add(40 * day)
	if n, err := s.Expire(ctx, clock.Add(-30*day)); err != nil || n != 1 {
		t.Fatalf("Expire 40 days on: %d, %v; want l2", n, err)
	}
	clock = clock.Add(31 * day)
	if _, err := s.Expire(ctx, clock.Add(-30*day)); err != nil {
		t.Fatal(err)
	}
	if keys, _ := rdb.Keys(ctx, s.prefix+"*").Result(); len(keys) != 0 {
		t.Errorf("keys left after every launch expired: %v", keys)
	}
	if ls, err := s.Launches(ctx); err != nil || len(ls) != 0 {
		t.Errorf("launches after every launch expired: %v, %v", ls, err)
	}
}

// A launch written before its time was recorded ages from the first
// Expire, rather than never or at once.
func TestExpireDatesOlderLaunches(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	clock := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	s := New(rdb, "fc", func() time.Time { return clock })
	l := Launch{Source: src, Timestamp: "20240101000000"}
	if err := s.Record(ctx, []messages.Crawled{ev("http://a.example/", 200, 10, "launchTimestamp:"+l.Timestamp)}); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkDone(ctx, l, "f", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, s.prefix+"donet").Err(); err != nil { // as a store before donet wrote it
		t.Fatal(err)
	}
	clock = clock.Add(100 * 24 * time.Hour)
	if n, err := s.Expire(ctx, clock.Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("first Expire: %d, %v; want none (dated now)", n, err)
	}
	clock = clock.Add(2 * time.Hour)
	if n, err := s.Expire(ctx, clock.Add(-time.Hour)); err != nil || n != 1 {
		t.Fatalf("Expire past its horizon: %d, %v; want 1", n, err)
	}
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }
