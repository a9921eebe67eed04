package streamname

import "testing"

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		crawl, stream, name, history, topic string
		ok                                  bool
	}{
		{"fc", "npld", "fc-npld", "npld", "fc.tocrawl.npld", true},
		{"fc", "bypm", "fc-bypm", "bypm", "fc.tocrawl.bypm", true},
		{"dc", "", "dc", "", "dc.tocrawl", true},
		{"dc", "npld", "dc", "", "dc.tocrawl", true},
		{"fc", "other", "fc-other", "other", "fc.tocrawl.other", false},
		{"xx", "npld", "xx-npld", "npld", "xx.tocrawl.npld", false},
	} {
		if got := Name(tc.crawl, tc.stream); got != tc.name {
			t.Errorf("Name(%s, %s) = %s, want %s", tc.crawl, tc.stream, got, tc.name)
		}
		if got := History(tc.crawl, tc.stream); got != tc.history {
			t.Errorf("History(%s, %s) = %q, want %q", tc.crawl, tc.stream, got, tc.history)
		}
		if got := Topic(tc.crawl, tc.stream, "tocrawl"); got != tc.topic {
			t.Errorf("Topic(%s, %s) = %s, want %s", tc.crawl, tc.stream, got, tc.topic)
		}
		if err := Validate(tc.crawl, tc.stream); (err == nil) != tc.ok {
			t.Errorf("Validate(%s, %s) = %v", tc.crawl, tc.stream, err)
		}
	}
}
