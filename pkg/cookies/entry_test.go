package cookies

import (
	"strings"
	"testing"
)

func TestEntryRoundTrip(t *testing.T) {
	for _, e := range []entry{
		{Name: "a", Value: "1", Domain: "h.example", Path: "/", HostOnly: true, Created: 1, Expires: 0},
		{Name: "sid", Value: "", Domain: "example.com", Path: "/a/b", Secure: true, HTTPOnly: true, Quoted: true,
			Created: 1772366400000000, Expires: maxUnix},
		{Name: "x", Value: "with space, comma", Domain: "::1", Path: "/", Created: 5, Expires: 7},
	} {
		got, err := decodeEntry(e.encode())
		if err != nil {
			t.Fatalf("decode %q: %v", e.encode(), err)
		}
		if got != e {
			t.Errorf("round trip: got %+v, want %+v", got, e)
		}
	}
}

func TestDecodeEntryErrors(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", "has 1 fields"},
		{"v1\t1\t0\t-\tn\td\t/", "has 7 fields"},
		{"v2\t1\t0\t-\tn\td\t/\tSECRET", "unknown version"},
		{"v1\tx\t0\t-\tn\td\t/\tSECRET", "creation time"},
		{"v1\t-1\t0\t-\tn\td\t/\tSECRET", "creation time"},
		{"v1\t1\t1e3\t-\tn\td\t/\tSECRET", "expiry time"},
		{"v1\t1\t0\thz\tn\td\t/\tSECRET", "unknown flag"},
		{"v1\t1\t0\t-\t\td\t/\tSECRET", "lacks"},
		{"v1\t1\t0\t-\tn\t\t/\tSECRET", "lacks"},
		{"v1\t1\t0\t-\tn\td\tp\tSECRET", "lacks"},
	}
	for _, tc := range tests {
		_, err := decodeEntry(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("decode %q: err %v, want one containing %q", tc.in, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("decode error exposes the value: %v", err)
		}
	}
}
