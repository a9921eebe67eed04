package cdxindex

import (
	"bytes"
	"encoding/base32"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestBase32(t *testing.T) {
	tests := []struct{ in, want string }{
		{"M5ORM4XQ5QCEZEDRNZRGSWXPCOGUVASI", "M5ORM4XQ5QCEZEDRNZRGSWXPCOGUVASI"},
		{"m5orm4xq5qcezedrnzrgswxpcoguvasi", "M5ORM4XQ5QCEZEDRNZRGSWXPCOGUVASI"},
		{"-", ""},
		{"", ""},
		{"M5OR-M4XQ", "M5ORM4XQ"}, // characters outside the alphabet are skipped
		{"MZXW6===", "MZXW6AAA"},  // "foo": padding stops decoding, the encoder zero-fills
	}
	for _, tc := range tests {
		if got := encodeBase32(decodeBase32(tc.in)); got != tc.want {
			t.Errorf("%q -> %q, want %q", tc.in, got, tc.want)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 23 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		padded := append(append([]byte(nil), b...), make([]byte, (5-n%5)%5)...)
		want := base32.StdEncoding.EncodeToString(padded)
		if got := encodeBase32(b); got != want {
			t.Errorf("encode %x = %s, want %s", b, got, want)
		}
		if got := decodeBase32(encodeBase32(b)); !bytes.Equal(got[:n], b) {
			t.Errorf("round trip %x = %x", b, got)
		}
	}
}

func TestKeyValueRoundTrip(t *testing.T) {
	cp := collectionPrefix("coll")
	caps := []capture{
		{urlkey: "org,example)/", timestamp: 20240101000000, filename: "a.warc.gz", offset: 0},
		{urlkey: "x", timestamp: 0, filename: "-", offset: -1, original: "é", mimetype: "", status: -5002,
			digest: []byte{0, 1, 2}, length: -1, redirect: "r", robotflags: "-", origLength: 5, origOffset: 6, origFile: "o"},
		{urlkey: "org,a)/\x01", timestamp: 99999999999999, filename: "f\x01", offset: 1 << 40},
	}
	for _, c := range caps {
		key := appendKey(nil, cp, &c)
		var got capture
		if err := decodeKey(key, len(cp), &got); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if err := decodeValue(appendValue(nil, &c), &got); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Errorf("round trip\n%+v\nwant\n%+v", got, c)
		}
	}
	// Key order: URL key first, then time, file and offset.
	ordered := []capture{
		{urlkey: "org,a)/", timestamp: 1, filename: "z", offset: 9},
		{urlkey: "org,a)/", timestamp: 2, filename: "a", offset: 0},
		{urlkey: "org,a)/", timestamp: 2, filename: "a", offset: 1},
		{urlkey: "org,a)/", timestamp: 2, filename: "b", offset: 0},
		{urlkey: "org,a)/a", timestamp: 0, filename: "a", offset: 0},
		{urlkey: "org,a,b)/", timestamp: 0, filename: "a", offset: 0},
	}
	for i := 1; i < len(ordered); i++ {
		if bytes.Compare(appendKey(nil, cp, &ordered[i-1]), appendKey(nil, cp, &ordered[i])) >= 0 {
			t.Errorf("key %d does not sort before key %d", i-1, i)
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	cp := collectionPrefix("c")
	good := appendKey(nil, cp, &capture{urlkey: "k", timestamp: 1, filename: "f", offset: 2})
	for _, key := range [][]byte{nil, cp, good[:len(good)-1], append(cp, bytes.Repeat([]byte{'x'}, 30)...)} {
		var c capture
		if err := decodeKey(key, len(cp), &c); err == nil {
			t.Errorf("decodeKey(%q) accepted", key)
		}
	}
	v := appendValue(nil, &capture{original: "http://x/", mimetype: "text/html", digest: []byte{1, 2}})
	for i := range len(v) {
		var c capture
		if err := decodeValue(v[:i], &c); err == nil {
			t.Errorf("decodeValue accepted a value cut at %d of %d bytes", i, len(v))
		}
	}
}

func FuzzParseIngestLine(f *testing.F) {
	for _, s := range []string{goodLine, badWolf, "", " ", "@alias a b", "- 1 {", `- 1 {"url":"x"}`,
		"- 20200101000000 http://x.org/ - - - - - - - 1 2 3 4 5", "a b c d e f g h i"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		c, err := parseIngestLine(line)
		if err != nil {
			return
		}
		cp := collectionPrefix("f")
		var got capture
		if err := decodeKey(appendKey(nil, cp, &c), len(cp), &got); err != nil {
			t.Fatalf("%q parsed but its key does not decode: %v", line, err)
		}
		if got.urlkey != c.urlkey || got.filename != c.filename || strings.IndexByte(got.urlkey, 0) >= 0 {
			t.Fatalf("%q: key round trip %+v", line, got)
		}
	})
}
