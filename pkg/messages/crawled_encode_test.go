package messages

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// refCrawled encodes through the reflection path Crawled.MarshalJSON used
// before the hand-written encoder, kept here as the reference: json.Marshal
// of a refCrawled is what json.Marshal of a Crawled gave.
type refCrawled Crawled

func (c refCrawled) MarshalJSON() ([]byte, error) {
	type plain Crawled // no methods: avoids recursing into MarshalJSON
	n := plain(c)
	if n.Size != nil && *n.Size <= 0 {
		n.Size = nil
	}
	if n.ContentLength != nil && *n.ContentLength < 0 {
		n.ContentLength = nil
	}
	if n.ContentDigest != nil && *n.ContentDigest == "" {
		n.ContentDigest = nil
	}
	if n.WarcFilename != nil && *n.WarcFilename == "" {
		n.WarcFilename = nil
	}
	if n.WarcFilename == nil || (n.WarcOffset != nil && *n.WarcOffset < 0) {
		n.WarcOffset = nil
	}
	if n.WarcFilename == nil || (n.WarcLength != nil && *n.WarcLength <= 0) {
		n.WarcLength = nil
	}
	return marshal(n)
}

// sameResult reports whether two encodings agree: equal bytes, or both
// failing with the same message once the encoded type's name is aligned.
func sameResult(got []byte, gerr error, want []byte, werr error, refType, realType string) bool {
	if gerr != nil || werr != nil {
		return gerr != nil && werr != nil &&
			gerr.Error() == strings.ReplaceAll(werr.Error(), refType, realType)
	}
	return bytes.Equal(got, want)
}

// checkCrawledEncoding compares every way of encoding c with the reference
// and reports whether they all agree.
func checkCrawledEncoding(t *testing.T, c Crawled) bool {
	t.Helper()
	ok := true
	diff := func(what string, got []byte, gerr error, want []byte, werr error) {
		t.Helper()
		if !sameResult(got, gerr, want, werr, "messages.refCrawled", "messages.Crawled") {
			ok = false
			t.Errorf("%s differs for %#v:\n got  %q (err %v)\n want %q (err %v)", what, c, got, gerr, want, werr)
		}
	}
	wantJSON, werr := json.Marshal(refCrawled(c))
	const prefix = "prefix:"
	got, gerr := AppendCrawled([]byte(prefix), c)
	if !bytes.HasPrefix(got, []byte(prefix)) {
		t.Errorf("AppendCrawled lost dst: %q", got)
		return false
	}
	diff("AppendCrawled", got[len(prefix):], gerr, wantJSON, werr)
	got, gerr = json.Marshal(c)
	diff("json.Marshal", got, gerr, wantJSON, werr)
	got, gerr = c.MarshalJSON()
	want, werr := refCrawled(c).MarshalJSON()
	diff("MarshalJSON", got, gerr, want, werr)
	return ok
}

func TestAppendCrawledGolden(t *testing.T) {
	for _, line := range readLines(t, "crawled-events.jsonl") {
		c, err := DecodeCrawled(line)
		if err != nil {
			t.Fatal(err)
		}
		checkCrawledEncoding(t, c)
	}
}

