package messages

import (
	"encoding/json"
	"testing"
)

// benchLines loads a golden file once per benchmark, outside the timer.
func benchLines(b *testing.B, name string) [][]byte {
	b.Helper()
	t := &testing.T{}
	lines := readLines(t, name)
	if t.Failed() || len(lines) == 0 {
		b.Fatalf("read %s", name)
	}
	return lines
}

func BenchmarkDecodeCrawled(b *testing.B) {
	lines := benchLines(b, "crawled-events.jsonl")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := DecodeCrawled(lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeLaunch(b *testing.B) {
	lines := benchLines(b, "launch-messages.jsonl")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := DecodeLaunch(lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
}

func benchLaunches(b *testing.B) []Launch {
	b.Helper()
	var ls []Launch
	for _, line := range benchLines(b, "launch-messages.jsonl") {
		l, err := DecodeLaunch(line)
		if err != nil {
			b.Fatal(err)
		}
		ls = append(ls, l)
	}
	return ls
}

func BenchmarkLaunchMarshalJSON(b *testing.B) {
	ls := benchLaunches(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := ls[i%len(ls)].MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLaunchJSONMarshal is the producers' call: json.Marshal on a Launch.
func BenchmarkLaunchJSONMarshal(b *testing.B) {
	ls := benchLaunches(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := json.Marshal(ls[i%len(ls)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCrawledMarshalJSON(b *testing.B) {
	var cs []Crawled
	for _, line := range benchLines(b, "crawled-events.jsonl") {
		c, err := DecodeCrawled(line)
		if err != nil {
			b.Fatal(err)
		}
		cs = append(cs, c)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := cs[i%len(cs)].MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
