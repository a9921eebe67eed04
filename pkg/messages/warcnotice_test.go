package messages

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// A notice's kind survives a strict decode and an encode: crawl-log
// notices are accepted by consumers that reject unknown fields, and a
// WARC's notice (no kind) encodes without the field, as before it existed.
func TestWarcNoticeKindRoundTrip(t *testing.T) {
	const base = `"filename":"crawl.log.20260118000000","path":"/logs/crawl.log.20260118000000","size":21,"records":3,` +
		`"crawl_name":"frequent","host":"worker-0","opened":"2026-01-17T00:00:00Z","closed":"2026-01-18T00:00:00Z"`
	tests := []struct {
		name, in string
		kind     string
	}{
		{"crawl log", `{` + base + `,"kind":"crawl_log"}`, NoticeKindCrawlLog},
		{"WARC", `{` + base + `}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := DecodeWarcNotice([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if n.Kind != tt.kind {
				t.Errorf("kind %q, want %q", n.Kind, tt.kind)
			}
			out := mustMarshal(t, n)
			var orig, re map[string]any
			if err := json.Unmarshal([]byte(tt.in), &orig); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &re); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(orig, re) {
				t.Errorf("round trip:\n%s\n%s", tt.in, out)
			}
		})
	}
	n, err := DecodeWarcNotice([]byte(`{` + base + `,"kind":"screenshot"}`))
	if err == nil || !strings.Contains(err.Error(), "kind") {
		t.Errorf("unknown kind decoded as %+v, err %v; want an error naming kind", n, err)
	}
}
