package frontier

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

func TestPayloadRoundTrip(t *testing.T) {
	tests := []messages.Launch{
		{URL: "http://a.example/x?y=1", ParentURL: "http://a.example/", Hop: "L", ParentURLMetadata: messages.ParentMetadata{PathFromSeed: "LL"}},
		{URL: "https://a.example", IsSeed: true, ForceFetch: true},
		{URL: "http://a.example:8080/p", ParentURL: "https://other.example/q", Hop: "E"},
		{URL: "http://a.example.evil/p", ParentURL: "http://a.example#frag", Hop: "X"},
	}
	for _, l := range tests {
		host := "a.example"
		if strings.Contains(l.URL, ":8080") {
			host = "a.example:8080"
		}
		p, err := encodePayload(l, host)
		if err != nil {
			t.Fatal(err)
		}
		var got messages.Launch
		if err := decodePayload(p, host, &got); err != nil {
			t.Fatal(err)
		}
		if got.URL != l.URL || got.ParentURL != l.ParentURL || got.HopPath() != l.HopPath() || got.IsSeed != l.IsSeed || got.ForceFetch != l.ForceFetch {
			t.Errorf("round trip of %+v gave %+v (payload %q)", l, got, p)
		}
	}
	if p, _ := encodePayload(messages.Launch{URL: "http://a.example/long/path"}, "a.example"); len(p) > len("/long/path")+8 {
		t.Errorf("payload %q does not drop the queue's own scheme and authority", p)
	}
}

func TestCodecBadInput(t *testing.T) {
	var l messages.Launch
	for _, p := range []string{"", "0\x1fh/", "x\x1fh/\x1f\x1f\x1f", "0\x1fq/\x1f\x1f\x1f", "0\x1f\x1f\x1f\x1f"} {
		if err := decodePayload(p, "h", &l); err == nil {
			t.Errorf("payload %q: want an error", p)
		}
	}
	for _, s := range []string{"", "a b c", "uk x 1 0 ctx p", "uk 1 y 0 ctx p"} {
		if _, err := parseItem(s); err == nil {
			t.Errorf("item %q: want an error", s)
		}
	}
	for _, b := range []string{"", "src", "src\n{bad json"} {
		if err := (ctxCache{}).decode(b, &l); err == nil {
			t.Errorf("context %q: want an error", b)
		}
	}
	if _, err := encodePayload(messages.Launch{URL: "http://h/", Hop: "L\x1f"}, "h"); err == nil {
		t.Error("separator in a field: want an error")
	}
}

// TestCtxCacheCopies checks that launches decoded from one cached context
// equal a fresh decode and share nothing: changing one leaves the other
// and the cache as they were.
func TestCtxCacheCopies(t *testing.T) {
	depth, every := 2, int64(3600)
	l := messages.Launch{Method: "GET", Headers: map[string]string{"X-A": "1"}, Sheets: []string{"s1"},
		TargetSheet: map[string]json.RawMessage{"k": json.RawMessage(`1`)}, RecrawlInterval: &every,
		ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{Source: "src",
			Heritable: []string{"source", "x"}, RefreshDepth: &depth, Annotations: []string{"a"},
			Extra: map[string]json.RawMessage{"x": json.RawMessage(`"y"`)}}}}
	_, blob, err := encodeCtx(l)
	if err != nil {
		t.Fatal(err)
	}
	cc := ctxCache{}
	var a, b, fresh messages.Launch
	for _, into := range []*messages.Launch{&a, &b} {
		if err := cc.decode(blob, into); err != nil {
			t.Fatal(err)
		}
	}
	if err := (ctxCache{}).decode(blob, &fresh); err != nil {
		t.Fatal(err)
	}
	if len(cc) != 1 || !reflect.DeepEqual(a, fresh) || !reflect.DeepEqual(b, fresh) {
		t.Fatalf("cached decodes %+v, %+v differ from a fresh one %+v", a, b, fresh)
	}
	h := &a.ParentURLMetadata.HeritableData
	a.Headers["X-A"], a.Sheets[0], a.TargetSheet["k"] = "2", "s2", json.RawMessage(`2`)
	h.Heritable[0], h.Annotations[0], h.Extra["x"] = "z", "b", json.RawMessage(`"z"`)
	*h.RefreshDepth, *a.RecrawlInterval = 9, 9
	var c messages.Launch
	if err := cc.decode(blob, &c); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b, fresh) || !reflect.DeepEqual(c, fresh) {
		t.Errorf("a change to one launch reached another (%+v) or the cache (%+v)", b, c)
	}
}

