package messages

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// A golden UKWA launch is stamped with its launch id, which then reaches
// every descendant through the wire form, however deep, while the launch
// timestamp stops at refreshDepth.
func TestLaunchIDInherited(t *testing.T) {
	golden := readLines(t, "launch-messages.jsonl")[0] // refreshDepth 1, launchTimestamp 20240117090000
	seed, err := DecodeLaunch(golden)
	if err != nil {
		t.Fatal(err)
	}
	heritable := slices.Clone(seed.ParentURLMetadata.HeritableData.Heritable)
	if !seed.StampLaunchID() {
		t.Fatal("a seed with a launch timestamp was not stamped")
	}
	if seed.StampLaunchID() {
		t.Error("stamped twice")
	}
	if got := seed.LaunchID(); got != "20240117090000" {
		t.Fatalf("seed launch id %q", got)
	}
	if !slices.Equal(seed.ParentURLMetadata.HeritableData.Heritable, append(heritable, HeritableLaunchID)) {
		t.Errorf("heritable = %v", seed.ParentURLMetadata.HeritableData.Heritable)
	}
	now := time.Date(2024, 1, 17, 9, 1, 0, 0, time.UTC)
	l := seed
	for depth := 1; depth <= 5; depth++ {
		child := ChildLaunch(l, l.URL+"x/", "L", now)
		b, err := AppendLaunch(nil, child)
		if err != nil {
			t.Fatal(err)
		}
		if l, err = DecodeLaunch(b); err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		if got := l.LaunchID(); got != "20240117090000" {
			t.Errorf("depth %d: launch id %q", depth, got)
		}
		if got, want := l.LaunchTimestamp() != "", depth <= 1; got != want {
			t.Errorf("depth %d: has launch timestamp %v, want %v (refreshDepth 1)", depth, got, want)
		}
		if l.StampLaunchID() {
			t.Errorf("depth %d: an inherited id was stamped again", depth)
		}
	}
}

func TestLaunchIDEdges(t *testing.T) {
	// No launch timestamp (the domain crawl's bulk seeds): nothing to stamp.
	var bare Launch
	bare.URL = "http://a.example/"
	if bare.StampLaunchID() || bare.LaunchID() != "" {
		t.Errorf("bare launch stamped: %+v", bare.ParentURLMetadata.HeritableData)
	}
	// A malformed inherited id is not an id: the timestamp speaks.
	l := Launch{URL: "http://a.example/"}
	l.ParentURLMetadata.HeritableData.LaunchTimestamp = "20240101000000"
	l.ParentURLMetadata.HeritableData.Extra = map[string]json.RawMessage{HeritableLaunchID: json.RawMessage(`7`)}
	if got := l.LaunchID(); got != "20240101000000" {
		t.Errorf("launch id %q with a malformed inherited one", got)
	}
	// An event's id comes from extra_info only, and must be 14 digits.
	for _, tc := range []struct {
		extra map[string]any
		want  string
	}{
		{nil, ""},
		{map[string]any{ExtraLaunchID: "20240101000000"}, "20240101000000"},
		{map[string]any{ExtraLaunchID: 20240101000000.0}, ""},
		{map[string]any{ExtraLaunchID: "2024"}, ""},
	} {
		if got := (Crawled{ExtraInfo: tc.extra}).LaunchID(); got != tc.want {
			t.Errorf("event extra %v: launch id %q, want %q", tc.extra, got, tc.want)
		}
	}
}
