package messages

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCrawledGoldenRoundTrip(t *testing.T) {
	for i, line := range readLines(t, "crawled-events.jsonl") {
		where := "crawled-events.jsonl:" + strconv.Itoa(i+1)
		c1, err := DecodeCrawled(line)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		enc, err := json.Marshal(c1)
		if err != nil {
			t.Fatalf("%s: encode: %v", where, err)
		}
		c2, err := DecodeCrawled(enc)
		if err != nil {
			t.Fatalf("%s: decode re-encoded: %v", where, err)
		}
		if !reflect.DeepEqual(c1, c2) {
			t.Errorf("%s: decode-encode-decode differs:\n%+v\n%+v", where, c1, c2)
		}
		orig, re := generic(t, line), generic(t, enc)
		// Deliberate normalisation: a proxy event gains mimetype (from
		// content_type) and size (from wire_bytes).
		derived := map[string]bool{}
		if _, ok := orig["content_type"]; ok {
			derived["mimetype"] = true
			if re["mimetype"] != orig["content_type"] {
				t.Errorf("%s: mimetype %v, want content_type %v", where, re["mimetype"], orig["content_type"])
			}
		}
		if _, ok := orig["wire_bytes"]; ok {
			derived["size"] = true
			if re["size"] != orig["wire_bytes"] {
				t.Errorf("%s: size %v, want wire_bytes %v", where, re["size"], orig["wire_bytes"])
			}
		}
		compareGeneric(t, where, orig, re, derived)
	}
}

