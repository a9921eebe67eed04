package messages

import (
	"bytes"
	"encoding/json"
	"testing"
)

// checkLaunchEncoding compares the hand-written encoder with encoding/json
// (marshalSlow): same bytes, or the same error.
func checkLaunchEncoding(t *testing.T, l Launch) {
	t.Helper()
	fast, ferr := l.MarshalJSON()
	slow, serr := l.marshalSlow()
	if (ferr == nil) != (serr == nil) || (ferr != nil && ferr.Error() != serr.Error()) {
		t.Errorf("launch %+v: error %v, encoding/json %v", l, ferr, serr)
		return
	}
	if !bytes.Equal(fast, slow) {
		t.Errorf("launch encodings differ:\n fast %s\n json %s", fast, slow)
	}
	hfast, herr := l.ParentURLMetadata.HeritableData.MarshalJSON()
	hslow, hserr := l.ParentURLMetadata.HeritableData.marshalSlow()
	if (herr == nil) != (hserr == nil) || (herr != nil && herr.Error() != hserr.Error()) {
		t.Errorf("heritableData: error %v, encoding/json %v", herr, hserr)
	}
	if !bytes.Equal(hfast, hslow) {
		t.Errorf("heritableData encodings differ:\n fast %s\n json %s", hfast, hslow)
	}
}

func TestLaunchEncodingMatchesEncodingJSON(t *testing.T) {
	var ls []Launch
	for _, line := range readLines(t, "launch-messages.jsonl") {
		l, err := DecodeLaunch(line)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	odd := "a<b>&c\"d\\e\n\t\x01\x7f é \u2028 \u2029 \xff\xfe 😀"
	rd := 0
	ls = append(ls,
		Launch{},
		Launch{URL: odd, Method: odd, Hop: odd, ParentURL: odd, Timestamp: odd,
			Headers: map[string]string{}, Sheets: []string{}, TargetSheet: map[string]json.RawMessage{},
			RecrawlInterval: Int64(-5)},
		Launch{URL: "http://x/", Headers: map[string]string{odd: odd, "b": "", "a": "1", "B": "2"},
			Sheets: []string{odd, ""}, RecrawlInterval: Int64(0),
			TargetSheet: map[string]json.RawMessage{"z": json.RawMessage(" { \"a\" : [ 1 , \"x y\" ] } "), "a": nil, odd: json.RawMessage(`"<&>"`)},
			ParentURLMetadata: ParentMetadata{PathFromSeed: "LLE", HeritableData: HeritableData{
				Source: odd, Heritable: []string{}, RefreshDepth: &rd, Annotations: []string{odd},
				Extra: map[string]json.RawMessage{"source": json.RawMessage(`"stale"`), "annotations": nil,
					"aaa": json.RawMessage("\n[1,\n2]"), "zzz": nil, odd: json.RawMessage(`12345678901234567890`)},
			}}},
		Launch{URL: "http://x/", TargetSheet: map[string]json.RawMessage{"bad": json.RawMessage(`{x`)}},
		Launch{URL: "http://x/", TargetSheet: map[string]json.RawMessage{"bad": json.RawMessage(`1 2`)}},
		Launch{URL: "http://x/", ParentURLMetadata: ParentMetadata{HeritableData: HeritableData{
			Extra: map[string]json.RawMessage{"bad": json.RawMessage(`[1,`)}}}},
		Launch{URL: "http://x/", ParentURLMetadata: ParentMetadata{HeritableData: HeritableData{
			Extra: map[string]json.RawMessage{"empty": json.RawMessage{}}}}},
	)
	for _, l := range ls {
		checkLaunchEncoding(t, l)
	}
}

func FuzzLaunchEncoding(f *testing.F) {
	t := &testing.T{}
	for _, l := range readLines(t, "launch-messages.jsonl") {
		f.Add(l)
	}
	for _, in := range fastPathCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeLaunch(b)
		if err != nil {
			return
		}
		checkLaunchEncoding(t, l)
	})
}
