package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// The fuzz targets here cover the decoders of outside bytes this package
// owns: crawled events, control messages and WARC notices. Launch messages
// and the fast scanners are fuzzed by FuzzLaunchEncoding and FuzzFastDecode.

// seedLines adds every line of the golden files named as a seed.
func seedLines(f *testing.F, names ...string) {
	f.Helper()
	t := &testing.T{}
	for _, name := range names {
		for _, l := range readLines(t, name) {
			f.Add(l)
		}
	}
}

// positioned is what describeJSONError promises: a syntax error says where.
var positioned = regexp.MustCompile(`line \d+ column \d+ \(byte \d+\)`)

// checkDecodeError checks the promise of decodeStrict's errors: a JSON
// syntax error carries its line, column and byte offset.
func checkDecodeError(t *testing.T, b []byte, err error) {
	t.Helper()
	var syn *json.SyntaxError
	if err == nil || !errors.As(err, &syn) {
		return
	}
	if !positioned.MatchString(err.Error()) {
		t.Errorf("syntax error for %q does not say where: %v", b, err)
	}
}

func FuzzDecodeCrawled(f *testing.F) {
	seedLines(f, "crawled-events.jsonl")
	for _, in := range fastPathCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCrawled(b)
		if err != nil {
			checkDecodeError(t, b, err)
			return
		}
		if strings.TrimSpace(c.URL) == "" {
			t.Fatalf("decoded %q with an empty url", b)
		}
		// Round trip: the encoding of what was decoded decodes to an
		// event that encodes the same (encoding normalises, so the first
		// encoding is the fixed point, not the input).
		enc, err := AppendCrawled(nil, c)
		if err != nil {
			return // e.g. a NaN-like number in extra_info: refused, not crashed
		}
		c2, err := DecodeCrawled(enc)
		if err != nil {
			t.Fatalf("re-decoding %q (from %q): %v", enc, b, err)
		}
		enc2, err := AppendCrawled(nil, c2)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", c2, err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("round trip of %q differs:\n first  %s\n second %s", b, enc, enc2)
		}
		checkCrawledEncoding(t, c)
	})
}

func FuzzDecodeControl(f *testing.F) {
	seedLines(f, "control-messages.jsonl")
	for _, in := range []string{
		`{"command":"delete","regex":"^http://x/"}`,
		`{"command":"exclusions","action":"remove","surts":["http://(com,example,"]}`,
		`{"command":"sheets","urls":["http://example.com/"],"sheets":["polite"]}`,
		`{"command":"pause","scope":"host"}`,
		`{"command":"pause"} x`,
		`[`,
	} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeControl(b)
		if err != nil {
			checkDecodeError(t, b, err)
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("DecodeControl accepted %q but Validate says %v", b, err)
		}
		_ = c.Who()
		_ = c.EffectiveScope()
		// Round trip: what the launcher or an operator tool sends back
		// (json.Marshal) decodes to the same command.
		enc, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("marshal %+v: %v", c, err)
		}
		c2, err := DecodeControl(enc)
		if err != nil {
			t.Fatalf("re-decoding %s (from %q): %v", enc, b, err)
		}
		if !controlEqual(c, c2) {
			t.Fatalf("round trip of %q:\n first  %+v\n second %+v", b, c, c2)
		}
	})
}

func FuzzDecodeWarcNotice(f *testing.F) {
	for _, in := range []string{
		`{"filename":"NPLD-20240117085959123-00001-worker-0.warc.gz","path":"/warcs/npld/NPLD-20240117085959123-00001-worker-0.warc.gz",` +
			`"size":1073741900,"records":30211,"sha1":"abc","crawl_name":"frequent-npld","host":"worker-0",` +
			`"opened":"2024-01-17T08:59:59.123Z","closed":"2024-01-17T10:12:00.000Z"}`,
		`{"filename":"crawl.log.1","path":"/logs/crawl.log.1","records":3,"kind":"crawl_log"}`,
		`{"filename":"a.warc.gz","path":"/a","closed":"soon"}`,
		`{"filename":"a.warc.gz","path":"/a","size":"1"}`,
		``,
	} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := DecodeWarcNotice(b)
		if err != nil {
			checkDecodeError(t, b, err)
			return
		}
		if err := n.Validate(); err != nil {
			t.Fatalf("DecodeWarcNotice accepted %q but Validate says %v", b, err)
		}
		enc, err := json.Marshal(n)
		if err != nil {
			t.Fatalf("marshal %+v: %v", n, err)
		}
		n2, err := DecodeWarcNotice(enc)
		if err != nil {
			t.Fatalf("re-decoding %s (from %q): %v", enc, b, err)
		}
		if !reflect.DeepEqual(n, n2) {
			t.Fatalf("round trip of %q:\n first  %+v\n second %+v", b, n, n2)
		}
	})
}

// controlEqual compares commands as the wire sees them: an empty list is
// an absent one (omitempty).
func controlEqual(a, b Control) bool {
	for _, c := range []*Control{&a, &b} {
		for _, l := range []*[]string{&c.URLs, &c.SURTs, &c.Sheets} {
			if len(*l) == 0 {
				*l = nil
			}
		}
	}
	return reflect.DeepEqual(a, b)
}

// FuzzLaunchRoundTrip adds the round trip to FuzzLaunchEncoding (which
// compares the encoders): a launch message that decodes encodes to one
// that decodes to the same Launch, and errors say where the JSON broke.
func FuzzLaunchRoundTrip(f *testing.F) {
	seedLines(f, "launch-messages.jsonl")
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := DecodeLaunch(b)
		if err != nil {
			checkDecodeError(t, b, err)
			return
		}
		enc, err := l.MarshalJSON()
		if err != nil {
			return // a raw value encoding/json refuses; FuzzLaunchEncoding checks the error
		}
		l2, err := DecodeLaunch(enc)
		if err != nil {
			t.Fatalf("re-decoding %s (from %q): %v", enc, b, err)
		}
		if !reflect.DeepEqual(l, l2) {
			enc2, _ := l2.MarshalJSON()
			if !bytes.Equal(enc, enc2) {
				t.Fatalf("round trip of %q:\n first  %s\n second %s", b, enc, enc2)
			}
		}
	})
}
