package messages

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// refLaunch encodes through encoding/json's reflection (marshalSlow):
// json.Marshal of a refLaunch is what json.Marshal of a Launch must give.
type refLaunch Launch

func (l refLaunch) MarshalJSON() ([]byte, error) { return Launch(l).marshalSlow() }

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
	checkAppendLaunch(t, l)
}

// checkAppendLaunch compares AppendLaunch with json.Marshal, both of the
// Launch and of its reflection-path twin, and reports whether they agree.
func checkAppendLaunch(t *testing.T, l Launch) bool {
	t.Helper()
	const prefix = "prefix:"
	got, gerr := AppendLaunch([]byte(prefix), l)
	if !bytes.HasPrefix(got, []byte(prefix)) {
		t.Errorf("AppendLaunch lost dst: %q", got)
		return false
	}
	got = got[len(prefix):]
	ok := true
	want, werr := json.Marshal(l)
	if !sameResult(got, gerr, want, werr, "", "") {
		ok = false
		t.Errorf("AppendLaunch differs from json.Marshal for %#v:\n got  %q (err %v)\n want %q (err %v)", l, got, gerr, want, werr)
	}
	want, werr = json.Marshal(refLaunch(l))
	if !sameResult(got, gerr, want, werr, "messages.refLaunch", "messages.Launch") {
		ok = false
		t.Errorf("AppendLaunch differs from encoding/json for %#v:\n got  %q (err %v)\n want %q (err %v)", l, got, gerr, want, werr)
	}
	return ok
}

// randRaw returns a raw value as producers write them: compact or not,
// with literal <, >, & and U+2028 inside strings; rarely an invalid one.
func randRaw(r *rand.Rand) json.RawMessage {
	switch r.IntN(12) {
	case 0:
		return nil
	case 1:
		return json.RawMessage(`{"x":`)
	case 2:
		return json.RawMessage(" {\n \"a\" : [ 1 , \"x\u2028<&>\" ] }\t")
	case 3:
		return json.RawMessage("\"\u2028\u2029</script>&amp;\"")
	case 4:
		return json.RawMessage(`[ 1e5 , -0.5 , true , null ]`)
	}
	b, _ := marshal(randAny(r, 2))
	if r.IntN(2) == 0 {
		b = append(append([]byte(" "), b...), '\n')
	}
	return b
}

func randStrings(r *rand.Rand) []string {
	if r.IntN(4) == 0 {
		return nil
	}
	s := make([]string, r.IntN(4))
	for i := range s {
		s[i] = randString(r)
	}
	return s
}

func randLaunch(r *rand.Rand) Launch {
	l := Launch{
		URL: randString(r), IsSeed: r.IntN(2) == 0, ForceFetch: r.IntN(2) == 0,
		Hop: randString(r), ParentURL: randString(r), Sheets: randStrings(r), Timestamp: randString(r),
		ParentURLMetadata: ParentMetadata{PathFromSeed: randString(r), HeritableData: HeritableData{
			Source: randString(r), Heritable: randStrings(r), LaunchTimestamp: randString(r), Annotations: randStrings(r),
		}},
	}
	if r.IntN(2) == 0 {
		l.Method = randString(r)
	}
	if r.IntN(2) == 0 {
		l.RecrawlInterval = randInt64Ptr(r)
	}
	if r.IntN(2) == 0 {
		d := int(r.Int64()) >> r.IntN(64)
		if r.IntN(3) == 0 {
			d = math.MinInt
		}
		l.ParentURLMetadata.HeritableData.RefreshDepth = &d
	}
	if n := r.IntN(4); n > 0 {
		l.Headers = map[string]string{}
		for range n - 1 {
			l.Headers[randString(r)] = randString(r)
		}
	}
	known := []string{hdSource, hdHeritable, hdRefreshDepth, hdLaunchTimestamp, hdAnnotations}
	for _, m := range []*map[string]json.RawMessage{&l.TargetSheet, &l.ParentURLMetadata.HeritableData.Extra} {
		if n := r.IntN(4); n > 0 {
			*m = map[string]json.RawMessage{}
			for range n - 1 {
				k := randString(r)
				if r.IntN(4) == 0 {
					k = known[r.IntN(len(known))]
				}
				(*m)[k] = randRaw(r)
			}
		}
	}
	return l
}

func TestAppendLaunchRandom(t *testing.T) {
	checkRandom(t, 20240118, 2, randLaunch, checkAppendLaunch)
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
