package fetch

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"
)

func TestCheckAddress(t *testing.T) {
	cases := []struct {
		addr    string
		refused bool
	}{
		{"8.8.8.8", false},
		{"93.184.216.34", false},
		{"2606:4700::1111", false},
		{"100.63.255.255", false},
		{"100.128.0.0", false},
		{"172.32.0.1", false},
		{"127.0.0.1", true},
		{"127.255.0.9", true},
		{"::1", true},
		{"10.1.2.3", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.168.0.1", true},
		{"fc00::1", true},
		{"fd12:3456::1", true},
		{"fd00:ec2::254", true},
		{"169.254.1.1", true},
		{"169.254.169.254", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"100.64.0.1", true},
		{"100.127.255.255", true},
		{"0.0.0.0", true},
		{"::", true},
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"ff02::1", true},
		{"255.255.255.255", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.1", true},
		{"::ffff:169.254.169.254", true},
		{"::ffff:8.8.8.8", false},
		{"::127.0.0.1", true},
		{"64:ff9b::a00:1", true},    // NAT64 of 10.0.0.1
		{"64:ff9b::808:808", false}, // NAT64 of 8.8.8.8
		{"2002:7f00:1::", true},     // 6to4 of 127.0.0.1
		{"2002:808:808::", false},   // 6to4 of 8.8.8.8
	}
	for _, tc := range cases {
		err := CheckAddress(netip.MustParseAddr(tc.addr))
		if got := err != nil; got != tc.refused {
			t.Errorf("CheckAddress(%s) = %v, want refused=%v", tc.addr, err, tc.refused)
		}
		if err != nil && !errors.Is(err, ErrAddressRefused) {
			t.Errorf("CheckAddress(%s) error %v does not wrap ErrAddressRefused", tc.addr, err)
		}
	}
	if err := CheckAddress(netip.Addr{}); err == nil {
		t.Error("zero Addr accepted")
	}
}

// TestDialControlRefuses exercises the connect-time check on its own: it is
// what stops a rebinding resolver, because it sees the address the socket
// actually connects to.
func TestDialControlRefuses(t *testing.T) {
	g := newGuard(false, nil)
	for _, addr := range []string{"127.0.0.1:80", "[::ffff:127.0.0.1]:443", "[::1]:80", "10.0.0.1:8080", "169.254.169.254:80", "garbage"} {
		if err := g.control("tcp", addr, nil); !errors.Is(err, ErrAddressRefused) {
			t.Errorf("control(%s) = %v, want refusal", addr, err)
		}
	}
	for _, addr := range []string{"8.8.8.8:80", "[2606:4700::1111]:443"} {
		if err := g.control("tcp", addr, nil); err != nil {
			t.Errorf("control(%s) = %v, want nil", addr, err)
		}
	}
	if err := newGuard(true, nil).control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("AllowPrivate guard refused loopback: %v", err)
	}
	// An allowed range opens that range only: one test site on loopback,
	// the rest of loopback and the metadata address still refused.
	one := newGuard(false, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})
	for addr, ok := range map[string]bool{"127.0.0.1:80": true, "[::ffff:127.0.0.1]:80": true, "127.0.0.2:80": false,
		"169.254.169.254:80": false, "10.0.0.1:80": false, "8.8.8.8:53": true} {
		if err := one.control("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("allow 127.0.0.1/32: control(%s) = %v", addr, err)
		}
	}
}

func TestGuardRefusesFetches(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\n\r\nsecret"))
	f := newFetcher(t, Config{}) // AllowPrivate false
	p := srv.port()
	for _, url := range []string{
		"http://127.0.0.1:" + p + "/",
		"http://[::ffff:127.0.0.1]:" + p + "/",
		"http://[::1]:" + p + "/",
		"http://site.test:" + p + "/",      // resolves to 127.0.0.1
		"http://public.example:" + p + "/", // public-looking name, private IP
		"http://mixed.example:" + p + "/",
		"http://mapped.example:" + p + "/",
		"http://metadata.google/computeMetadata/v1/",
	} {
		_, err := f.Fetch(context.Background(), Request{URL: url})
		fe := fetchErr(t, err, StatusConnectFailed, false)
		if !errors.Is(fe, ErrAddressRefused) {
			t.Errorf("%s: %v does not wrap ErrAddressRefused", url, fe)
		}
	}
	if n := srv.accepted.Load(); n != 0 {
		t.Fatalf("guard let %d connections through", n)
	}
}

// TestDialerUsesControl calls dial directly, skipping the resolution-time
// check, to prove the connect-time hook is wired into the dialer.
func TestDialerUsesControl(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\n\r\n"))
	f := newFetcher(t, Config{})
	tg, err := parseTarget("http://rebound.example:" + srv.port() + "/")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.dial(context.Background(), tg, netip.MustParseAddr("127.0.0.1"), time.Now().Add(5*time.Second))
	fe := fetchErr(t, err, StatusConnectFailed, false)
	if !errors.Is(fe, ErrAddressRefused) {
		t.Fatalf("%v does not wrap ErrAddressRefused", fe)
	}
	if n := srv.accepted.Load(); n != 0 {
		t.Fatalf("control hook let %d connections through", n)
	}
}

// RefusalReason names each refused address and its range, from a real
// fetch's error or the dial hook's, and nothing for other failures.
func TestRefusalReason(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\n\r\nsecret"))
	f := newFetcher(t, Config{}) // AllowPrivate false
	p := srv.port()
	fetched := func(url string) error {
		_, err := f.Fetch(context.Background(), Request{URL: url})
		return err
	}
	g := newGuard(false, nil)
	tests := []struct {
		name string
		err  error
		want string // "" for no refusal
	}{
		{"loopback literal", fetched("http://127.0.0.1:" + p + "/"), "127.0.0.1 is loopback"},
		{"IPv6 loopback", fetched("http://[::1]:" + p + "/"), "::1 is loopback"},
		{"name on loopback", fetched("http://site.test:" + p + "/"), "127.0.0.1 is loopback"},
		{"dial hook", g.control("tcp", "10.0.0.1:80", nil), "10.0.0.1 is private"},
		{"mapped address", CheckAddress(netip.MustParseAddr("::ffff:169.254.169.254")), "::ffff:169.254.169.254 carries 169.254.169.254, which is cloud metadata"},
		{"unparseable dial address", g.control("tcp", "garbage", nil), "dial tcp garbage: unparseable address: address refused by guard"},
		{"not the guard", errors.New("connection refused"), ""},
		{"no error", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := RefusalReason(tt.err)
			if ok != (tt.want != "") || got != tt.want {
				t.Errorf("RefusalReason(%v) = %q, %v; want %q", tt.err, got, ok, tt.want)
			}
		})
	}
}
