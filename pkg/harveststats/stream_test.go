package harveststats

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// streamEvents are n events of a named launch on two partitions,
// alternating, each partition's offsets from 0.
func streamEvents(n int, launch string) []Positioned {
	out := make([]Positioned, n)
	for i := range n {
		e := ev(fmt.Sprintf("http://h%d.example%d.org/%d", i%3, i%2, i), 200+i%3*100, int64(10+i), "")
		e.ExtraInfo = map[string]any{messages.ExtraLaunchID: launch}
		out[i] = Positioned{Event: e, Partition: int32(i % 2), Offset: int64(i / 2)}
	}
	return out
}

func eventsOf(ps []Positioned) []messages.Crawled {
	out := make([]messages.Crawled, len(ps))
	for i, p := range ps {
		out[i] = p.Event
	}
	return out
}

// A streaming launch counts every event once whatever is delivered again:
// a batch repeated whole (a redelivery after a crash before the commit),
// batches overlapping (a restart from an older commit), one partition
// ahead of the other. Its statistics equal those built from the events,
// it keeps no event and no URL set in Redis, and its offsets are the last
// of each partition.
func TestStreamCountsOnceByOffset(t *testing.T) {
	ctx := context.Background()
	const ts = "20240117090000"
	evs := streamEvents(100, ts)
	l := Launch{Source: CrawlSource, Timestamp: ts}
	want := Build("dc", l, StateRunning, eventsOf(evs))
	for _, tc := range []struct {
		name    string
		batches [][]Positioned
	}{
		{"once", [][]Positioned{evs}},
		{"repeated whole", [][]Positioned{evs[:40], evs[:40], evs[40:], evs}},
		{"overlapping", [][]Positioned{evs[:30], evs[10:70], evs[50:]}},
		{"one event at a time, twice", func() [][]Positioned {
			var b [][]Positioned
			for i := range evs {
				b = append(b, evs[i:i+1], evs[i:i+1])
			}
			return b
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := embeddedtest.Redis(t)
			s := New(rdb, "dc", nil)
			for _, b := range tc.batches {
				if err := s.RecordStream(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.Stats(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("statistics differ:\n got %+v\nwant %+v", got.Totals, want.Totals)
			}
			off, err := s.Offsets(ctx, l)
			if err != nil || !reflect.DeepEqual(off, map[int32]int64{0: 49, 1: 49}) {
				t.Fatalf("offsets %v, %v", off, err)
			}
			keys, err := rdb.Keys(ctx, "*").Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				if typ, _ := rdb.Type(ctx, k).Result(); typ == "set" || (typ == "zset" && k != s.prefix+"srcs" && k != s.srcKey(CrawlSource, "l")) {
					t.Errorf("key %s (%s): a streaming launch keeps no events or URL set", k, typ)
				}
			}
		})
	}
}

// Events naming no launch count in the crawl's launch without a
// timestamp, which is active until sealed and superseded once a named
// launch begins.
func TestStreamUnnamedLaunch(t *testing.T) {
	ctx := context.Background()
	s := New(embeddedtest.Redis(t), "dc", nil)
	unnamed := []Positioned{{Event: ev("http://a.example/", 200, 5, ""), Offset: 0}, {Event: ev("http://b.example/", 404, 0, ""), Offset: 1}}
	if err := s.RecordStream(ctx, unnamed); err != nil {
		t.Fatal(err)
	}
	l := Launch{Source: CrawlSource}
	st, err := s.Stats(ctx, l)
	if err != nil || st.Totals.URIs != 2 || len(st.Domains) != 2 {
		t.Fatalf("stats %+v, %v", st.Totals, err)
	}
	act, err := s.Active(ctx)
	if err != nil || len(act) != 1 || act[0].Launch != l || act[0].Superseded {
		t.Fatalf("active %+v, %v", act, err)
	}
	if err := s.RecordStream(ctx, streamEvents(2, "20240117090000")[1:]); err != nil {
		t.Fatal(err)
	}
	act, err = s.Active(ctx)
	if err != nil || len(act) != 2 || !act[0].Superseded || act[1].Superseded {
		t.Fatalf("active after a named launch %+v, %v", act, err)
	}
}

// A written streaming launch's offsets and its place among the source's
// launches (the member "" for the one without a timestamp) go when its
// statistics expire, as a named launch's events do.
func TestStreamLaunchExpires(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	s := New(rdb, "dc", nil)
	if err := s.RecordStream(ctx, []Positioned{{Event: ev("http://a.example/", 200, 5, "")}}); err != nil {
		t.Fatal(err)
	}
	l := Launch{Source: CrawlSource}
	if err := s.Seal(ctx, l, StateCompleted); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkDone(ctx, l, "f.warc.gz", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	for range 2 { // statistics, then the sealed and done marks
		if _, err := s.Expire(ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{s.offsetsKey(l), s.countsKey(l), s.srcKey(CrawlSource, "l")} {
		if n, _ := rdb.Exists(ctx, k).Result(); n != 0 {
			t.Errorf("%s left after expiry", k)
		}
	}
}
