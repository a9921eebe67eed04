package dns

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestParseResolvConf(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		want     []string
		problems []string // substrings, one per reported line, in order
	}{
		{"typical", "# generated\nsearch example.org\nnameserver 192.0.2.53\nnameserver 2001:db8::53\noptions ndots:2\n",
			[]string{"192.0.2.53:53", "[2001:db8::53]:53"}, nil},
		{"comments and spacing", "  nameserver\t10.0.0.1   # primary\n;nameserver 10.0.0.9\nnameserver 10.0.0.2;x\n",
			[]string{"10.0.0.1:53", "10.0.0.2:53"}, nil},
		{"zone", "nameserver fe80::1%eth0\n", []string{"[fe80::1%eth0]:53"}, nil},
		{"bad lines", "nameserver\nnameserver dns.example.org\nnameserver 10.0.0.1 10.0.0.2\nnameserver 300.1.1.1\nnameserver 10.0.0.3\n",
			[]string{"10.0.0.3:53"},
			[]string{"resolv.conf:1: nameserver line needs exactly one address, got 0",
				`resolv.conf:2: nameserver "dns.example.org" is not an IP address`,
				"resolv.conf:3: nameserver line needs exactly one address, got 2",
				`resolv.conf:4: nameserver "300.1.1.1" is not an IP address`}},
		{"more than three", "nameserver 10.0.0.1\nnameserver 10.0.0.2\nnameserver 10.0.0.3\nnameserver 10.0.0.4\n",
			[]string{"10.0.0.1:53", "10.0.0.2:53", "10.0.0.3:53"},
			[]string{"resolv.conf:4: nameserver 10.0.0.4 ignored: only the first 3 are used"}},
		{"empty", "", nil, nil},
		{"binary junk", "\x00\xff\xfe nameserver\x00\n", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			servers, problems, err := parseResolvConf("resolv.conf", strings.NewReader(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range servers {
				got = append(got, s.String())
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("servers = %v, want %v", got, tc.want)
			}
			if len(problems) != len(tc.problems) {
				t.Fatalf("problems = %v, want %d", problems, len(tc.problems))
			}
			for i, p := range problems {
				if !strings.Contains(p.Error(), tc.problems[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, p, tc.problems[i])
				}
			}
		})
	}
}

func TestParseResolvConfReadError(t *testing.T) {
	boom := errors.New("boom")
	_, _, err := parseResolvConf("resolv.conf", iotest.ErrReader(boom))
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "read resolv.conf") {
		t.Fatalf("err = %v, want the read error with the file name", err)
	}
}

func TestNewFromResolvConf(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.conf")
	if err := os.WriteFile(good, []byte("nameserver bogus\nnameserver 127.0.0.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := New(Options{ResolvConf: good})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if want := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:53")}; !slices.Equal(r.servers, want) {
		t.Errorf("servers = %v, want %v", r.servers, want)
	}
}
