package cdxwriter

import (
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func goldenEvents(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/crawled-events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// The three golden shapes: the -5002 hand-off gives nothing, the Trawler
// and proxy events give an index line and a capture update.
func TestPrepareGolden(t *testing.T) {
	var got []event
	for _, v := range goldenEvents(t) {
		e, err := decodeRecord(&kgo.Record{Value: []byte(v)})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		got = append(got, e)
	}
	if got[0].result != resultSkipped || got[0].line != nil || got[0].update != nil {
		t.Errorf("hand-off: %+v", got[0])
	}
	want := []string{
		"org,example,news)/ 20240117090002 https://news.example.org/ text/html 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - 13107 10422 NPLD-20240117085959123-00001-worker-0.warc.gz",
		"net,example,cdn)/lib.js 20240117090005 https://cdn.example.net/lib.js application/javascript 200 LCEWW6ZKJ3UEBNBBJTUM7N7J4V5LFI4L - - 3190 2201 NPLD-WEBRENDER-20240117085901000-00000-renderer-0.warc.gz",
	}
	for i, w := range want {
		e := got[i+1]
		if e.result != resultCapture || e.line == nil || e.line.CDX11() != w || e.update == nil || e.update.Capture == nil {
			t.Errorf("event %d: %+v, line %v, want %s", i+1, e, e.line, w)
		}
	}
}

func TestPrepareOutcomes(t *testing.T) {
	const ts = `"timestamp":"2024-01-17T09:00:03.120Z","start_time_plus_duration":"20240117090002801+299"`
	cases := []struct {
		name, value string
		result      string
		failLine    string
		indexed     bool
	}{
		{name: "dns failure is a failure line", value: `{"url":"http://gone.example/a","status_code":-6,` + ts + `}`,
			result: resultFailure, failLine: "example,gone)/a 20240117090002 http://gone.example/a failure-status-code/-6 599 - - - 0 0 -"},
		{name: "robots precluded, no fetch start",
			value:  `{"url":"http://x.example/","status_code":-9998,"timestamp":"2024-01-17T09:00:03.120Z","start_time_plus_duration":"-"}`,
			result: resultFailure, failLine: "example,x)/ 20240117090003 http://x.example/ failure-status-code/-9998 599 - - - 0 0 -"},
		{name: "quota is skipped", value: `{"url":"http://x.example/","status_code":-5003,` + ts + `}`, result: resultSkipped},
		{name: "dns record is indexed only",
			value:  `{"url":"dns:x.example","status_code":1,"mimetype":"text/dns","warc_filename":"f.warc.gz","warc_offset":5,"warc_length":10,` + ts + `}`,
			result: resultIndexOnly, indexed: true},
		{name: "proxy request record is skipped",
			value:  `{"url":"http://x.example/","status_code":200,"warc_type":"request","warc_filename":"f.warc.gz","warc_offset":5,` + ts + `}`,
			result: resultSkipped},
		{name: "revisit is indexed as warc/revisit",
			value:  `{"url":"http://x.example/","status_code":200,"annotations":"duplicate:digest","content_digest":"sha1:AAAA","warc_filename":"f.warc.gz","warc_offset":5,` + ts + `}`,
			result: resultCapture, indexed: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := decodeRecord(&kgo.Record{Value: []byte(tc.value)})
			if err != nil {
				t.Fatal(err)
			}
			if e.result != tc.result || (e.line != nil) != tc.indexed {
				t.Fatalf("result %s indexed %v, want %s %v", e.result, e.line != nil, tc.result, tc.indexed)
			}
			var fl string
			if e.failLine != nil {
				fl = e.failLine.CDX11()
			}
			if fl != tc.failLine {
				t.Errorf("failure line %q, want %q", fl, tc.failLine)
			}
		})
	}
}

// Bad events are errors (so the consumer dead-letters them) that say what
// is wrong and where.
func TestPrepareBadEvents(t *testing.T) {
	cases := []struct{ value, wantErr string }{
		{`{truncated`, "invalid JSON"},
		{`[1,2]`, "want an object"},
		{`{"url":"http://x/","status_code":"two hundred"}`, "field status_code: got JSON string, want int"},
		{`{"url":"http://x/","warc_offset":"12"}`, "field warc_offset"},
		{`{"status_code":200}`, `missing required field "url"`},
		{`{"url":"http://x/","status_code":200,"timestamp":"soon","start_time_plus_duration":"-"}`, "no usable time"},
		{`{"url":"http://x/","status_code":200,"timestamp":"soon","warc_filename":"f.warc.gz","warc_offset":1}`, "cannot index record: no usable time"},
		{`{"url":"http://x/\u0000","status_code":200,"timestamp":"2024-01-17T09:00:03.120Z"}`, "NUL byte"},
		{`{"url":"http://x/","status_code":200,"timestamp":"2024-01-17T09:00:03.120Z","warc_filename":"a\u0000b","warc_offset":1}`, "warc_filename"},
		{`{"url":"http://x/","status_code":200,"timestamp":"2024-01-17T09:00:03.120Z","extra_info":{"lastModified":["x"]}}`, "extra_info.lastModified"},
		{`{"url":"http://x/","status_code":200,"timestamp":"2024-01-17T09:00:03.120Z","extra_info":{"stream":"other"}}`, `extra_info.stream "other": want npld or bypm`},
	}
	for _, tc := range cases {
		_, err := decodeRecord(&kgo.Record{Value: []byte(tc.value)})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err %v, want %q", tc.value, err, tc.wantErr)
		}
	}
}

// A 304's line points at the original its event names, in the index and
// the forward alike (one line serves both); an event whose "original"
// cannot be used is rejected, naming the field, so it goes to the DLQ.
func TestPrepareNotModified(t *testing.T) {
	const ev = `{"url":"http://x.example/p","status_code":304,"timestamp":"2024-01-17T09:00:03.120Z",` +
		`"start_time_plus_duration":"20240117090002801+299","content_digest":"sha1:AAAA","annotations":"duplicate:server-not-modified",` +
		`"warc_filename":"NEW.warc.gz","warc_offset":900,"warc_length":300,"extra_info":{"original":%s}}`
	e, err := decodeRecord(&kgo.Record{Value: []byte(strings.Replace(ev, "%s",
		`{"warc_filename":"OLD.warc.gz","warc_offset":12,"warc_length":345,"status_code":200,"mimetype":"text/html"}`, 1))})
	if err != nil {
		t.Fatal(err)
	}
	want := "example,x)/p 20240117090002 http://x.example/p text/html 200 AAAA - - 345 12 OLD.warc.gz"
	if e.line == nil || e.line.CDX11() != want || e.update == nil || !e.update.Capture.Revisit || e.update.Original != nil {
		t.Errorf("304 line %v, update %+v; want %s and a revisit capture", e.line, e.update, want)
	}
	_, err = decodeRecord(&kgo.Record{Value: []byte(strings.Replace(ev, "%s", `{"warc_filename":"OLD.warc.gz","warc_offset":"x"}`, 1))})
	if err == nil || !strings.Contains(err.Error(), "warc_offset") {
		t.Errorf("bad original: error %v, want one naming warc_offset", err)
	}
}
