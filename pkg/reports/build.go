package reports

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// extraStream is the extra_info key in which Trawler's workers name the
// stream (npld, bypm) an event belongs to; recentdb.ExtraStream.
const extraStream = "stream"

// defaultStream is the stream of events that name none (other producers'),
// as the cdxwriter files them.
const defaultStream = "npld"

// Filter selects the crawled events a set of reports covers; the zero
// Filter takes every event.
type Filter struct {
	// Stream keeps the events of one stream of the frequent crawl (npld,
	// bypm): extra_info.stream, or npld for events that name none.
	Stream string
	// Source keeps the events of one target: the source tag (the seed
	// field, e.g. "tid:1001:https://example.org/").
	Source string
	// Launch keeps the events of one launch, by its 14-digit launch
	// timestamp: the launch id every URI of the launch names
	// (extra_info launchId), or for an event without one (an older
	// producer's) its launchTimestamp:… annotation, which only the URIs
	// within the launch's refresh depth carry.
	Launch string
}

// Match reports whether ev passes the filter.
func (f Filter) Match(ev *messages.Crawled) bool {
	if f.Source != "" && ev.Seed != f.Source {
		return false
	}
	if f.Stream != "" {
		s, _ := ev.ExtraInfo[extraStream].(string)
		if s == "" {
			s = defaultStream
		}
		if s != f.Stream {
			return false
		}
	}
	if f.Launch != "" {
		if id := ev.LaunchID(); id != "" {
			return id == f.Launch
		}
		return hasAnnotation(ev.Annotations, "launchTimestamp:"+f.Launch)
	}
	return true
}

func hasAnnotation(list, want string) bool {
	for a := range strings.SplitSeq(list, ",") {
		if a == want {
			return true
		}
	}
	return false
}

// EventReader passes every crawled event of a crawl, up to the end of its
// topic as it was when the read began, to fn, and returns how many
// records it could not decode. services/worker's Journal.Events is one.
type EventReader func(ctx context.Context, fn func(messages.Crawled)) (undecodable int, err error)

// Summary says what a Build read.
type Summary struct {
	// Matched counts the events the filter kept; Skipped the ones it did not.
	Matched, Skipped int64
	// Undecodable counts records that were not crawled events; Unusable
	// events the aggregator could not use (Aggregator.Bad); Dropped events
	// past a table's MaxKeys (Aggregator.Dropped).
	Undecodable int
	Unusable    int64
	Dropped     int64
	// First and Last are the earliest and latest kept event timestamps.
	First, Last time.Time
}

// Build reads the crawled events read yields, keeps those f matches, and
// writes the six reports into dir. It is the part of writing reports that
// the standalone crawl (at its end) and `trawler reports` (any time, from
// the cluster's topic) share. When info.Start or info.End is zero it is
// taken from the earliest or latest kept event's timestamp, so a report
// of a crawl that runs on has the duration of what it covers.
func Build(ctx context.Context, read EventReader, f Filter, o Options, info RunInfo, dir string) (Summary, error) {
	agg := New(o)
	var s Summary
	bad, err := read(ctx, func(ev messages.Crawled) {
		if !f.Match(&ev) {
			s.Skipped++
			return
		}
		s.Matched++
		if t, err := time.Parse(time.RFC3339Nano, ev.Timestamp); err == nil {
			if s.First.IsZero() || t.Before(s.First) {
				s.First = t
			}
			if t.After(s.Last) {
				s.Last = t
			}
		}
		agg.Add(ev)
	})
	s.Undecodable = bad
	if err != nil {
		return s, fmt.Errorf("read crawled events: %w", err)
	}
	s.Unusable, s.Dropped = agg.Bad(), agg.Dropped()
	if info.Start.IsZero() {
		info.Start = s.First
	}
	if info.End.IsZero() {
		info.End = s.Last
	}
	if err := agg.WriteAll(dir, info); err != nil {
		return s, err
	}
	return s, nil
}
