package dns

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// fakeClock is an injectable clock safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newTestResolver returns a Resolver asking the given servers with short
// timeouts.
func newTestResolver(t *testing.T, o Options, servers ...*dnsServer) *Resolver {
	t.Helper()
	for _, s := range servers {
		o.Servers = append(o.Servers, s.addr.String())
	}
	if o.Timeout == 0 {
		o.Timeout = 300 * time.Millisecond
	}
	if o.Attempts == 0 {
		o.Attempts = 1
	}
	r, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, 0, len(ss))
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestResolveAnswers(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	srv.set("dual.test", zone{a: []string{"192.0.2.1", "192.0.2.2"}, aaaa: []string{"2001:db8::1"}, ttl: 300})
	srv.set("v4.test", zone{a: []string{"192.0.2.3"}, ttl: 60})
	srv.set("v6.test", zone{aaaa: []string{"2001:db8::6"}, ttl: 90})
	srv.set("target.test", zone{a: []string{"192.0.2.9"}, ttl: 500})
	srv.set("alias.test", zone{cname: "target.test.", inline: true, ttl: 40})
	srv.set("alias2.test", zone{cname: "target.test.", ttl: 700})
	srv.set("loop.test", zone{cname: "loop.test.", ttl: 700})
	srv.set("empty.test", zone{ttl: 60})
	srv.set("zero.test", zone{a: []string{"0.0.0.0"}, ttl: 60})
	srv.set("fail.test", zone{rcode: dnsmessage.RCodeServerFailure})
	srv.set("refused.test", zone{rcode: dnsmessage.RCodeRefused})
	srv.set("trunc.test", zone{a: []string{"192.0.2.7"}, aaaa: []string{"2001:db8::7"}, ttl: 120, mode: modeTruncate})
	srv.set("noisy.test", zone{a: []string{"192.0.2.8"}, ttl: 120, mode: modeGarbageFirst})
	srv.set("garbage.test", zone{a: []string{"192.0.2.8"}, ttl: 120, mode: modeGarbage})
	srv.set("silent.test", zone{mode: modeSilent})
	srv.set("broken.test", zone{a: []string{"192.0.2.8"}, ttl: 120, mode: modeMalformed})
	r := newTestResolver(t, Options{Now: newClock().now}, srv)

	tests := []struct {
		host     string
		want     []netip.Addr
		ttl      time.Duration
		notFound bool // when want is nil: permanent failure expected
		cached   bool // answered from the cache filled by an earlier case
	}{
		{host: "dual.test", want: addrs("192.0.2.1", "192.0.2.2", "2001:db8::1"), ttl: 300 * time.Second},
		{host: "DUAL.test.", want: addrs("192.0.2.1", "192.0.2.2", "2001:db8::1"), ttl: 300 * time.Second, cached: true},
		{host: "v4.test", want: addrs("192.0.2.3"), ttl: time.Minute},
		{host: "v6.test", want: addrs("2001:db8::6"), ttl: 90 * time.Second},
		{host: "alias.test", want: addrs("192.0.2.9"), ttl: 40 * time.Second},
		{host: "alias2.test", want: addrs("192.0.2.9"), ttl: 500 * time.Second},
		{host: "trunc.test", want: addrs("192.0.2.7", "2001:db8::7"), ttl: 2 * time.Minute},
		{host: "noisy.test", want: addrs("192.0.2.8"), ttl: 2 * time.Minute},
		{host: "nx.test", notFound: true},
		{host: "empty.test", notFound: true},
		{host: "zero.test", notFound: true},
		{host: "bad..name", notFound: true},
		{host: "fail.test"},
		{host: "refused.test"},
		{host: "garbage.test"},
		{host: "silent.test"},
		{host: "broken.test"},
		{host: "loop.test", notFound: true},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			ans, fresh, err := r.Resolve(context.Background(), tc.host)
			if tc.want == nil {
				var le *LookupError
				if !errors.As(err, &le) {
					t.Fatalf("err = %v (%T), want *LookupError", err, err)
				}
				if le.NotFound != tc.notFound || !fresh || ans != nil {
					t.Fatalf("NotFound=%v fresh=%v ans=%v err=%v; want NotFound=%v fresh=true nil answer",
						le.NotFound, fresh, ans, err, tc.notFound)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if fresh == tc.cached || !slices.Equal(ans.Addrs, tc.want) || ans.TTL != tc.ttl || ans.Server != "127.0.0.1" {
				t.Fatalf("got fresh=%v addrs=%v ttl=%v server=%q; want fresh=%v addrs=%v ttl=%v server 127.0.0.1",
					fresh, ans.Addrs, ans.TTL, ans.Server, !tc.cached, tc.want, tc.ttl)
			}
		})
	}
	if n := srv.count("tcp", "", "trunc.test"); n != 2 {
		t.Errorf("TCP queries for trunc.test = %d, want 2 (A and AAAA retried)", n)
	}
	if n := srv.count("", "A", "target.test"); n != 1 {
		t.Errorf("queries for the CNAME target = %d, want 1 (alias2 only)", n)
	}
}

