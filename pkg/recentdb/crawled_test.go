package recentdb

import (
	"bufio"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

func mustDecode(t *testing.T, s string) messages.Crawled {
	t.Helper()
	ev, err := messages.DecodeCrawled([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return ev
}

func ms(s string) time.Time {
	t, err := time.Parse("2006-01-02T15:04:05.000Z", s)
	if err != nil {
		panic(err)
	}
	return t
}

// The three golden event shapes: the renderer hand-off is skipped (as
// Heritrix's persist processor skips -5002), the Trawler and proxy events
// are captures with an original record.
func TestFromCrawledGolden(t *testing.T) {
	f, err := os.Open("testdata/crawled-events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	var got []Update
	var skips []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		u, skip, err := FromCrawled(mustDecode(t, sc.Text()))
		if err != nil {
			t.Fatal(err)
		}
		if skip != "" {
			skips = append(skips, skip)
			continue
		}
		got = append(got, u)
	}
	if len(skips) != 1 || skips[0] != "handed off to the renderer" {
		t.Errorf("skips %q, want the -5002 hand-off only", skips)
	}
	if len(got) != 2 {
		t.Fatalf("%d updates, want 2", len(got))
	}
	trawler, proxy := got[0], got[1]
	wantCap := Capture{Time: ms("2024-01-17T09:00:02.801Z"), Status: 200,
		Digest: "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", Filename: "NPLD-20240117085959123-00001-worker-0.warc.gz",
		Offset: 10422, Length: 13107}
	if trawler.Capture == nil || *trawler.Capture != wantCap {
		t.Errorf("trawler capture %+v, want %+v", trawler.Capture, wantCap)
	}
	wantOrig := Original{Time: wantCap.Time, Digest: wantCap.Digest, Filename: wantCap.Filename, Offset: 10422, Length: 13107,
		Status: 200, Mime: "text/html"}
	if trawler.Original == nil || *trawler.Original != wantOrig {
		t.Errorf("trawler original %+v, want %+v", trawler.Original, wantOrig)
	}
	if proxy.Original == nil || proxy.Original.RecordID != "<urn:uuid:7b3f4a8e-2c1d-4f57-9a6e-0b1c2d3e4f50>" ||
		proxy.Original.Offset != 2201 || proxy.Capture.Time != ms("2024-01-17T09:00:05.002Z") {
		t.Errorf("proxy update %+v %+v", proxy.Capture, proxy.Original)
	}
	if trawler.Failure != nil || proxy.Failure != nil {
		t.Error("captures carry a failure")
	}
}

func TestFromCrawledRules(t *testing.T) {
	const base = `"timestamp":"2024-01-17T09:00:03.120Z","start_time_plus_duration":"20240117090002801+299"`
	cases := []struct {
		name, event string
		skip        string
		wantErr     string
		check       func(t *testing.T, u Update)
	}{
		{name: "dns failure is stored as a failure",
			event: `{"url":"http://gone.example/","status_code":-6,` + base + `}`,
			check: func(t *testing.T, u Update) {
				if u.Failure == nil || u.Failure.Status != -6 || u.Capture != nil || u.Original != nil {
					t.Errorf("got %+v", u)
				}
			}},
		{name: "failure without fetch start uses event time",
			event: `{"url":"http://gone.example/","status_code":-9998,"timestamp":"2024-01-17T09:00:03.120Z","start_time_plus_duration":"-"}`,
			check: func(t *testing.T, u Update) {
				if u.Failure == nil || !u.Failure.Time.Equal(ms("2024-01-17T09:00:03.120Z")) {
					t.Errorf("got %+v", u.Failure)
				}
			}},
		{name: "retries exhausted is stored", event: `{"url":"http://x.example/","status_code":-8,` + base + `}`,
			check: func(t *testing.T, u Update) {
				if u.Failure == nil || u.Failure.Status != -8 {
					t.Errorf("got %+v", u)
				}
			}},
		{name: "renderer hand-off", event: `{"url":"http://x.example/","status_code":-5002,` + base + `}`, skip: "handed off to the renderer"},
		{name: "out of scope", event: `{"url":"http://x.example/","status_code":-5000,` + base + `}`, skip: "out of scope"},
		{name: "quota", event: `{"url":"http://x.example/","status_code":-5003,` + base + `}`, skip: "blocked by quota"},
		{name: "connect failed", event: `{"url":"http://x.example/","status_code":-2,` + base + `}`, skip: "connect failed"},
		{name: "connection lost", event: `{"url":"http://x.example/","status_code":-3,` + base + `}`, skip: "connection lost"},
		{name: "deferred", event: `{"url":"http://x.example/","status_code":-50,` + base + `}`, skip: "deferred"},
		{name: "unattempted", event: `{"url":"http://x.example/","status_code":0,` + base + `}`, skip: "never attempted (status 0)"},
		{name: "dns record", event: `{"url":"dns:x.example","status_code":1,` + base + `}`, skip: "not an http or https URL"},
		{name: "proxy request record",
			event: `{"url":"http://x.example/","status_code":200,"warc_type":"request","warc_filename":"f.warc.gz","warc_offset":0,` + base + `}`,
			skip:  "WARC request record"},
		{name: "revisit keeps no original",
			event: `{"url":"http://x.example/","status_code":200,"content_digest":"sha1:AAAA","annotations":"duplicate:digest","warc_filename":"f.warc.gz","warc_offset":7,"warc_length":9,` + base + `}`,
			check: func(t *testing.T, u Update) {
				if u.Capture == nil || !u.Capture.Revisit || u.Original != nil || u.Capture.Offset != 7 {
					t.Errorf("got %+v %+v", u.Capture, u.Original)
				}
			}},
		{name: "a plain 304 is a capture but never an original",
			event: `{"url":"http://x.example/","status_code":304,"content_digest":"sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ","warc_filename":"f.warc.gz","warc_offset":7,"warc_length":9,` + base + `}`,
			check: func(t *testing.T, u Update) {
				if u.Capture == nil || u.Capture.Status != 304 || u.Original != nil {
					t.Errorf("got %+v %+v", u.Capture, u.Original)
				}
			}},
		{name: "a server-not-modified revisit keeps no original",
			event: `{"url":"http://x.example/","status_code":304,"content_digest":"sha1:AAAA","annotations":"duplicate:server-not-modified","warc_filename":"f.warc.gz","warc_offset":7,"warc_length":9,` + base + `}`,
			check: func(t *testing.T, u Update) {
				if u.Capture == nil || !u.Capture.Revisit || u.Capture.Digest != "sha1:AAAA" || u.Original != nil {
					t.Errorf("got %+v %+v", u.Capture, u.Original)
				}
			}},
		{name: "capture without WARC location has no original",
			event: `{"url":"http://x.example/","status_code":404,"content_digest":"sha1:AAAA",` + base + `}`,
			check: func(t *testing.T, u Update) {
				if u.Capture == nil || u.Capture.Filename != "" || u.Capture.Length != -1 || u.Original != nil {
					t.Errorf("got %+v %+v", u.Capture, u.Original)
				}
			}},
		{name: "validators from extra_info",
			event: `{"url":"http://x.example/","status_code":200,"extra_info":{"etag":"\"abc\"","lastModified":"Wed, 17 Jan 2024 08:00:00 GMT"},` + base + `}`,
			check: func(t *testing.T, u Update) {
				if u.Capture.ETag != `"abc"` || u.Capture.LastModified != "Wed, 17 Jan 2024 08:00:00 GMT" {
					t.Errorf("got %+v", u.Capture)
				}
			}},
		{name: "etag of the wrong type",
			event:   `{"url":"http://x.example/","status_code":200,"extra_info":{"etag":17},` + base + `}`,
			wantErr: "extra_info.etag is json.Number, want a string"},
		{name: "no usable time",
			event:   `{"url":"http://x.example/","status_code":200,"timestamp":"yesterday","start_time_plus_duration":"-"}`,
			wantErr: `no usable time: start_time_plus_duration "-"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, skip, err := FromCrawled(mustDecode(t, tc.event))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if skip != tc.skip {
				t.Fatalf("skip %q, want %q", skip, tc.skip)
			}
			if tc.check != nil {
				tc.check(t, u)
			}
		})
	}
}

// Values survive the hand-written encoding whatever the strings hold.
func TestValueEncodingRoundTrip(t *testing.T) {
	at := time.Date(2024, 1, 17, 9, 0, 2, 801e6, time.UTC)
	for _, s := range []string{"", `"quoted" \ back`, "tab\tnew\nline\x01", "ünïcödé ☃", "bad \xff utf8", "<&>"} {
		c := &Capture{Time: at, Status: 304, Digest: s, Revisit: true, ETag: s, LastModified: s, Filename: "f" + s, Offset: 5, Length: -1}
		got, err := decodeCapture(encodeCapture(c, false))
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want := *c
		if !utf8.ValidString(s) {
			fixed := strings.ToValidUTF8(s, "\uFFFD")
			want.Digest, want.ETag, want.LastModified, want.Filename = fixed, fixed, fixed, "f"+fixed
		}
		if *got != want {
			t.Errorf("%q: got %+v, want %+v", s, *got, want)
		}
		o := &Original{Time: at, Digest: "sha1:X", Filename: s, Offset: 0, Length: 7, RecordID: s}
		gotO, err := decodeOriginal(encodeOriginal(o))
		if err != nil || (utf8.ValidString(s) && *gotO != *o) {
			t.Errorf("%q: original %+v %v", s, gotO, err)
		}
	}
	f, err := decodeFailure(encodeFailure(&Failure{Time: at, Status: -9998}))
	if err != nil || f.Status != -9998 || !f.Time.Equal(at) {
		t.Errorf("failure %+v %v", f, err)
	}
}

func TestStreamOfEvent(t *testing.T) {
	for _, tc := range []struct{ event, def, want string }{
		{`{"url":"http://x.example/","status_code":200,"extra_info":{"stream":"bypm"}}`, "npld", "bypm"},
		{`{"url":"http://x.example/","status_code":200,"extra_info":{"stream":""}}`, "npld", "npld"},
		{`{"url":"http://x.example/","status_code":200,"extra_info":{"stream":7}}`, "npld", "npld"},
		{`{"url":"http://x.example/","status_code":200}`, "npld", "npld"},
		{`{"url":"http://x.example/","status_code":200}`, "", ""},
	} {
		if got := Stream(mustDecode(t, tc.event), tc.def); got != tc.want {
			t.Errorf("Stream(%s, %q) = %q, want %q", tc.event, tc.def, got, tc.want)
		}
	}
}
