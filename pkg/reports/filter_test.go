package reports

import (
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

func TestFilterMatch(t *testing.T) {
	const src = "tid:1:http://a/"
	named := func(id, ann string) *messages.Crawled {
		return &messages.Crawled{URL: "http://a/x", Seed: src, Annotations: ann,
			ExtraInfo: map[string]any{messages.ExtraLaunchID: id, "stream": "bypm"}}
	}
	for _, tc := range []struct {
		name string
		f    Filter
		ev   *messages.Crawled
		want bool
	}{
		{"zero filter", Filter{}, &messages.Crawled{}, true},
		{"source", Filter{Source: src}, &messages.Crawled{Seed: "tid:2:http://b/"}, false},
		{"stream default npld", Filter{Stream: "npld"}, &messages.Crawled{}, true},
		{"stream named", Filter{Stream: "npld"}, named("20240101000000", ""), false},
		// A deep URI of launch 1 names it, without the annotation.
		{"launch id", Filter{Launch: "20240101000000"}, named("20240101000000", ""), true},
		// The id decides even when a later launch's annotation is inherited.
		{"launch id over annotation", Filter{Launch: "20240102000000"}, named("20240101000000", "launchTimestamp:20240102000000"), false},
		{"legacy annotation", Filter{Launch: "20240101000000"}, &messages.Crawled{Annotations: "resetQuotas,launchTimestamp:20240101000000"}, true},
		{"legacy without", Filter{Launch: "20240101000000"}, &messages.Crawled{}, false},
	} {
		if got := tc.f.Match(tc.ev); got != tc.want {
			t.Errorf("%s: Match = %v, want %v", tc.name, got, tc.want)
		}
	}
}