func TestRecordGolden(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	srv.set("example.org", zone{a: []string{"93.184.216.34", "93.184.216.35"}, aaaa: []string{"2606:2800:220:1:248:1893:25c8:1946"}, ttl: 300})
	srv.set("www.example.com", zone{cname: "example.org.", inline: true, ttl: 3600})
	srv.set("a.b", zone{a: []string{"10.0.0.1"}, aaaa: []string{"::ffff:10.0.0.1", "2001:db8::1"}, ttl: 0})
	r := newTestResolver(t, Options{Now: newClock().now}, srv)
	var got []byte
	for _, host := range []string{"example.org", "www.example.com", "a.b"} {
		ans, _, err := r.Resolve(context.Background(), host)
		if err != nil {
			t.Fatalf("Resolve %s: %v", host, err)
		}
		got = append(got, ans.Record...)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "records.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("records differ from testdata/records.golden\ngot:\n%q\nwant:\n%q", got, want)
	}
}

func TestServerFailover(t *testing.T) {
	for _, m := range []struct {
		name string
		z    zone
	}{
		{"servfail", zone{rcode: dnsmessage.RCodeServerFailure}},
		{"silent", zone{mode: modeSilent}},
		{"malformed", zone{a: []string{"192.0.2.66"}, ttl: 5, mode: modeMalformed}},
		{"garbage", zone{mode: modeGarbage}},
	} {
		t.Run(m.name, func(t *testing.T) {
			bad := startServer(t, "127.0.0.1")
			good := startServer(t, "127.0.0.2")
			bad.set("host.test", m.z)
			good.set("host.test", zone{a: []string{"192.0.2.5"}, ttl: 30})
			r := newTestResolver(t, Options{Timeout: 150 * time.Millisecond}, bad, good)
			ans, fresh, err := r.Resolve(context.Background(), "host.test")
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if !fresh || ans.Server != "127.0.0.2" || !slices.Equal(ans.Addrs, addrs("192.0.2.5")) {
				t.Fatalf("fresh=%v server=%q addrs=%v; want the second server's answer", fresh, ans.Server, ans.Addrs)
			}
			if bad.count("udp", "A", "host.test") != 1 {
				t.Errorf("first server got %d A queries, want 1", bad.count("udp", "A", "host.test"))
			}
		})
	}
}

func TestAttempts(t *testing.T) {
	srv := startServer(t, "127.0.0.1")
	srv.set("silent.test", zone{mode: modeSilent})
	r := newTestResolver(t, Options{Timeout: 100 * time.Millisecond, Attempts: 3}, srv)
	_, _, err := r.Resolve(context.Background(), "silent.test")
	var le *LookupError
	if !errors.As(err, &le) || le.NotFound || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err = %v; want a temporary LookupError wrapping a timeout", err)
	}
	if n := srv.count("udp", "A", "silent.test"); n != 3 {
		t.Errorf("A queries = %d, want 3 attempts", n)
	}
}