func TestAppendCrawledCases(t *testing.T) {
	odd := "a<b>&c\"d\\e\n\t\b\f\r\x00\x1f\x7f é \u2028 \u2029 \xff\xfe \xe2\x80 \xed\xa0\x80 😀"
	deep := map[string]any{"leaf": 1.5}
	for range maxAnyDepth + 5 {
		deep = map[string]any{"d": []any{deep}}
	}
	cycle := map[string]any{"a": 1}
	cycle["self"] = []any{cycle}
	full := func(m map[string]any) Crawled {
		return Crawled{Timestamp: odd, URL: "http://x/?a=1&b=<2>", StatusCode: -5002, ExtraInfo: m,
			Size: Int64(1), ContentLength: Int64(0), ContentDigest: String(odd), WarcFilename: String("f<&>"),
			WarcOffset: Int64(0), WarcLength: Int64(1), WireBytes: Int64(-3), ContentType: odd, WarcType: odd,
			HTTPMethod: odd, WarcContentType: odd, WarcID: "<urn:uuid:1>", Mimetype: odd, HopPath: odd,
			Via: odd, Seed: odd, Host: odd, Thread: math.MinInt, StartTimePlusDuration: odd, Annotations: odd, CrawlName: odd}
	}
	tests := []struct {
		name string
		c    Crawled
	}{
		{"zero", Crawled{}},
		{"all set", full(map[string]any{odd: odd, "": nil, "b": true, "f": false})},
		{"nulls", Crawled{Size: Int64(0), ContentLength: Int64(-1), ContentDigest: String(""),
			WarcFilename: String(""), WarcOffset: Int64(5), WarcLength: Int64(5), WireBytes: Int64(0)}},
		{"no file", Crawled{WarcOffset: Int64(5), WarcLength: Int64(5)}},
		{"bad location", Crawled{WarcFilename: String("f"), WarcOffset: Int64(-1), WarcLength: Int64(0)}},
		{"extremes", Crawled{Size: Int64(math.MaxInt64), ContentLength: Int64(math.MinInt64), StatusCode: math.MaxInt,
			WarcFilename: String("f"), WarcOffset: Int64(math.MaxInt64), WarcLength: Int64(math.MinInt64)}},
		{"empty extra_info", Crawled{ExtraInfo: map[string]any{}}},
		{"floats", Crawled{ExtraInfo: map[string]any{
			"z": 0.0, "nz": math.Copysign(0, -1), "small": 1e-7, "edge": 1e-6, "big": 1e21, "below": 999999999999999999999.0,
			"min": math.SmallestNonzeroFloat64, "max": math.MaxFloat64, "neg": -123456.789e-30, "third": 1.0 / 3, "int": 42.0,
			"f32": float32(1e-7), "f32b": float32(3.4e38)}}},
		{"numbers", Crawled{ExtraInfo: map[string]any{
			"n": json.Number("12345678901234567890.5e-3"), "empty": json.Number(""), "neg": json.Number("-0"),
			"i": math.MinInt, "i64": int64(math.MaxInt64), "i8": int8(-8), "u": uint64(math.MaxUint64)}}},
		{"containers", Crawled{ExtraInfo: map[string]any{
			"nilmap": map[string]any(nil), "nilslice": []any(nil), "emptymap": map[string]any{}, "emptyslice": []any{},
			"nested": map[string]any{"z": []any{1, "<&>", nil, map[string]any{odd: []any{json.Number("1e5")}}}, "a": odd}}}},
		{"other types", Crawled{ExtraInfo: map[string]any{
			"strs": []string{odd}, "strmap": map[string]string{"b": "<", "a": odd}, "raw": json.RawMessage(" {\"a\" : \"<\u2028>\" } "),
			"time": time.Date(2024, 1, 17, 9, 0, 0, 5, time.UTC), "bytes": []byte(odd), "ptr": Int64(7), "nilptr": (*int64)(nil),
			"struct": struct{ A string }{odd}, "launch": Launch{URL: "http://x/?a&b"}}}},
		{"deep", Crawled{ExtraInfo: map[string]any{"deep": deep, "x": "<"}}},
		{"NaN", Crawled{ExtraInfo: map[string]any{"a": "<", "nan": math.NaN()}}},
		{"Inf", Crawled{ExtraInfo: map[string]any{"inf": []any{math.Inf(-1)}}}},
		{"bad number", Crawled{ExtraInfo: map[string]any{"n": json.Number("1.")}}},
		{"bad raw", Crawled{ExtraInfo: map[string]any{"r": json.RawMessage("{x")}}},
		{"unsupported", Crawled{ExtraInfo: map[string]any{"c": make(chan int)}}},
		{"cycle", Crawled{ExtraInfo: cycle}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkCrawledEncoding(t, tt.c)
		})
	}
}

// trickyPieces are concatenated into random strings: everything encoding/json
// escapes or replaces, and ordinary text around it.
var trickyPieces = []string{
	"a", "Zz", "0", " ", "http://example.org/path?q=1", "\"", "\\", "/", "\x00", "\x01", "\x1f", "\b", "\f",
	"\n", "\r", "\t", "\x7f", "<", ">", "&", "\u2028", "\u2029", "é", "€", "😀", "\xff", "\xc3", "\xe2\x80",
	"\xe2\x80\xa8", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\uFFFD", "</script>",
}

func randString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(6) {
		b.WriteString(trickyPieces[r.IntN(len(trickyPieces))])
	}
	return b.String()
}

func randInt64Ptr(r *rand.Rand) *int64 {
	switch r.IntN(6) {
	case 0:
		return nil
	case 1:
		return Int64(0)
	case 2:
		return Int64(-r.Int64N(1 << 40))
	case 3:
		return Int64(math.MinInt64)
	default:
		return Int64(r.Int64())
	}
}

func randStringPtr(r *rand.Rand) *string {
	switch r.IntN(4) {
	case 0:
		return nil
	case 1:
		return String("")
	default:
		return String(randString(r))
	}
}

var specialFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.99999e-7, 1e-7, 1e20, 1e21, -1e21,
	5e-324, math.MaxFloat64, 123456789.125, 1.0 / 3}

func randFloat(r *rand.Rand) float64 {
	if r.IntN(2) == 0 {
		return specialFloats[r.IntN(len(specialFloats))]
	}
	for {
		if f := math.Float64frombits(r.Uint64()); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
	}
}

var randNumbers = []json.Number{"0", "-0", "1", "-12", "1.5", "1e5", "1E+5", "-2.5e-10", "", "123456789012345678901234567890"}

