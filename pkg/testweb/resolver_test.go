package testweb

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

func TestResolver(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 3, PagesPerHost: 3, Hostile: true, IPBase: netip.MustParseAddr("127.0.9.10")})
	r := srv.Resolver()
	ctx := context.Background()
	cases := []struct {
		host string
		want string // "" means not found
	}{
		{"www.site1.test", "127.0.9.10"},
		{"site2.test", "127.0.9.11"},
		{"WWW.Site3.TEST.", "127.0.9.12"},
		{"hostile.test", "127.0.9.13"},
		{"site1.test", ""}, // only the www. name exists for odd sites
		{"www.site4.test", ""},
		{"elsewhere.invalid", ""},
		{"", ""},
		{"127.0.0.1", "127.0.0.1"},
	}
	for _, c := range cases {
		addrs, err := r.LookupIPAddr(ctx, c.host)
		if c.want == "" {
			var dnsErr *net.DNSError
			if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
				t.Errorf("LookupIPAddr(%q) = %v, %v; want a not-found DNSError", c.host, addrs, err)
			}
			continue
		}
		if err != nil || len(addrs) != 1 || addrs[0].IP.String() != c.want {
			t.Errorf("LookupIPAddr(%q) = %v, %v; want %s", c.host, addrs, err, c.want)
		}
		hosts, err := r.LookupHost(ctx, c.host)
		if err != nil || len(hosts) != 1 || hosts[0] != c.want {
			t.Errorf("LookupHost(%q) = %v, %v; want %s", c.host, hosts, err, c.want)
		}
	}
	if _, err := r.LookupNetIP(ctx, "ip6", "www.site1.test"); err == nil {
		t.Error("LookupNetIP ip6 found an address for an IPv4-only host")
	}
	if _, err := r.LookupNetIP(ctx, "tcp", "www.site1.test"); err == nil {
		t.Error("LookupNetIP accepted network tcp")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.LookupIPAddr(cancelled, "www.site1.test"); err == nil {
		t.Error("lookup with a cancelled context succeeded")
	}
}

func TestResolverDialStaysOnLoopback(t *testing.T) {
	srv := startSite(t, Config{Seed: 1, Hosts: 1, PagesPerHost: 3})
	r := srv.Resolver()
	ctx := context.Background()
	for _, addr := range []string{"192.0.2.1:80", "[2001:db8::1]:80", "no-port", "elsewhere.invalid:80"} {
		if c, err := r.DialContext(ctx, "tcp", addr); err == nil {
			_ = c.Close()
			t.Errorf("DialContext(%q) succeeded", addr)
		}
	}
	c, err := r.DialContext(ctx, "tcp", srv.authority(0))
	if err != nil {
		t.Fatalf("DialContext(%s): %v", srv.authority(0), err)
	}
	_ = c.Close()
}
