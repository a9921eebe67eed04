package crawllog

import (
	"testing"
	"time"
)

func TestCaptureKeyMatchesLineKey(t *testing.T) {
	start := time.Date(2024, 1, 17, 9, 0, 4, 987_000_000, time.UTC)
	for _, url := range []string{"http://a.example/", "http://a.example/a b", "dns:a.example", "http://a.example/\u00a0\n"} {
		line := AppendLine(nil, Entry{Logged: start.Add(time.Second), Status: 200, URL: url, FetchStart: start,
			Annotations: []string{"stream: X FOUND"}})
		got, ok := LineKey(line)
		if want := CaptureKey(url, start.Truncate(time.Second).In(time.FixedZone("X", 3600))); !ok || got != want {
			t.Errorf("%q: LineKey = %q, %v; CaptureKey = %q", url, got, ok, want)
		}
	}
	for _, line := range []string{
		"2024-01-17T09:00:05.500Z -9998          - https://a.example/private/ L https://a.example/ no-type #012 - - - -",
		"not a crawl.log line",
		"",
	} {
		if k, ok := LineKey([]byte(line)); ok {
			t.Errorf("LineKey(%q) = %q, want none", line, k)
		}
	}
}