func TestCrawledGoldenValues(t *testing.T) {
	lines := readLines(t, "crawled-events.jsonl")
	if len(lines) != 3 {
		t.Fatalf("%d events, want 3", len(lines))
	}
	var cs []Crawled
	for _, l := range lines {
		c, err := DecodeCrawled(l)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	heritrix, trawler, proxy := cs[0], cs[1], cs[2]

	if heritrix.StatusCode != -5002 || heritrix.Size != nil || heritrix.WarcFilename != nil || heritrix.HasWARCLocation() {
		t.Errorf("heritrix event: %+v", heritrix)
	}
	if heritrix.ExtraInfo["warcPrefix"] != "NPLD-WEBRENDER-frequent-npld-20201215145330" || heritrix.Digest() != "" {
		t.Errorf("heritrix extra_info/digest: %v %q", heritrix.ExtraInfo, heritrix.Digest())
	}
	if start, ok := heritrix.FetchStart(); !ok || !start.Equal(time.Date(2021, 1, 16, 17, 3, 46, 438e6, time.UTC)) {
		t.Errorf("heritrix FetchStart = %v, %v", start, ok)
	}

	if !trawler.HasWARCLocation() || *trawler.WarcOffset != 10422 || *trawler.WarcLength != 13107 || *trawler.Size != 51822 {
		t.Errorf("trawler event location: %+v", trawler)
	}
	if trawler.Digest() != "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ" {
		t.Errorf("trawler Digest = %q", trawler.Digest())
	}
	if ts, err := trawler.Time(); err != nil || !ts.Equal(time.Date(2024, 1, 17, 9, 0, 3, 120e6, time.UTC)) {
		t.Errorf("trawler Time = %v, %v", ts, err)
	}

	if proxy.Mimetype != "application/javascript" || proxy.ContentType != "application/javascript" {
		t.Errorf("proxy mimetype fold: %q / %q", proxy.Mimetype, proxy.ContentType)
	}
	if proxy.Size == nil || *proxy.Size != 8731 || proxy.WarcType != "response" || proxy.HTTPMethod != "GET" {
		t.Errorf("proxy size/warc_type/method: %+v", proxy)
	}
	if !proxy.HasWARCLocation() || proxy.WarcID == "" {
		t.Errorf("proxy WARC location: %+v", proxy)
	}
}

func TestCrawledEncodingNulls(t *testing.T) {
	c := Crawled{
		URL: "http://x/", Size: Int64(0), ContentLength: Int64(-1), ContentDigest: String(""),
		WarcFilename: String(""), WarcOffset: Int64(10), WarcLength: Int64(5),
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	m := generic(t, b)
	for _, k := range []string{"size", "content_length", "content_digest", "warc_filename", "warc_offset", "warc_length"} {
		v, ok := m[k]
		if !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if _, ok := m["content_type"]; ok {
		t.Error("empty proxy field content_type encoded")
	}
	// Valid values pass through.
	c = Crawled{URL: "http://x/", Size: Int64(7), ContentLength: Int64(0), WarcFilename: String("f.warc.gz"), WarcOffset: Int64(0), WarcLength: Int64(9)}
	m = generic(t, mustMarshal(t, c))
	if m["size"] != json.Number("7") || m["content_length"] != json.Number("0") || m["warc_offset"] != json.Number("0") || m["warc_length"] != json.Number("9") {
		t.Errorf("values changed: %v", m)
	}
	// The value given to MarshalJSON is not modified.
	if c.Size == nil || *c.Size != 7 {
		t.Error("MarshalJSON modified its receiver")
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeCrawledBadInput(t *testing.T) {
	tests := []struct{ name, in, mention string }{
		{"empty", ``, "truncated"},
		{"truncated", `{"url":"http://x/","status_code":200`, "truncated"},
		{"missing url", `{"status_code":200}`, `"url"`},
		{"status wrong type", `{"url":"http://x/","status_code":"200"}`, "field status_code"},
		{"size wrong type", `{"url":"http://x/","size":"big"}`, "field size"},
		{"size fractional", `{"url":"http://x/","size":1.5}`, "size"},
		{"extra_info wrong type", `{"url":"http://x/","extra_info":"x"}`, "field extra_info"},
		{"trailing", `{"url":"http://x/"}x`, "after the message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := DecodeCrawled([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeCrawled = %+v, want error", c)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
}

func TestFetchStartMalformed(t *testing.T) {
	for _, s := range []string{"", "-", "2024011709000+5", "20241317090000000+5", "2024011709000000x+5"} {
		if ts, ok := (Crawled{StartTimePlusDuration: s}).FetchStart(); ok {
			t.Errorf("FetchStart(%q) = %v, want not ok", s, ts)
		}
	}
}

func TestFormatting(t *testing.T) {
	ts := time.Date(2024, 1, 17, 10, 0, 3, 120_999_999, time.FixedZone("CET", 3600))
	if got := FormatTimestamp(ts); got != "2024-01-17T09:00:03.120Z" {
		t.Errorf("FormatTimestamp = %q", got)
	}
	if got := Timestamp14(ts); got != "20240117090003" {
		t.Errorf("Timestamp14 = %q", got)
	}
	if got := FormatStartPlusDuration(ts, 299*time.Millisecond+900*time.Microsecond); got != "20240117090003120+299" {
		t.Errorf("FormatStartPlusDuration = %q", got)
	}
	if got := FormatStartPlusDuration(ts, -time.Second); got != "20240117090003120+0" {
		t.Errorf("FormatStartPlusDuration negative = %q", got)
	}
	if got := FormatStartPlusDuration(time.Time{}, time.Second); got != "-" {
		t.Errorf("FormatStartPlusDuration zero = %q", got)
	}
	// The formats parse back.
	back, err := ParseISOTime(FormatTimestamp(ts))
	if err != nil || !back.Equal(ts.Truncate(time.Millisecond)) {
		t.Errorf("ParseISOTime(FormatTimestamp) = %v, %v", back, err)
	}
	c := Crawled{StartTimePlusDuration: FormatStartPlusDuration(ts, time.Second)}
	if start, ok := c.FetchStart(); !ok || !start.Equal(ts.Truncate(time.Millisecond)) {
		t.Errorf("FetchStart(FormatStartPlusDuration) = %v, %v", start, ok)
	}
	if p, err := ParseTimestamp14(Timestamp14(ts)); err != nil || !p.Equal(ts.Truncate(time.Second)) {
		t.Errorf("ParseTimestamp14 = %v, %v", p, err)
	}
}

func TestParseISOTime(t *testing.T) {
	utc := func(y, mo, d, h, mi, s, ns int) time.Time {
		return time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC)
	}
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2024-01-17T09:00:01.234567", utc(2024, 1, 17, 9, 0, 1, 234567000)},
		{"2024-01-17T14:00:00.5", utc(2024, 1, 17, 14, 0, 0, 500000000)},
		{"2024-01-17T09:00:00Z", utc(2024, 1, 17, 9, 0, 0, 0)},
		{"2024-01-17T10:00:00+01:00", utc(2024, 1, 17, 9, 0, 0, 0)},
		{"2024-01-17T10:00:00+0100", utc(2024, 1, 17, 9, 0, 0, 0)},
		{"2024-01-17T10:00:00.123456789123+01", utc(2024, 1, 17, 9, 0, 0, 123456789)},
		{"2024-01-17 09:00:00", utc(2024, 1, 17, 9, 0, 0, 0)},
		{"2024-01-17T09:00", utc(2024, 1, 17, 9, 0, 0, 0)},
		{"2024-01-17", utc(2024, 1, 17, 0, 0, 0, 0)},
	}
	for _, tt := range tests {
		got, err := ParseISOTime(tt.in)
		if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("ParseISOTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2024-13-01T00:00:00", "17/01/2024", "2024-01-17T25:00:00", "20240117090000"} {
		if got, err := ParseISOTime(bad); err == nil {
			t.Errorf("ParseISOTime(%q) = %v, want error", bad, got)
		}
	}
	for _, bad := range []string{"", "2024", "2024011709000a", "20241301000000", "202401170900000"} {
		if got, err := ParseTimestamp14(bad); err == nil {
			t.Errorf("ParseTimestamp14(%q) = %v, want error", bad, got)
		}
	}
}
