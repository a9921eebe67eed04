package dns

import (
	"net/netip"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

func TestRecordLine(t *testing.T) {
	a := dnsmessage.TypeA
	aaaa := dnsmessage.TypeAAAA
	tests := []struct {
		name string
		rec  addrRecord
		want string
	}{
		{"7 chars: two padding tabs", addrRecord{"ab.cde.", 60, netip.MustParseAddr("192.0.2.1"), a},
			"ab.cde.\t\t\t60\tIN\tA\t192.0.2.1"},
		{"8 chars: one padding tab", addrRecord{"ab.cdef.", 60, netip.MustParseAddr("192.0.2.1"), a},
			"ab.cdef.\t\t60\tIN\tA\t192.0.2.1"},
		{"15 chars: one padding tab", addrRecord{"abcdefghij.com.", 1, netip.MustParseAddr("192.0.2.1"), a},
			"abcdefghij.com.\t\t1\tIN\tA\t192.0.2.1"},
		{"16 chars: no padding", addrRecord{"www.example.com.", 3600, netip.MustParseAddr("93.184.216.34"), a},
			"www.example.com.\t3600\tIN\tA\t93.184.216.34"},
		{"root", addrRecord{".", 0, netip.MustParseAddr("192.0.2.1"), a},
			".\t\t\t0\tIN\tA\t192.0.2.1"},
		{"escapes", addrRecord{"a b\"();\\@$\x07\xe9.test.", 5, netip.MustParseAddr("192.0.2.1"), a},
			"a\\032b\\\"\\(\\)\\;\\\\\\@\\$\\007\\233.test.\t5\tIN\tA\t192.0.2.1"},
		{"max ttl as received", addrRecord{"example.org.", 4294967295, netip.MustParseAddr("192.0.2.1"), a},
			"example.org.\t\t4294967295\tIN\tA\t192.0.2.1"},
		{"ipv6 uncompressed", addrRecord{"example.org.", 300, netip.MustParseAddr("2001:db8::1"), aaaa},
			"example.org.\t\t300\tIN\tAAAA\t2001:db8:0:0:0:0:0:1"},
		{"ipv6 all zero", addrRecord{"example.org.", 300, netip.MustParseAddr("::"), aaaa},
			"example.org.\t\t300\tIN\tAAAA\t0:0:0:0:0:0:0:0"},
		{"ipv6 hex lower, no leading zeros", addrRecord{"example.org.", 300, netip.MustParseAddr("2001:0DB8:00AB:FFFF::0001"), aaaa},
			"example.org.\t\t300\tIN\tAAAA\t2001:db8:ab:ffff:0:0:0:1"},
		{"ipv4-mapped", addrRecord{"example.org.", 300, netip.MustParseAddr("::ffff:192.0.2.1"), aaaa},
			"example.org.\t\t300\tIN\tAAAA\t::ffff:192.0.2.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(appendRecordLine(nil, tc.rec)); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestBuildRecordTimestampIsUTC(t *testing.T) {
	// 10:30:05 in UTC+2 is 08:30:05 UTC.
	fetched := time.Date(2024, 2, 29, 10, 30, 5, 999_000_000, time.FixedZone("x", 2*3600))
	got := string(buildRecord(fetched, nil))
	if got != "20240229083005\n" {
		t.Errorf("got %q, want the 14-digit UTC date and a newline", got)
	}
}
