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

// typicalCrawled is shaped like the worker's event for a fetched page.
func typicalCrawled() Crawled {
	return Crawled{
		Timestamp: "2024-01-17T09:00:03.120Z", URL: "https://news.example.org/2024/01/17/story.html?id=42&ref=home",
		StatusCode: 200, Size: Int64(51822), ContentLength: Int64(51542),
		ContentDigest: String("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"), Mimetype: "text/html",
		HopPath: "LL", Via: "https://news.example.org/", Seed: "tid:1001:https://news.example.org/",
		Host: "news.example.org", Thread: 3, StartTimePlusDuration: "20240117090002801+299",
		Annotations: "launchTimestamp:20240117090000,resetQuotas", CrawlName: "frequent-npld",
		WarcFilename: String("NPLD-20240117085959123-00001-worker-0.warc.gz"), WarcOffset: Int64(10422), WarcLength: Int64(13107),
		WarcID: "<urn:uuid:0b6f2a8e-6d3c-4f8e-9a51-2c1f3e4d5a6b>",
		ExtraInfo: map[string]any{
			"scopeDecision": "ACCEPT by rule #2 SurtPrefixedDecideRule",
			"warcPrefix":    "NPLD",
			"etag":          `"5e1f-60f0c"`,
			"lastModified":  "Wed, 17 Jan 2024 08:00:00 GMT",
		},
	}
}

// BenchmarkCrawledJSONMarshal is the worker's call: json.Marshal on an event.
func BenchmarkCrawledJSONMarshal(b *testing.B) {
	c := typicalCrawled()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendCrawled is the replacement for BenchmarkCrawledJSONMarshal:
// into a fresh buffer each time (as json.Marshal gives), and into a reused
// one (as a producer that copies the bytes out can do).
func BenchmarkAppendCrawled(b *testing.B) {
	c := typicalCrawled()
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := AppendCrawled(nil, c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reuse", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = AppendCrawled(buf[:0], c); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAppendLaunch is the replacement for BenchmarkLaunchJSONMarshal.
func BenchmarkAppendLaunch(b *testing.B) {
	ls := benchLaunches(b)
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := AppendLaunch(nil, ls[i%len(ls)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reuse", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for i := 0; b.Loop(); i++ {
			var err error
			if buf, err = AppendLaunch(buf[:0], ls[i%len(ls)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
