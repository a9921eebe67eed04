package messages

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestDecodeControl(t *testing.T) {
	good := []string{
		`{"command":"pause","target":"*"}`,
		`{"command":"resume"}`,
		`{"command":"terminate","target":"worker-3","issued_by":"ops"}`,
		`{"command":"seeds","urls":["http://example.com/"],"timestamp":"2024-01-17T09:00:00Z"}`,
		`{"command":"exclusions","surts":["http://(com,example,"]}`,
		`{"command":"exclusions","urls":["http://example.com/private/"]}`,
	}
	for _, in := range good {
		c, err := DecodeControl([]byte(in))
		if err != nil {
			t.Errorf("DecodeControl(%s): %v", in, err)
			continue
		}
		c2, err := DecodeControl(mustMarshal(t, c))
		if err != nil || !reflect.DeepEqual(c, c2) {
			t.Errorf("round trip of %s: %+v, %v", in, c2, err)
		}
	}
	bad := []struct{ in, mention string }{
		{``, "truncated"},
		{`{"command":"pause"`, "truncated"},
		{`{}`, `"command"`},
		{`{"command":"PAUSE"}`, "unknown command"},
		{`{"command":"reboot"}`, "unknown command"},
		{`{"command":1}`, "field command"},
		{`{"command":"seeds"}`, `"urls"`},
		{`{"command":"seeds","urls":[""]}`, "urls[0]"},
		{`{"command":"exclusions"}`, `"surts"`},
		{`{"command":"exclusions","surts":["ok"," "]}`, "surts[1]"},
		{`{"command":"seeds","urls":"http://x/"}`, "field urls"},
		{`{"command":"pause","scope":"planet"}`, "unknown scope"},
		{`{"command":"pause","scope":"host"}`, `"host"`},
		{`{"command":"pause","scope":"host","host":"a b"}`, `"host"`},
		{`{"command":"resume","scope":"target"}`, `"source"`},
		{`{"command":"pause","scope":"stream"}`, `"stream"`},
		{`{"command":"terminate","scope":"host"}`, `needs "host"`},
		{`{"command":"pause","host":"x"}`, `field "host"`},
		{`{"command":"pause","urls":["http://x/"]}`, `"urls"`},
		{`{"command":"exclusions","surts":["(com,"],"action":"drop"}`, "action"},
		{`{"command":"exclusions","surts":["(com,"],"scope":"host"}`, `field "scope"`},
		{`{"command":"sheets","urls":["http://x/"]}`, `"sheets"`},
		{`{"command":"sheets","sheets":["noLimit"]}`, `"surts"`},
		{`{"command":"sheets","urls":["http://x/"],"sheets":[""]}`, "sheets[0]"},
		{`{"command":"delete"}`, `"regex"`},
		{`{"command":"delete","regex":"a(b"}`, "regex"},
		{`{"command":"delete","surts":[""]}`, "surts[0]"},
		{`{"command":"seeds","urls":["http://x/"],"surts":["(com,"]}`, `"surts"`},
		{`{"command":"pause","id":"has space"}`, "id"},
		{`{"command":"pause","id":"` + strings.Repeat("x", 129) + `"}`, "id"},
		{`{"command":"pause","timestamp":"yesterday"}`, "timestamp"},
	}
	for _, tt := range bad {
		c, err := DecodeControl([]byte(tt.in))
		if err == nil {
			t.Errorf("DecodeControl(%s) = %+v, want error", tt.in, c)
			continue
		}
		if !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("DecodeControl(%s) error %q does not mention %q", tt.in, err, tt.mention)
		}
	}
}

// The golden control messages decode, round-trip, and name who sent them.
func TestControlGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/control-messages.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		c, err := DecodeControl([]byte(line))
		if err != nil {
			t.Errorf("line %d: %v", i+1, err)
			continue
		}
		var orig, re map[string]any
		_ = json.Unmarshal([]byte(line), &orig)
		_ = json.Unmarshal(mustMarshal(t, c), &re)
		if !reflect.DeepEqual(orig, re) {
			t.Errorf("line %d round trip:\n%v\n%v", i+1, orig, re)
		}
		if c.Who() == "unknown" && i > 0 {
			t.Errorf("line %d: no sender", i+1)
		}
	}
	if (Control{}).Who() != "unknown" || (Control{IssuedBy: "a"}).Who() != "a" || (Control{By: "b", IssuedBy: "a"}).Who() != "b" {
		t.Error("Who")
	}
}

func TestDecodeWarcNotice(t *testing.T) {
	in := `{"filename":"NPLD-20240117085959123-00001-worker-0.warc.gz","path":"/warcs/npld/NPLD-20240117085959123-00001-worker-0.warc.gz",` +
		`"size":1073741900,"records":30211,"sha1":"abc","crawl_name":"frequent-npld","host":"worker-0",` +
		`"opened":"2024-01-17T08:59:59.123Z","closed":"2024-01-17T10:12:00.000Z"}`
	n, err := DecodeWarcNotice([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if n.Size != 1073741900 || n.Records != 30211 || n.Viral {
		t.Errorf("notice: %+v", n)
	}
	var orig, re map[string]any
	_ = json.Unmarshal([]byte(in), &orig)
	_ = json.Unmarshal(mustMarshal(t, n), &re)
	if !reflect.DeepEqual(orig, re) {
		t.Errorf("round trip:\n%v\n%v", orig, re)
	}
	bad := []struct{ in, mention string }{
		{``, "truncated"},
		{`{"path":"/x"}`, `"filename"`},
		{`{"filename":"a/b.warc.gz","path":"/x"}`, "bare file name"},
		{`{"filename":"a.warc.gz"}`, `"path"`},
		{`{"filename":"a.warc.gz","path":"/a","size":-1}`, "size"},
		{`{"filename":"a.warc.gz","path":"/a","records":-1}`, "records"},
		{`{"filename":"a.warc.gz","path":"/a","size":"1"}`, "field size"},
		{`{"filename":"a.warc.gz","path":"/a","closed":"soon"}`, "closed"},
	}
	for _, tt := range bad {
		n, err := DecodeWarcNotice([]byte(tt.in))
		if err == nil {
			t.Errorf("DecodeWarcNotice(%s) = %+v, want error", tt.in, n)
			continue
		}
		if !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("DecodeWarcNotice(%s) error %q does not mention %q", tt.in, err, tt.mention)
		}
	}
}

func TestHopHelpers(t *testing.T) {
	for _, h := range []rune{HopRedirect, HopEmbed, HopSpeculative, HopLink, HopPrerequisite, HopInferred, HopManifest, HopSubmit} {
		if !IsHop(string(h)) {
			t.Errorf("IsHop(%q) = false", h)
		}
	}
	for _, s := range []string{"", "Q", "l", "LL"} {
		if IsHop(s) {
			t.Errorf("IsHop(%q) = true", s)
		}
	}
	if !IsHopPath("") || !IsHopPath("LLERX") || IsHopPath("L-E") {
		t.Error("IsHopPath")
	}
}
