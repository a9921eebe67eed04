package dns

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/trawler-crawl/trawler/internal/testwait"
	"github.com/trawler-crawl/trawler/pkg/geolocate/geotest"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/scope"
)

// TestLookupIPAddrLeavesTheRecord checks that a lookup made through
// LookupIPAddr (the scope's GeoIP rule, the fetcher) is recorded by the
// first Resolve after it, once, without asking the server again.
func TestLookupIPAddrLeavesTheRecord(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// first makes the lookup; it returns once the answer is cached
		// and reports what Resolve calls it made got as fresh.
		first     func(t *testing.T, r *Resolver, srv *dnsServer) (resolveFresh bool)
		wantFresh bool // the next Resolve's fresh
	}{
		{"cached by LookupIPAddr", func(t *testing.T, r *Resolver, _ *dnsServer) bool {
			if _, err := r.LookupIPAddr(ctx, "host.test"); err != nil {
				t.Fatal(err)
			}
			return false
		}, true},
		{"cached by Resolve", func(t *testing.T, r *Resolver, _ *dnsServer) bool {
			_, fresh, err := r.Resolve(ctx, "host.test")
			if err != nil {
				t.Fatal(err)
			}
			return fresh
		}, false},
		{"Resolve waits for LookupIPAddr's lookup", func(t *testing.T, r *Resolver, srv *dnsServer) bool {
			srv.set("host.test", zone{a: []string{"192.0.2.1"}, ttl: 300, mode: modeHold})
			lookupErr := make(chan error, 1)
			go func() { _, err := r.LookupIPAddr(ctx, "host.test"); lookupErr <- err }()
			testwait.Until(t, 5*time.Second, "LookupIPAddr's query", func() bool { return srv.count("udp", "A", "host.test") == 1 })
			type result struct {
				fresh bool
				err   error
			}
			waiter := make(chan result, 1)
			go func() { _, fresh, err := r.Resolve(ctx, "host.test"); waiter <- result{fresh, err} }()
			testwait.Until(t, 5*time.Second, "Resolve to join the lookup", func() bool {
				r.mu.Lock()
				defer r.mu.Unlock()
				f := r.flights["host.test"]
				return f != nil && f.waiters == 1
			})
			close(srv.release)
			if err := <-lookupErr; err != nil {
				t.Fatal(err)
			}
			got := <-waiter
			if got.err != nil {
				t.Fatal(got.err)
			}
			return got.fresh
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, "127.0.0.1")
			srv.set("host.test", zone{a: []string{"192.0.2.1"}, ttl: 300})
			r := newTestResolver(t, Options{Now: newClock().now, Timeout: 10 * time.Second}, srv)
			earlier := tc.first(t, r, srv)
			ans, fresh, err := r.Resolve(ctx, "host.test")
			if err != nil {
				t.Fatal(err)
			}
			if earlier == fresh || fresh != tc.wantFresh {
				t.Errorf("fresh: first %v, then %v; want exactly one Resolve to get it (then %v)", earlier, fresh, tc.wantFresh)
			}
			if _, again, _ := r.Resolve(ctx, "host.test"); again {
				t.Error("a third Resolve got fresh=true: the lookup would be recorded twice")
			}
			if n := srv.count("udp", "A", "host.test"); n != 1 {
				t.Errorf("A queries = %d, want 1 (the cached answer is the one recorded)", n)
			}
			if ans.Server != "127.0.0.1" || len(ans.Record) == 0 {
				t.Errorf("answer: Server %q, Record %q; want the server's address and the record", ans.Server, ans.Record)
			}
		})
	}
}

// TestAnswerServer checks that Answer.Server, the dns: record's
// WARC-IP-Address, is the name server that answered: not the first
// configured one when that one failed.
func TestAnswerServer(t *testing.T) {
	failing := startServer(t, "127.0.0.2")
	failing.set("host.test", zone{rcode: dnsmessage.RCodeServerFailure})
	good := startServer(t, "127.0.0.3")
	good.set("host.test", zone{a: []string{"192.0.2.1"}, ttl: 300})
	tests := []struct {
		name    string
		servers []*dnsServer
		want    string
	}{
		{"the only server", []*dnsServer{good}, "127.0.0.3"},
		{"the second, after the first failed", []*dnsServer{failing, good}, "127.0.0.3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestResolver(t, Options{}, tc.servers...)
			ans, _, err := r.Resolve(context.Background(), "host.test")
			if err != nil {
				t.Fatal(err)
			}
			if ans.Server != tc.want {
				t.Errorf("Server = %q, want %q", ans.Server, tc.want)
			}
		})
	}
}

