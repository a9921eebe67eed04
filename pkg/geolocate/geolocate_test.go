package geolocate

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/pkg/geolocate/geotest"
	"github.com/trawler-crawl/trawler/pkg/testweb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openDB(t *testing.T, nets map[string]string) *DB {
	t.Helper()
	db, err := Open(geotest.WriteDB(t, t.TempDir(), "city.mmdb", nets))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestDBCountry(t *testing.T) {
	db := openDB(t, map[string]string{"81.2.69.0/24": "GB", "2001:db8::/32": "FR", "127.0.0.2/32": "GB"})
	tests := []struct{ ip, want string }{
		{"81.2.69.160", "GB"},
		{"::ffff:81.2.69.1", "GB"}, // IPv4-mapped
		{"2001:db8::1", "FR"},
		{"127.0.0.2", "GB"},
		{"8.8.8.8", ""},
	}
	for _, tc := range tests {
		got, err := db.Country(netip.MustParseAddr(tc.ip))
		if err != nil || got != tc.want {
			t.Errorf("Country(%s) = %q, %v; want %q", tc.ip, got, err, tc.want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "x.mmdb")
	if err := os.WriteFile(notDB, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.mmdb"), notDB} {
		if _, err := Open(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Open(%s) = %v, want an error naming the file", path, err)
		}
	}
}

// countingResolver counts lookups that reach the synthetic web's resolver.
type countingResolver struct {
	Resolver
	n atomic.Int64
}

func (r *countingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.n.Add(1)
	return r.Resolver.LookupNetIP(ctx, network, host)
}

func startWeb(t *testing.T) *testweb.Server {
	t.Helper()
	site, err := testweb.Generate(testweb.Config{Seed: 7, Hosts: 3, PagesPerHost: 5})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := site.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func TestLocatorWithSyntheticWeb(t *testing.T) {
	srv := startWeb(t)
	hosts := srv.HostNames()
	db := openDB(t, map[string]string{"127.0.0.2/32": "GB", "127.0.0.3/32": "FR"})
	res := &countingResolver{Resolver: srv.Resolver()}
	now := time.Unix(1_700_000_000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	loc := NewLocator(db, res, Options{TTL: time.Hour, FailureTTL: time.Minute, Now: clock})
	ctx := context.Background()

	for i, want := range []string{"GB", "FR", ""} {
		got, err := loc.HostCountry(ctx, strings.ToUpper(hosts[i])+".")
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", hosts[i], got, err, want)
		}
	}
	if _, err := loc.HostCountry(ctx, "nowhere.invalid"); err == nil {
		t.Fatal("an unknown host located")
	}
	if got, err := loc.HostCountry(ctx, "127.0.0.3"); err != nil || got != "FR" {
		t.Fatalf("IP literal: %q, %v", got, err)
	}
	before := res.n.Load()
	for range 3 {
		_, _ = loc.HostCountry(ctx, hosts[0])
		_, _ = loc.HostCountry(ctx, "nowhere.invalid")
	}
	if res.n.Load() != before {
		t.Fatalf("cached hosts were resolved again (%d lookups)", res.n.Load()-before)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute) // failures expire, successes not yet
	mu.Unlock()
	_, _ = loc.HostCountry(ctx, hosts[0])
	_, _ = loc.HostCountry(ctx, "nowhere.invalid")
	if got := res.n.Load() - before; got != 1 {
		t.Fatalf("after the failure TTL: %d lookups, want 1 (the failed host)", got)
	}
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	_, _ = loc.HostCountry(ctx, hosts[0])
	if got := res.n.Load() - before; got != 2 {
		t.Fatalf("after the TTL: %d lookups, want 2", got)
	}
}

func TestLocatorCancelledNotCached(t *testing.T) {
	srv := startWeb(t)
	res := &countingResolver{Resolver: srv.Resolver()}
	loc := NewLocator(openDB(t, map[string]string{"127.0.0.2/32": "GB"}), res, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	host := srv.HostNames()[0]
	if _, err := loc.HostCountry(ctx, host); err == nil {
		t.Fatal("lookup with a cancelled context succeeded")
	}
	if got, err := loc.HostCountry(context.Background(), host); err != nil || got != "GB" {
		t.Fatalf("after a cancelled lookup: %q, %v; the cancellation was cached", got, err)
	}
	if _, err := loc.HostCountry(context.Background(), ""); err == nil {
		t.Fatal("empty host accepted")
	}
}

func TestLocatorCacheBounded(t *testing.T) {
	res := &countingResolver{Resolver: startWeb(t).Resolver()}
	loc := NewLocator(openDB(t, map[string]string{"127.0.0.0/8": "GB"}), res, Options{CacheSize: 10})
	ctx := context.Background()
	for i := range 100 {
		ip := netip.AddrFrom4([4]byte{127, 0, 1, byte(i)}).String()
		if got, err := loc.HostCountry(ctx, ip); err != nil || got != "GB" {
			t.Fatalf("%s: %q, %v", ip, got, err)
		}
	}
	loc.mu.Lock()
	n := len(loc.cur) + len(loc.old)
	loc.mu.Unlock()
	if n > 12 {
		t.Fatalf("cache holds %d hosts, bound is about 10", n)
	}
	var dnsErr interface{ Timeout() bool }
	if _, err := loc.HostCountry(ctx, "nowhere.invalid"); !errors.As(err, &dnsErr) {
		t.Fatalf("resolver error not wrapped: %v", err)
	}
}
