package testweb

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
)

func TestGenerateRejectsBadConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative hosts", Config{Hosts: -1}, "hosts: -1 out of range"},
		{"too many hosts", Config{Hosts: MaxHosts + 1}, "hosts: 1001 out of range"},
		{"negative pages", Config{PagesPerHost: -5}, "pagesPerHost: -5 out of range"},
		{"too many pages", Config{PagesPerHost: MaxPagesPerHost + 1}, "pagesPerHost"},
		{"negative large file", Config{LargeFileBytes: -1}, "largeFileBytes: -1 is negative"},
		{"bad port", Config{Port: 70000}, "port: 70000 out of range"},
		{"negative volatile share", Config{VolatileOneIn: -1}, "volatileOneIn -1"},
		{"negative query variants", Config{QueryVariantOneIn: -2}, "queryVariantOneIn -2"},
		{"not loopback", Config{IPBase: netip.MustParseAddr("10.0.0.1")}, "IPBase: 10.0.0.1 is not an IPv4 address in 127.0.0.0/8"},
		{"ipv6", Config{IPBase: netip.MustParseAddr("::1")}, "IPBase: ::1 is not"},
		{"network address", Config{IPBase: netip.MustParseAddr("127.0.0.0")}, "network address"},
		{"runs past loopback", Config{Hosts: 10, IPBase: netip.MustParseAddr("127.255.255.250")}, "runs past 127.255.255.254"},
		{"several at once", Config{Hosts: -1, PagesPerHost: -1}, "pagesPerHost: -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Generate(c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Generate error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestGenerateDefaults(t *testing.T) {
	site, err := Generate(Config{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := site.Config()
	if cfg.Hosts != DefaultHosts || cfg.PagesPerHost != DefaultPagesPerHost || cfg.LargeFileBytes != DefaultLargeFileBytes ||
		cfg.VolatileOneIn != 5 || cfg.QueryVariantOneIn != 12 ||
		cfg.IPBase != netip.MustParseAddr("127.0.0.2") || cfg.Logger == nil {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	names := []string{site.HostName(0), site.HostName(1), site.HostName(2)}
	if fmt.Sprint(names) != "[www.site1.test site2.test www.site3.test]" {
		t.Errorf("host names %v", names)
	}
}

func TestTinySites(t *testing.T) {
	for _, pages := range []int{1, 2, 19, 20} {
		t.Run(fmt.Sprint(pages), func(t *testing.T) {
			srv := startSite(t, Config{Seed: int64(pages), Hosts: 1, PagesPerHost: pages, Trap: true, LargeFileBytes: 10})
			o := ReachOptions{FollowSitemaps: true, MaxHops: 0}
			if d := diff(srv.Reachable(o), crawl(t, srv, o).urls()); d != "" {
				t.Fatalf("Reachable and crawl differ:\n%s", d)
			}
		})
	}
}

func TestFixedPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.7.3:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	site, err := Generate(Config{Hosts: 3, PagesPerHost: 3, IPBase: netip.MustParseAddr("127.0.7.1"), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	if srv, err := site.Start(context.Background()); err == nil {
		_ = srv.Close()
		t.Fatalf("Start on port %d, taken on 127.0.7.3, succeeded", port)
	} else if !strings.Contains(err.Error(), "127.0.7.3") {
		t.Errorf("error %v does not name the busy address", err)
	}
	// The two free IPs must have been released: a plain listen succeeds.
	for _, ip := range []string{"127.0.7.1", "127.0.7.2"} {
		l, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
		if err != nil {
			t.Errorf("%s:%d still bound after the failed Start: %v", ip, port, err)
			continue
		}
		_ = l.Close()
	}
}

func TestSeparatePortsFallback(t *testing.T) {
	site, err := Generate(Config{Seed: 8, Hosts: 3, PagesPerHost: 30, IPBase: netip.MustParseAddr("127.0.8.1"), LargeFileBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.startWith(context.Background(), 0) // no shared-port attempts: straight to the fallback
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ports := map[uint16]bool{}
	for _, vh := range srv.vhosts {
		ports[vh.addr.Port()] = true
	}
	if len(ports) != 3 {
		t.Errorf("fallback gave ports %v, want one per host", ports)
	}
	if d := diff(srv.Reachable(ReachOptions{}), crawl(t, srv, ReachOptions{}).urls()); d != "" {
		t.Fatalf("Reachable and crawl differ with separate ports:\n%s", d)
	}
}