func TestServerIP(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.53:53":        "127.0.0.53",
		"[2001:db8::53]:53":    "2001:db8::53",
		"[fe80::1%eth0]:53":    "fe80::1",
		"[fe80::1%eth0]:10053": "fe80::1",
	} {
		if got := serverIP(netip.MustParseAddrPort(in)); got != want {
			t.Errorf("serverIP(%s) = %q, want %q", in, got, want)
		}
	}
}

// netipLookup is how the worker hands the Resolver to the scope engine
// (services/worker's netipResolver): through LookupIPAddr.
type netipLookup struct{ r *Resolver }

func (n netipLookup) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	ipas, err := n.r.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(ipas))
	for _, a := range ipas {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			out = append(out, ip.Unmap())
		}
	}
	return out, nil
}

// TestGeoRuleLeavesTheRecord runs the domain crawl's GeoIP rule (a real
// scope engine and GeoIP database) over a Resolver asking a real name
// server: the rule's lookup fills the cache, and the first Resolve before
// the host's first fetch must still get fresh=true with the record and the
// server's address, without a second query; later ones must not.
func TestGeoRuleLeavesTheRecord(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	srv.set("uk.test", zone{a: []string{"192.0.2.7"}, ttl: 3600})
	r := newTestResolver(t, Options{Now: newClock().now}, srv)
	dir := t.TempDir()
	geotest.WriteDB(t, dir, "GeoLite2-City.mmdb", map[string]string{"192.0.2.0/24": "GB"})
	p := profile.Default()
	doc := "scope:\n  rules:\n  - rule: RejectDecideRule\n  - {rule: ExternalGeoLocationDecideRule, countryCodes: [GB], database: GeoLite2-City.mmdb}\n"
	if err := profile.Decode(strings.NewReader(doc), &p); err != nil {
		t.Fatal(err)
	}
	e, err := scope.New(p.Scope, scope.Options{BaseDir: dir, Resolver: netipLookup{r}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	c, err := scope.NewCandidate("http://uk.test/page")
	if err != nil {
		t.Fatal(err)
	}
	c.HopPath = "L"
	if d := e.Decide(context.Background(), c); !d.Accepted() || len(d.Annotations) != 1 || d.Annotations[0] != "geo:GB" {
		t.Fatalf("decision %s %q, want ACCEPT by the GeoIP rule with geo:GB", d, d.Annotations)
	}
	if n := srv.count("udp", "A", "uk.test"); n != 1 {
		t.Fatalf("A queries after scoping = %d, want 1", n)
	}
	ans, fresh, err := r.Resolve(context.Background(), "uk.test")
	if err != nil || !fresh {
		t.Fatalf("first Resolve after scoping: fresh=%v err=%v; want fresh (the lookup is not recorded yet)", fresh, err)
	}
	if ans.Server != "127.0.0.1" || !strings.Contains(string(ans.Record), "uk.test.\t\t3600\tIN\tA\t192.0.2.7\n") {
		t.Errorf("answer: Server %q, Record %q", ans.Server, ans.Record)
	}
	if _, fresh, _ := r.Resolve(context.Background(), "uk.test"); fresh {
		t.Error("second Resolve got fresh=true: the lookup would be recorded twice")
	}
	if n := srv.count("udp", "A", "uk.test"); n != 1 {
		t.Errorf("A queries = %d, want 1: the scope's lookup is the one recorded", n)
	}
}

// A lookup whose dns: capture could not be written is handed back: the
// next Resolve gets it as fresh again (no second query), and only once.
func TestUnrecordedHandsTheLookupBack(t *testing.T) {
	ctx := context.Background()
	srv := startServer(t, "127.0.0.1")
	srv.set("host.test", zone{a: []string{"192.0.2.1"}, ttl: 300})
	r := newTestResolver(t, Options{Now: newClock().now, Timeout: 10 * time.Second}, srv)
	var got []bool
	for i := range 4 {
		_, fresh, err := r.Resolve(ctx, "host.test")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fresh)
		if i == 1 {
			r.Unrecorded("HOST.test.") // as the worker names it, in any case
		}
	}
	if want := []bool{true, false, true, false}; !slices.Equal(got, want) {
		t.Errorf("fresh over four Resolves around Unrecorded: %v, want %v", got, want)
	}
	if n := srv.count("udp", "A", "host.test"); n != 1 {
		t.Errorf("A queries = %d, want 1", n)
	}
	r.Unrecorded("never.test") // nothing cached: nothing happens
}
