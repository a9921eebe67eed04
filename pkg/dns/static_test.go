package dns

import (
	"context"
	"errors"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/trawler-crawl/trawler/pkg/fetch"
)

// The worker hands a *Resolver to pkg/fetch.
var _ fetch.Resolver = (*Resolver)(nil)

// fixedHosts maps names to addresses; unknown names fail as NXDOMAIN and
// "flaky.test" fails temporarily.
type fixedHosts map[string][]string

func (h fixedHosts) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if host == "flaky.test" {
		return nil, &net.DNSError{Err: "server misbehaving", Name: host, IsTemporary: true}
	}
	ips, ok := h[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, 0, len(ips))
	for _, ip := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(ip)})
	}
	return out, nil
}

func TestStatic(t *testing.T) {
	clock := newClock()
	hosts := fixedHosts{"site.test": {"2001:db8::2", "127.0.0.2"}, "none.test": {}}
	r, err := New(Options{Static: hosts, MinValidity: 10 * time.Minute, Now: clock.now,
		ResolvConf: "/nonexistent/resolv.conf"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx := context.Background()
	ans, fresh, err := r.Resolve(ctx, "Site.Test")
	if err != nil || !fresh {
		t.Fatalf("Resolve: fresh=%v err=%v", fresh, err)
	}
	if !slices.Equal(ans.Addrs, addrs("127.0.0.2", "2001:db8::2")) || ans.TTL != 10*time.Minute ||
		ans.Server != "" || !ans.Expires.Equal(clock.now().Add(10*time.Minute)) {
		t.Fatalf("answer = %+v; want A first, TTL = MinValidity, no server", ans)
	}
	wantRecord := "20240117090000\nsite.test.\t\t600\tIN\tA\t127.0.0.2\nsite.test.\t\t600\tIN\tAAAA\t2001:db8:0:0:0:0:0:2\n"
	if string(ans.Record) != wantRecord {
		t.Errorf("Record = %q, want %q", ans.Record, wantRecord)
	}
	if _, fresh, _ := r.Resolve(ctx, "site.test"); fresh {
		t.Error("second Resolve was not served from the cache")
	}
	for host, notFound := range map[string]bool{"missing.test": true, "none.test": true, "flaky.test": false} {
		_, fresh, err := r.Resolve(ctx, host)
		var le *LookupError
		if !errors.As(err, &le) || le.NotFound != notFound || !fresh {
			t.Errorf("%s: fresh=%v err=%v; want LookupError NotFound=%v", host, fresh, err, notFound)
		}
	}
}

func TestLiteralIP(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	r := newTestResolver(t, Options{}, srv)
	for host, want := range map[string]string{
		"192.0.2.1":     "192.0.2.1",
		"2001:db8::1":   "2001:db8::1",
		"[2001:db8::1]": "2001:db8::1",
	} {
		ans, fresh, err := r.Resolve(context.Background(), host)
		if err != nil || fresh || len(ans.Addrs) != 1 || ans.Addrs[0].String() != want || ans.Record != nil {
			t.Errorf("%s: ans=%+v fresh=%v err=%v; want %s, no lookup", host, ans, fresh, err, want)
		}
	}
	if n := srv.count("", "", ""); n != 0 {
		t.Errorf("server got %d queries for literal IPs", n)
	}
}

func TestLookupIPAddr(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	srv.set("host.test", zone{a: []string{"192.0.2.1"}, aaaa: []string{"2001:db8::1"}, ttl: 60})
	srv.set("fail.test", zone{rcode: 2})
	r := newTestResolver(t, Options{}, srv)
	ctx := context.Background()
	ipas, err := r.LookupIPAddr(ctx, "host.test")
	if err != nil || len(ipas) != 2 || !ipas[0].IP.Equal(net.ParseIP("192.0.2.1")) || !ipas[1].IP.Equal(net.ParseIP("2001:db8::1")) {
		t.Fatalf("LookupIPAddr = %v, %v", ipas, err)
	}
	if _, _, err := r.Resolve(ctx, "host.test"); err != nil || srv.count("udp", "A", "host.test") != 1 {
		t.Errorf("Resolve after LookupIPAddr did not use the cache (err %v)", err)
	}
	for host, notFound := range map[string]bool{"nx.test": true, "fail.test": false} {
		_, err := r.LookupIPAddr(ctx, host)
		var de *net.DNSError
		var le *LookupError
		if !errors.As(err, &de) || de.IsNotFound != notFound || de.IsTemporary == notFound || !errors.As(err, &le) {
			t.Errorf("%s: err = %#v; want *net.DNSError IsNotFound=%v wrapping *LookupError", host, err, notFound)
		}
	}
}

func TestMetrics(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	srv.set("host.test", zone{a: []string{"192.0.2.1"}, ttl: 60})
	srv.set("fail.test", zone{rcode: 2})
	reg := prometheus.NewRegistry()
	r := newTestResolver(t, Options{Registerer: reg, Now: newClock().now}, srv)
	ctx := context.Background()
	for _, h := range []string{"host.test", "host.test", "host.test", "nx.test", "fail.test"} {
		_, _, _ = r.Resolve(ctx, h)
	}
	want := map[string]float64{
		`trawler_dns_lookups_total{result="ok"}`:       1,
		`trawler_dns_lookups_total{result="notfound"}`: 1,
		`trawler_dns_lookups_total{result="error"}`:    1,
		`trawler_dns_cache_hits_total`:                 2,
		`trawler_dns_lookup_duration_seconds_count`:    3,
		`trawler_dns_queries_total{transport="udp"}`:   6,
	}
	got := gather(t, reg)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if _, err := New(Options{Registerer: reg, Static: fixedHosts{}}); err == nil {
		t.Error("registering the metrics twice did not fail")
	}
}

// gather flattens counters and histogram counts to "name{label="v"}" keys.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "{" + l.GetName() + `="` + l.GetValue() + `"}`
			}
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}
