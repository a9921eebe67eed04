package crawllog

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// goldenEntries decodes testdata/events.jsonl into entries.
func goldenEntries(t testing.TB) []Entry {
	t.Helper()
	data, err := os.ReadFile("testdata/events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var es []Entry
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		ev, err := messages.DecodeCrawled(sc.Bytes())
		if err != nil {
			t.Fatalf("events.jsonl line %d: %v", n, err)
		}
		e, err := FromCrawled(ev)
		if err != nil {
			t.Fatalf("events.jsonl line %d: %v", n, err)
		}
		es = append(es, e)
	}
	return es
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
}

func TestGoldenLines(t *testing.T) {
	want := readLines(t, "testdata/crawl.log")
	es := goldenEntries(t)
	if len(es) != len(want) {
		t.Fatalf("%d events, %d golden lines", len(es), len(want))
	}
	for i, e := range es {
		e.Extra = nil
		got := string(AppendLine(nil, e))
		if i == len(es)-1 {
			want[i] += "\n"
		}
		if got != want[i] {
			t.Errorf("line %d\n got: %q\nwant: %q", i+1, got, want[i])
		}
	}
}

// The two lines of Heritrix's documentation ("Logs"), built field by field.
func TestHeritrixDocSample(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02T15:04:05.000Z", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	e := Entry{
		Logged: at("2011-06-23T17:12:09.591Z"), Status: 200, Size: 15829, HTTP: true,
		URL: "http://www.identitytheory.com/etexts/poetics.html", HopPath: "L",
		Via: "http://www.identitytheory.com/", MIME: "text/html", Thread: 25,
		FetchStart: at("2011-06-23T17:12:08.546Z"), Duration: 922 * time.Millisecond,
		Digest: "sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW",
	}
	want := "2011-06-23T17:12:09.591Z   200      15829 http://www.identitytheory.com/etexts/poetics.html L http://www.identitytheory.com/ text/html #025 20110623171208546+922 sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW - -\n"
	if got := string(AppendLine(nil, e)); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestAppendLineEdges(t *testing.T) {
	base := Entry{Logged: time.Date(2024, 1, 2, 3, 4, 5, 6_000_000, time.UTC), URL: "http://a.example/"}
	tests := []struct {
		name string
		mod  func(*Entry)
		want string
	}{
		{"zero entry prints placeholders", func(*Entry) {},
			"2024-01-02T03:04:05.006Z     0          - http://a.example/ - - no-type #000 - - - -\n"},
		{"zero HTTP size prints 0", func(e *Entry) { e.HTTP = true },
			"2024-01-02T03:04:05.006Z     0          0 http://a.example/ - - no-type #000 - - - -\n"},
		{"negative size", func(e *Entry) { e.Size, e.HTTP = -1, true },
			"2024-01-02T03:04:05.006Z     0          - http://a.example/ - - no-type #000 - - - -\n"},
		{"wide status, negative duration, non-UTC zone", func(e *Entry) {
			e.Status = 1234567
			e.Logged = e.Logged.In(time.FixedZone("X", 3600))
			e.FetchStart, e.Duration = time.Date(2024, 1, 2, 3, 4, 4, 0, time.FixedZone("Y", -7200)), -time.Second
		}, "2024-01-02T03:04:05.006Z 1234567          - http://a.example/ - - no-type #000 20240102050404000+0 - - -\n"},
		{"line breaks cannot split the line", func(e *Entry) {
			e.URL, e.Via = "http://a.example/a b\n", "http://v.example/\r"
			e.Source, e.Annotations = "tag\nx", []string{"a\r\nb", "c"}
			e.Extra = []byte("{\n\"k\": 1\n}")
		}, "2024-01-02T03:04:05.006Z     0          - http://a.example/a%20b%0A - http://v.example/%0D no-type #000 - - tag%0Ax a%0D%0Ab,c {\"k\":1}\n"},
		{"MIME truncation", func(e *Entry) { e.MIME = "text/html,text/plain" },
			"2024-01-02T03:04:05.006Z     0          - http://a.example/ - - text/html #000 - - - -\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := base
			tt.mod(&e)
			if got := string(AppendLine(nil, e)); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestTruncateMIME(t *testing.T) {
	tests := map[string]string{
		"": "no-type", "text/html": "text/html", "text/html; charset=utf-8": "text/html",
		"text/html;charset=utf-8": "text/html", " text/html": "no-type", "a,b": "a",
		"text/html\n": "no-type", "text/html; x\r\ny": "no-type", "text/plain\tx": "text/plain",
	}
	for in, want := range tests {
		if got := TruncateMIME(in); got != want {
			t.Errorf("TruncateMIME(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFromCrawledBadEvents(t *testing.T) {
	ok := `"url":"http://a.example/","status_code":200`
	tests := []struct {
		name, json, field string
	}{
		{"missing timestamp", `{` + ok + `}`, `"timestamp"`},
		{"garbage timestamp", `{` + ok + `,"timestamp":"yesterday"}`, `"timestamp"`},
		{"short start", `{` + ok + `,"timestamp":"2024-01-17T09:00:00Z","start_time_plus_duration":"2024+5"}`, `"start_time_plus_duration"`},
		{"no plus", `{` + ok + `,"timestamp":"2024-01-17T09:00:00Z","start_time_plus_duration":"20240117090002801"}`, `"start_time_plus_duration"`},
		{"bad duration", `{` + ok + `,"timestamp":"2024-01-17T09:00:00Z","start_time_plus_duration":"20240117090002801+x"}`, `"start_time_plus_duration"`},
		{"negative duration", `{` + ok + `,"timestamp":"2024-01-17T09:00:00Z","start_time_plus_duration":"20240117090002801+-3"}`, `"start_time_plus_duration"`},
		{"huge duration", `{` + ok + `,"timestamp":"2024-01-17T09:00:00Z","start_time_plus_duration":"20240117090002801+99999999999999999"}`, `"start_time_plus_duration"`},
		{"bad month", `{` + ok + `,"timestamp":"2024-01-17T09:00:00Z","start_time_plus_duration":"20241317090002801+3"}`, `"start_time_plus_duration"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := messages.DecodeCrawled([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			_, err = FromCrawled(ev)
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("err = %v, want one naming field %s", err, tt.field)
			}
		})
	}
	if _, err := FromCrawled(messages.Crawled{Timestamp: "2024-01-17T09:00:00Z"}); err == nil || !strings.Contains(err.Error(), `"url"`) {
		t.Errorf("missing url: err = %v", err)
	}
}

func BenchmarkAppendLine(b *testing.B) {
	es := goldenEntries(b)
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = AppendLine(buf[:0], es[i%len(es)])
	}
}