func TestHashID(t *testing.T) {
	a, b := hashID("http://a/"), hashID("http://b/")
	if len(a) != 11 || a == b || hashID("http://a/") != a || strings.ContainsAny(a, " \n") {
		t.Fatalf("hash ids %q %q", a, b)
	}
	if sourceID("") != "" {
		t.Fatal("no source must have no id")
	}
}

func TestHostname(t *testing.T) {
	for in, want := range map[string]string{"a.example": "a.example", "a.example:8080": "a.example", "[::1]": "[::1]", "[::1]:81": "[::1]"} {
		if got := hostnameOf(in); got != want {
			t.Errorf("hostnameOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCtxMemoMatchesEncode runs sequences of launches that differ in one
// context field at a time, or not at all, through a ctxMemo and holds every
// result to encodeCtx.
func TestCtxMemoMatchesEncode(t *testing.T) {
	one, two, hour := 1, 2, int64(3600)
	variants := []func(l *messages.Launch){
		func(l *messages.Launch) {},
		func(l *messages.Launch) { l.Method = "HEAD" },
		func(l *messages.Launch) { l.Headers = map[string]string{"X": "1"} },
		func(l *messages.Launch) { l.Headers = map[string]string{} },
		func(l *messages.Launch) { l.Sheets = []string{"a"} },
		func(l *messages.Launch) { l.TargetSheet = map[string]json.RawMessage{"k": json.RawMessage(`1`)} },
		func(l *messages.Launch) { l.TargetSheet = map[string]json.RawMessage{"k": json.RawMessage(`2`)} },
		func(l *messages.Launch) { l.RecrawlInterval = &hour },
		func(l *messages.Launch) { h := hour; l.RecrawlInterval = &h },
		func(l *messages.Launch) { l.ParentURLMetadata.HeritableData.Source = "other" },
		func(l *messages.Launch) { l.ParentURLMetadata.HeritableData.Heritable = nil },
		func(l *messages.Launch) { l.ParentURLMetadata.HeritableData.Heritable = []string{} },
		func(l *messages.Launch) { l.ParentURLMetadata.HeritableData.RefreshDepth = &one },
		func(l *messages.Launch) { l.ParentURLMetadata.HeritableData.RefreshDepth = &two },
		func(l *messages.Launch) { l.ParentURLMetadata.HeritableData.LaunchTimestamp = "20240101000000" },
		func(l *messages.Launch) { l.ParentURLMetadata.HeritableData.Annotations = []string{} },
		func(l *messages.Launch) { l.ParentURLMetadata.HeritableData.Annotations = []string{"x"} },
		func(l *messages.Launch) {
			l.ParentURLMetadata.HeritableData.Extra = map[string]json.RawMessage{"launch_ts": json.RawMessage(`"1"`)}
		},
		func(l *messages.Launch) { l.URL, l.Hop = "http://other.example/", "E" }, // not context
	}
	rng := rand.New(rand.NewPCG(5, 7))
	var memo ctxMemo
	for i := range 5000 {
		l := messages.Launch{URL: "http://a.example/", Method: "GET", Sheets: []string{},
			ParentURLMetadata: messages.ParentMetadata{HeritableData: messages.HeritableData{
				Source: "src", Heritable: []string{"source"}}}}
		variants[rng.IntN(len(variants))](&l)
		if rng.IntN(3) == 0 {
			variants[rng.IntN(len(variants))](&l)
		}
		id, blob, err := memo.encode(&l)
		wantID, wantBlob, wantErr := encodeCtx(l)
		if id != wantID || blob != wantBlob || (err == nil) != (wantErr == nil) {
			t.Fatalf("launch %d %+v: memo gave %q %q %v, encodeCtx %q %q %v", i, l, id, blob, err, wantID, wantBlob, wantErr)
		}
	}
}
