package messages

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func readLines(t *testing.T, name string) [][]byte {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var lines [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 {
		t.Fatalf("%s: empty", name)
	}
	return lines
}

func generic(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("generic decode %s: %v", b, err)
	}
	return m
}

// isZeroJSON reports whether v is a JSON zero value: "", false, 0, null, or
// an empty array, or an object whose values are all zero.
func isZeroJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case json.Number:
		return x.String() == "0"
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !isZeroJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

// compareGeneric checks that every field of orig survives in enc with the
// same value, apart from the documented normalisations: an empty object or
// array may be omitted. Fields enc adds must be zero values unless listed in
// derived (fields filled from another field, checked by the caller).
func compareGeneric(t *testing.T, where string, orig, enc map[string]any, derived map[string]bool) {
	t.Helper()
	for k, ov := range orig {
		ev, ok := enc[k]
		if !ok {
			if isEmptyContainer(ov) {
				continue
			}
			t.Errorf("%s: field %q lost on re-encode (was %v)", where, k, ov)
			continue
		}
		om, oIsMap := ov.(map[string]any)
		em, eIsMap := ev.(map[string]any)
		if oIsMap && eIsMap {
			compareGeneric(t, where+"."+k, om, em, nil)
			continue
		}
		if !reflect.DeepEqual(ov, ev) {
			t.Errorf("%s: field %q = %v after re-encode, was %v", where, k, ev, ov)
		}
	}
	for k, ev := range enc {
		if _, ok := orig[k]; ok || derived[k] {
			continue
		}
		if !isZeroJSON(ev) {
			t.Errorf("%s: re-encode invented field %q = %v", where, k, ev)
		}
	}
}