// randAny returns a value of a type extra_info holds; rare means a value
// encoding/json rejects, to exercise the error path too.
func randAny(r *rand.Rand, depth int) any {
	n := 13
	if depth > 3 {
		n = 9 // no more containers
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1, 2:
		return randString(r)
	case 3:
		return r.IntN(2) == 0
	case 4:
		return randFloat(r)
	case 5:
		return int(r.Int64()) >> r.IntN(64)
	case 6:
		return -r.Int64() >> r.IntN(64)
	case 7:
		return randNumbers[r.IntN(len(randNumbers))]
	case 8:
		switch r.IntN(40) {
		case 0:
			return math.NaN()
		case 1:
			return json.Number("01")
		}
		return []any{uint16(r.Uint32()), float32(randFloat(r)), []string{randString(r)}, json.RawMessage(` "` + randString(r) + `" `)}[r.IntN(4)]
	case 9, 10:
		return randAnyMap(r, depth+1)
	default:
		if r.IntN(8) == 0 {
			return []any(nil)
		}
		s := make([]any, r.IntN(4))
		for i := range s {
			s[i] = randAny(r, depth+1)
		}
		return s
	}
}

func randAnyMap(r *rand.Rand, depth int) map[string]any {
	if r.IntN(10) == 0 {
		return nil
	}
	m := map[string]any{}
	for range r.IntN(5) {
		m[randString(r)] = randAny(r, depth)
	}
	return m
}

func randCrawled(r *rand.Rand) Crawled {
	return Crawled{
		Timestamp: randString(r), URL: randString(r), StatusCode: int(r.Int64()) >> r.IntN(64),
		Size: randInt64Ptr(r), ContentLength: randInt64Ptr(r), ContentDigest: randStringPtr(r),
		Mimetype: randString(r), HopPath: randString(r), Via: randString(r), Seed: randString(r),
		Host: randString(r), Thread: r.IntN(200) - 100, StartTimePlusDuration: randString(r),
		Annotations: randString(r), WarcFilename: randStringPtr(r), WarcOffset: randInt64Ptr(r),
		WarcLength: randInt64Ptr(r), CrawlName: randString(r), ExtraInfo: randAnyMap(r, 0),
		ContentType: randString(r), WarcType: randString(r), WireBytes: randInt64Ptr(r),
		HTTPMethod: randString(r), WarcContentType: randString(r), WarcID: randString(r),
	}
}

func TestAppendCrawledRandom(t *testing.T) {
	checkRandom(t, 20240117, 1, randCrawled, checkCrawledEncoding)
}

// checkRandom checks 5,000 random messages from gen, giving up after five
// that diverge.
func checkRandom[M any](t *testing.T, seed, stream uint64, gen func(*rand.Rand) M, check func(*testing.T, M) bool) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, stream))
	failures := 0
	for i := range 5000 {
		if !check(t, gen(r)) {
			if failures++; failures == 5 {
				t.Fatalf("giving up after %d divergent messages (seed %d, message %d)", failures, seed, i)
			}
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	inputs := append([]string{""}, trickyPieces...)
	for range 3000 {
		inputs = append(inputs, randString(r))
	}
	for b := range 256 { // every single byte, alone and around a rune
		inputs = append(inputs, string(rune(b)), string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"\u2028")
	}
	for _, s := range inputs {
		html, _ := json.Marshal(s)
		plain, _ := marshal(s)
		if got := appendString(nil, s, true); !bytes.Equal(got, html) {
			t.Errorf("appendString(%q, html) = %s, encoding/json %s", s, got, html)
		}
		if got := appendString(nil, s, false); !bytes.Equal(got, plain) {
			t.Errorf("appendString(%q) = %s, encoding/json %s", s, got, plain)
		}
	}
}

func TestAppendFloat64MatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	fs := append([]float64(nil), specialFloats...)
	for range 5000 {
		fs = append(fs, randFloat(r), r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)))
	}
	for _, f := range fs {
		want, _ := json.Marshal(f)
		if got, err := appendFloat64(nil, f); err != nil || !bytes.Equal(got, want) {
			t.Errorf("appendFloat64(%v) = %s, %v; encoding/json %s", f, got, err, want)
		}
	}
}

func TestIsValidNumberMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	const alphabet = "0123456789-+.eEx "
	inputs := []string{"-", "0", "-0", "00", "01", "1.", ".5", "1.5", "1e", "1e+", "1e-", "1e+5", "1E5", "-1.5e-5x", "1e5.5"}
	for range 20000 {
		b := make([]byte, 1+r.IntN(7))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		inputs = append(inputs, string(b))
	}
	for _, s := range inputs {
		_, err := json.Marshal(json.Number(s))
		if got := isValidNumber(s); got != (err == nil) {
			t.Errorf("isValidNumber(%q) = %v, encoding/json error %v", s, got, err)
		}
	}
}
