package cdx

import (
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// notModified is a Trawler worker's event of a 304, with extra_info
// "original" as given (raw JSON), decoded as a consumer decodes it.
func notModified(t *testing.T, status int, original string) messages.Crawled {
	t.Helper()
	extra := `"scopeDecision":"ACCEPT"`
	if original != "" {
		extra += `,"original":` + original
	}
	raw := `{"timestamp":"2026-03-01T10:00:01.500Z","url":"https://www.example.org/page","status_code":` + itoa(int64(status)) +
		`,"size":180,"content_digest":"sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ","mimetype":"unknown","hop_path":"L",` +
		`"via":"https://www.example.org/","seed":"t","host":"www.example.org","thread":1,` +
		`"start_time_plus_duration":"20260301100001000+12","annotations":"duplicate:server-not-modified",` +
		`"warc_filename":"NEW.warc.gz","warc_offset":9000,"warc_length":640,"crawl_name":"fc","extra_info":{` + extra + `}}`
	ev, err := messages.DecodeCrawled([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

const goodOriginal = `{"warc_filename":"OLD.warc.gz","warc_offset":1234,"warc_length":5678,"status_code":200,` +
	`"mimetype":"text/html; charset=utf-8","timestamp":"2026-02-01T09:00:00.000Z"}`

// The line of a 304 capture is its original's line under the 304's own
// URL and timestamp; without "original" it stays a revisit line.
func TestNotModifiedLinePointsAtOriginal(t *testing.T) {
	l, ok := FromCrawled(notModified(t, 304, goodOriginal))
	if !ok {
		t.Fatal("304 event not indexed")
	}
	want := "org,example)/page 20260301100001 https://www.example.org/page text/html 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - 5678 1234 OLD.warc.gz"
	if got := l.CDX11(); got != want {
		t.Errorf("CDX11 =\n%s\nwant\n%s", got, want)
	}
	plain, ok := FromCrawled(notModified(t, 304, ""))
	if !ok || plain.Mimetype != RevisitMime || plain.Filename != "NEW.warc.gz" || plain.Offset != 9000 {
		t.Errorf("304 without original: %+v, want a revisit line at its own record", plain)
	}
	// Only a 304 is pointed elsewhere: another status keeps its record.
	other, ok := FromCrawled(notModified(t, 200, goodOriginal))
	if !ok || other.Filename != "NEW.warc.gz" {
		t.Errorf("200 with original: %+v, want its own record", other)
	}
	// Without a length the line's is unknown.
	nolen, ok := FromCrawled(notModified(t, 304, `{"warc_filename":"OLD.warc.gz","warc_offset":0,"status_code":200,"mimetype":""}`))
	if !ok || nolen.Length != -1 || nolen.Offset != 0 || nolen.Mimetype != "" {
		t.Errorf("original without length: %+v", nolen)
	}
}

// An unusable "original" is an error naming the field, and no line.
func TestOriginalOfBadInput(t *testing.T) {
	for _, tc := range []struct{ original, field string }{
		{`"OLD.warc.gz"`, "want an object"},
		{`{"warc_offset":1,"status_code":200,"mimetype":"x"}`, "warc_filename"},
		{`{"warc_filename":"","warc_offset":1,"status_code":200,"mimetype":"x"}`, "warc_filename"},
		{`{"warc_filename":"a","warc_offset":-1,"status_code":200,"mimetype":"x"}`, "warc_offset"},
		{`{"warc_filename":"a","warc_offset":1.5,"status_code":200,"mimetype":"x"}`, "warc_offset"},
		{`{"warc_filename":"a","warc_offset":"1","status_code":200,"mimetype":"x"}`, "warc_offset"},
		{`{"warc_filename":"a","warc_offset":1,"warc_length":0,"status_code":200,"mimetype":"x"}`, "warc_length"},
		{`{"warc_filename":"a","warc_offset":1,"status_code":99,"mimetype":"x"}`, "status_code"},
		{`{"warc_filename":"a","warc_offset":1,"mimetype":"x"}`, "status_code"},
		{`{"warc_filename":"a","warc_offset":1,"status_code":200}`, "mimetype"},
		{`{"warc_filename":"a","warc_offset":1,"status_code":200,"mimetype":"x","timestamp":5}`, "timestamp"},
	} {
		ev := notModified(t, 304, tc.original)
		_, _, err := OriginalOf(ev)
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), ev.URL) {
			t.Errorf("%s: error %v, want one naming %s and the URL", tc.original, err, tc.field)
		}
		if l, ok := FromCrawled(ev); ok {
			t.Errorf("%s: indexed as %+v", tc.original, l)
		}
	}
	if _, ok, err := OriginalOf(notModified(t, 304, "null")); ok || err != nil {
		t.Errorf("null original: ok %v err %v, want absent", ok, err)
	}
}

// What a worker writes, a consumer reads back.
func TestOriginalExtraRoundTrip(t *testing.T) {
	o := Original{Filename: "F.warc.gz", Offset: 77, Length: 88, Status: 203, Mime: "image/png", Timestamp: "2026-01-01T00:00:00.000Z"}
	ev := messages.Crawled{URL: "http://a.example/", ExtraInfo: map[string]any{ExtraOriginal: o.Extra()}}
	b, err := ev.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := messages.DecodeCrawled(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []messages.Crawled{ev, back} {
		got, ok, err := OriginalOf(e)
		if err != nil || !ok || got != o {
			t.Errorf("round trip: %+v ok %v err %v, want %+v", got, ok, err, o)
		}
	}
}