func isEmptyContainer(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func TestLaunchGoldenRoundTrip(t *testing.T) {
	for i, line := range readLines(t, "launch-messages.jsonl") {
		where := "launch-messages.jsonl:" + strconv.Itoa(i+1)
		l1, err := DecodeLaunch(line)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		enc, err := json.Marshal(l1)
		if err != nil {
			t.Fatalf("%s: encode: %v", where, err)
		}
		l2, err := DecodeLaunch(enc)
		if err != nil {
			t.Fatalf("%s: decode re-encoded %s: %v", where, enc, err)
		}
		if !reflect.DeepEqual(l1, l2) {
			t.Errorf("%s: decode-encode-decode differs:\n%+v\n%+v", where, l1, l2)
		}
		compareGeneric(t, where, generic(t, line), generic(t, enc), nil)
	}
}

func TestLaunchGoldenValues(t *testing.T) {
	lines := readLines(t, "launch-messages.jsonl")
	var ls []Launch
	for _, line := range lines {
		l, err := DecodeLaunch(line)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	if len(ls) != 7 {
		t.Fatalf("%d launch messages, want 7", len(ls))
	}

	first := ls[0]
	if !first.IsSeed || !first.ForceFetch || first.HopPath() != "" || !first.IsGET() {
		t.Errorf("line 1 flags: %+v", first)
	}
	if got := first.Source(); got != "tid:1001:https://news.example.org/" {
		t.Errorf("line 1 Source = %q", got)
	}
	if got := first.LaunchTimestamp(); got != "20240117090000" {
		t.Errorf("line 1 LaunchTimestamp = %q", got)
	}
	if lt, ok := first.LaunchTime(); !ok || !lt.Equal(time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("line 1 LaunchTime = %v, %v", lt, ok)
	}
	if got := first.Annotations(); !reflect.DeepEqual(got, []string{"resetQuotas", "launchTimestamp:20240117090000"}) {
		t.Errorf("line 1 Annotations = %q", got)
	}
	if rd := first.ParentURLMetadata.HeritableData.RefreshDepth; rd == nil || *rd != 1 {
		t.Errorf("line 1 refreshDepth = %v", rd)
	}
	if raw := first.ParentURLMetadata.HeritableData.Extra["launch_ts"]; string(raw) != `"20240117090000"` {
		t.Errorf("line 1 launch_ts kept as %s", raw)
	}
	if ts, err := first.Time(); err != nil || !ts.Equal(time.Date(2024, 1, 17, 9, 0, 1, 234567000, time.UTC)) {
		t.Errorf("line 1 Time = %v, %v", ts, err)
	}
	if ts, err := ls[1].Time(); err != nil || !ts.Equal(time.Date(2024, 1, 17, 14, 0, 0, 500000000, time.UTC)) {
		t.Errorf("line 2 Time = %v, %v", ts, err)
	}
	if !reflect.DeepEqual(ls[1].Sheets, []string{"ignoreRobots", "subdomainsScope", "higherLimit"}) {
		t.Errorf("line 2 sheets = %q", ls[1].Sheets)
	}
	if ts, err := ls[2].Time(); err != nil || !ts.IsZero() {
		t.Errorf("line 3 (no timestamp) Time = %v, %v", ts, err)
	}
	if ls[2].Source() != "http://acid.example.com/" || ls[2].LaunchTimestamp() != "" {
		t.Errorf("line 3 source/launch: %q %q", ls[2].Source(), ls[2].LaunchTimestamp())
	}

	fifth := ls[4]
	if fifth.ParentOrSelf() != fifth.URL {
		t.Errorf("line 5 ParentOrSelf = %q, want the url", fifth.ParentOrSelf())
	}
	if fifth.RecrawlInterval == nil || *fifth.RecrawlInterval != 86400 {
		t.Errorf("line 5 recrawlInterval = %v", fifth.RecrawlInterval)
	}
	if got := string(fifth.TargetSheet["queueAssignmentPolicy.parallelQueues"]); got != "2" {
		t.Errorf("line 5 targetSheet parallelQueues = %s", got)
	}
	if got := fifth.Annotations(); !reflect.DeepEqual(got, []string{"WebRenderThis"}) {
		t.Errorf("line 5 annotations = %q", got)
	}

	sixth := ls[5]
	if sixth.HopPath() != "L" || sixth.ParentOrSelf() != "https://news.example.org/" {
		t.Errorf("line 6 hop path %q via %q", sixth.HopPath(), sixth.ParentOrSelf())
	}
	if got := sixth.RequestHeaders(); !reflect.DeepEqual(got, map[string]string{"Accept-Language": "en-GB"}) {
		t.Errorf("line 6 RequestHeaders = %v", got)
	}

	seventh := ls[6]
	if seventh.IsGET() {
		t.Error("line 7 is a POST, IsGET = true")
	}
	if seventh.HopPath() != "LS" {
		t.Errorf("line 7 hop path = %q, want LS", seventh.HopPath())
	}
}

func TestLaunchEncodingShape(t *testing.T) {
	b := mustMarshal(t, Launch{URL: "http://x/"})
	m := generic(t, b)
	if h, ok := m["headers"].(map[string]any); !ok || len(h) != 0 {
		t.Errorf("headers = %v, want {}", m["headers"])
	}
	if s, ok := m["sheets"].([]any); !ok || len(s) != 0 {
		t.Errorf("sheets = %v, want []", m["sheets"])
	}
	for _, k := range []string{"targetSheet", "recrawlInterval", "method", "timestamp"} {
		if _, ok := m[k]; ok {
			t.Errorf("empty %s encoded: %s", k, b)
		}
	}
	if hd, ok := m["parentUrlMetadata"].(map[string]any)["heritableData"].(map[string]any); !ok || len(hd) != 0 {
		t.Errorf("heritableData = %v, want {}", m["parentUrlMetadata"])
	}
}

func TestRequestHeaders(t *testing.T) {
	l := Launch{URL: "http://x/", Headers: map[string]string{
		":method": "GET", " :path": "/", "Host": "h", "CONNECTION": "close", "Accept-Encoding": "gzip",
		"Upgrade-Insecure-Requests": "1", "Referer": "http://r/", "x-custom": "1",
	}}
	want := map[string]string{"Referer": "http://r/", "x-custom": "1"}
	if got := l.RequestHeaders(); !reflect.DeepEqual(got, want) {
		t.Errorf("RequestHeaders = %v, want %v", got, want)
	}
	if got := (Launch{URL: "http://x/", Headers: map[string]string{"host": "h"}}).RequestHeaders(); got != nil {
		t.Errorf("all dropped: %v, want nil", got)
	}
}

func TestLaunchMethodsDefaults(t *testing.T) {
	l := Launch{URL: "http://x/", Method: "get"}
	if !l.IsGET() || !(Launch{URL: "u"}).IsGET() || (Launch{URL: "u", Method: "HEAD"}).IsGET() {
		t.Error("IsGET")
	}
	l.ParentURLMetadata.HeritableData.Annotations = []string{"x", "launchTimestamp:20200101000000"}
	if l.LaunchTimestamp() != "20200101000000" {
		t.Errorf("annotation fallback: %q", l.LaunchTimestamp())
	}
	l.ParentURLMetadata.HeritableData.Annotations = nil
	l.ParentURLMetadata.HeritableData.Extra = map[string]json.RawMessage{"launch_ts": json.RawMessage(`"20210101000000"`)}
	if l.LaunchTimestamp() != "20210101000000" {
		t.Errorf("launch_ts fallback: %q", l.LaunchTimestamp())
	}
	l.ParentURLMetadata.HeritableData.Extra = map[string]json.RawMessage{"launch_ts": json.RawMessage(`"2021"`)}
	if _, ok := l.LaunchTime(); ok {
		t.Error("LaunchTime ok for a 4-digit timestamp")
	}
	l.Timestamp = "yesterday"
	if _, err := l.Time(); err == nil || !strings.Contains(err.Error(), "yesterday") {
		t.Errorf("Time on bad timestamp: %v", err)
	}
}

func TestHeritableDataExtraAndClone(t *testing.T) {
	in := `{"source":"s","heritable":[],"custom":{"a":[1,2]},"launchTimestamp":"20240101000000","n":12345678901234567890}`
	var h HeritableData
	if err := json.Unmarshal([]byte(in), &h); err != nil {
		t.Fatal(err)
	}
	if h.Heritable == nil || len(h.Heritable) != 0 {
		t.Errorf("empty heritable list not kept: %#v", h.Heritable)
	}
	out, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	compareGeneric(t, "heritableData", generic(t, []byte(in)), generic(t, out), nil)
	if !strings.Contains(string(out), "12345678901234567890") {
		t.Errorf("big number changed: %s", out)
	}
	// A known field wins over an Extra key of the same name.
	h.Extra["source"] = json.RawMessage(`"stale"`)
	out, _ = json.Marshal(h)
	if !strings.Contains(string(out), `"source":"s"`) || strings.Contains(string(out), "stale") {
		t.Errorf("known field did not win: %s", out)
	}
	c := h.Clone()
	c.Annotations = append(c.Annotations, "x")
	c.Extra["new"] = json.RawMessage(`1`)
	if len(h.Annotations) != 0 || h.Extra["new"] != nil {
		t.Error("Clone shares state with the original")
	}
}

func TestDecodeLaunchBadInput(t *testing.T) {
	tests := []struct {
		name, in, mention string
	}{
		{"empty", ``, "truncated"},
		{"truncated", `{"url": "http://x/", "hop": "L"`, "truncated"},
		{"not json", `url=http://x/`, "line 1 column 1"},
		{"syntax error position", "{\"url\": \"http://x/\",\n \"hop\": L}", "line 2"},
		{"trailing data", `{"url": "http://x/"} {"url": "http://y/"}`, "after the message"},
		{"array", `[{"url": "http://x/"}]`, "array"},
		{"null", `null`, "url"},
		{"missing url", `{"hop": "L"}`, `"url"`},
		{"blank url", `{"url": "  "}`, `"url"`},
		{"null url", `{"url": null}`, `"url"`},
		{"url wrong type", `{"url": 5}`, "field url"},
		{"isSeed wrong type", `{"url": "http://x/", "isSeed": "yes"}`, "field isSeed"},
		{"headers wrong type", `{"url": "http://x/", "headers": ["a"]}`, "field headers"},
		{"header value wrong type", `{"url": "http://x/", "headers": {"a": 1}}`, "headers"},
		{"sheets wrong type", `{"url": "http://x/", "sheets": "ignoreRobots"}`, "field sheets"},
		{"recrawlInterval wrong type", `{"url": "http://x/", "recrawlInterval": "1d"}`, "recrawlInterval"},
		{"heritableData wrong type", `{"url": "http://x/", "parentUrlMetadata": {"heritableData": []}}`, "heritableData"},
		{"refreshDepth wrong type", `{"url": "http://x/", "parentUrlMetadata": {"heritableData": {"refreshDepth": "1"}}}`, "heritableData.refreshDepth"},
		{"annotations wrong type", `{"url": "http://x/", "parentUrlMetadata": {"heritableData": {"annotations": "a,b"}}}`, "heritableData.annotations"},
		{"bad hop", `{"url": "http://x/", "hop": "Q"}`, "hop"},
		{"two-letter hop", `{"url": "http://x/", "hop": "LL"}`, "hop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := DecodeLaunch([]byte(tt.in))
			if err == nil {
				t.Fatalf("DecodeLaunch(%s) = %+v, want error", tt.in, l)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %q", err, tt.mention)
			}
		})
	}
}

func TestDecodeLaunchUnknownFieldsIgnored(t *testing.T) {
	l, err := DecodeLaunch([]byte(`{"url": "http://x/", "futureField": {"a": 1}, "hop": "E", "parentUrlMetadata": {"pathFromSeed": "LL", "other": 1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if l.HopPath() != "LLE" {
		t.Errorf("HopPath = %q", l.HopPath())
	}
}

func TestTruncatedGoldenLinesNeverPanic(t *testing.T) {
	for _, name := range []string{"launch-messages.jsonl", "crawled-events.jsonl"} {
		for i, line := range readLines(t, name) {
			for cut := 0; cut < len(line)-1; cut++ {
				part := line[:cut]
				_, err1 := DecodeLaunch(part)
				_, err2 := DecodeCrawled(part)
				_, err3 := DecodeControl(part)
				_, err4 := DecodeWarcNotice(part)
				if err1 == nil || err2 == nil || err3 == nil || err4 == nil {
					t.Fatalf("%s:%d cut at %d decoded without error: %v %v %v %v", name, i+1, cut, err1, err2, err3, err4)
				}
			}
		}
	}
}
