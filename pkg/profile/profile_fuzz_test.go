package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode reads fuzzed bytes as a profile over the defaults. Decode
// must not panic or hang, and a profile it accepts renders (YAML) to a
// document that decodes, strictly, to a valid profile that renders the
// same.
func FuzzDecode(f *testing.F) {
	paths, _ := filepath.Glob("../../profiles/*.yaml")
	sheets, _ := filepath.Glob("../../profiles/sheets/*.yaml")
	for _, p := range append(paths, sheets...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, in := range []string{
		"", "politeness:\n  minDelayMs: 10\n  maxDelayMs: 20\n",
		"politeness:\n  minDelay: 10\n", "scope:\n  maxHops: many\n", "- 1\n",
		"warc:\n  prefix: 'a b'\n", "a: &a [*a, *a]\n", "crawl: !!binary aGVsbG8=\n",
		"sheets:\n  definitions:\n    polite:\n      politeness.minDelayMs: 5000\n",
	} {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := Default()
		if err := Decode(bytes.NewReader(b), &p); err != nil {
			if err.Error() == "" {
				t.Fatalf("empty error for %q", b)
			}
			return
		}
		out := p.YAML()
		q := Default()
		if err := Decode(bytes.NewReader([]byte(out)), &q); err != nil {
			t.Fatalf("rendered profile does not decode: %v\ninput:\n%s\nrendered:\n%s", err, b, out)
		}
		if again := q.YAML(); again != out {
			t.Fatalf("render is not stable:\nfirst:\n%s\nsecond:\n%s", out, again)
		}
	})
}

// FuzzSet overrides one setting by key and value, as `--set key=value`
// and the API do with operator input.
func FuzzSet(f *testing.F) {
	for _, kv := range [][2]string{
		{"politeness.minDelayMs", "100"}, {"politeness.minDelayMs", "many"},
		{"crawl.name", "x"}, {"scope.maxHops", "-1"}, {"warc.prefix", "a b"},
		{"nope", "1"}, {"politeness..x", "1"}, {"scope.rules", "[]"},
		{"fetch.allowAddresses", "[10.0.0.0/8]"}, {"crawl.name", "{a: [b"},
	} {
		f.Add(kv[0], kv[1])
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		p := Default()
		if err := p.Set(key, value); err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Set(%q, %q) accepted an invalid profile: %v", key, value, err)
		}
		// What `trawler config show` prints after the override loads.
		out := p.YAML()
		q := Default()
		if err := Decode(bytes.NewReader([]byte(out)), &q); err != nil {
			t.Fatalf("Set(%q, %q): rendered profile does not decode: %v\n%s", key, value, err, out)
		}
		if again := q.YAML(); again != out {
			t.Fatalf("Set(%q, %q): render is not stable:\nfirst:\n%s\nsecond:\n%s", key, value, out, again)
		}
	})
}
