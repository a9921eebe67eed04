package robots

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/internal/testlog"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	testPrefix = "robots:test:"
	siteRobots = "User-agent: *\nDisallow: /private\nCrawl-delay: 4\nSitemap: https://example.com/s.xml\n"
)

func newCache(t *testing.T, rdb redis.UniversalClient, o CacheOptions) *Cache {
	t.Helper()
	c, err := NewCache(rdb, testPrefix, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustGet(t *testing.T, c *Cache, origin string) (*Rules, bool) {
	t.Helper()
	r, ok, err := c.Get(context.Background(), origin)
	if err != nil {
		t.Fatalf("Get(%s): %v", origin, err)
	}
	return r, ok
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func registeredSeries(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "trawler_robots_cache_") {
			n += len(mf.GetMetric())
		}
	}
	return n
}

func TestCacheSharedThroughRedis(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	reg := prometheus.NewRegistry()
	writer := newCache(t, rdb, CacheOptions{Validity: time.Hour})
	reader := newCache(t, rdb, CacheOptions{Validity: time.Hour, Registerer: reg})
	const origin = "https://example.com"

	if _, ok := mustGet(t, reader, origin); ok {
		t.Fatal("hit before any Put")
	}
	put, err := writer.Put(ctx, origin, 200, []byte(siteRobots), time.Now().Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if put.Allowed(ourUA, "/private") {
		t.Error("Put returned rules that allow /private")
	}
	for i := range 2 { // first from Redis, then from the local LRU
		r, ok := mustGet(t, reader, origin)
		if !ok {
			t.Fatalf("get %d: miss after Put", i)
		}
		if r.Allowed(ourUA, "/private") || !r.Allowed(ourUA, "/public") {
			t.Errorf("get %d: rules differ from the stored file", i)
		}
		if d, _ := r.CrawlDelay(ourUA); d != 4*time.Second {
			t.Errorf("get %d: crawl-delay %v", i, d)
		}
		if s := r.Sitemaps(); len(s) != 1 {
			t.Errorf("get %d: sitemaps %q", i, s)
		}
	}
	if got := counterValue(t, reader.metrics.hits.WithLabelValues(tierRedis)); got != 1 {
		t.Errorf("redis hits = %v, want 1", got)
	}
	if got := counterValue(t, reader.metrics.hits.WithLabelValues(tierLocal)); got != 1 {
		t.Errorf("local hits = %v, want 1", got)
	}
	if got := counterValue(t, reader.metrics.misses); got != 1 {
		t.Errorf("misses = %v, want 1", got)
	}
	if n := registeredSeries(t, reg); n != 3 {
		t.Errorf("registered series = %d, want 3 (two hit tiers, misses)", n)
	}

	// The key expires validity after the fetch, not after the Put.
	ttl := rdb.PTTL(ctx, testPrefix+origin).Val()
	if ttl <= 58*time.Minute || ttl > 59*time.Minute {
		t.Errorf("key TTL %v, want about 59m", ttl)
	}
}

func TestCacheExpiry(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	const validity = 300 * time.Millisecond
	a := newCache(t, rdb, CacheOptions{Validity: validity})
	b := newCache(t, rdb, CacheOptions{Validity: validity})
	const origin = "http://expiring.example"
	if _, err := a.Put(context.Background(), origin, 200, []byte(siteRobots), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := mustGet(t, a, origin); !ok {
		t.Fatal("miss straight after Put")
	}
	// a answers from its LRU, b from Redis; both must stop answering, and
	// Redis must drop the key by itself.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, okA := mustGet(t, a, origin)
		_, okB := mustGet(t, b, origin)
		exists := rdb.Exists(context.Background(), testPrefix+origin).Val()
		if !okA && !okB && exists == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still cached after %v: local %v, redis %v, key %d", 5*time.Second, okA, okB, exists)
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not a wait for the condition
	}
}

func TestCachePutRefusals(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	c := newCache(t, rdb, CacheOptions{Validity: time.Minute})

	for _, status := range []int{503, 500, 0, -2} {
		if r, err := c.Put(ctx, "http://failed.example", status, nil, time.Time{}); err == nil || r != nil {
			t.Errorf("Put(status %d) = %v, %v; want an error", status, r, err)
		} else if !strings.Contains(err.Error(), "failed.example") {
			t.Errorf("error %q does not name the origin", err)
		}
	}
	// A fetch older than the validity is usable once but not cached.
	r, err := c.Put(ctx, "http://stale.example", 200, []byte(siteRobots), time.Now().Add(-2*time.Minute))
	if err != nil || r == nil || r.Allowed(ourUA, "/private") {
		t.Fatalf("stale Put = %v, %v", r, err)
	}
	if _, ok := mustGet(t, c, "http://stale.example"); ok {
		t.Error("a stale fetch was cached")
	}
	if n := rdb.Exists(ctx, testPrefix+"http://failed.example", testPrefix+"http://stale.example").Val(); n != 0 {
		t.Errorf("%d keys written for refused Puts", n)
	}
}

func TestCacheBodyCapped(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	c := newCache(t, rdb, CacheOptions{Validity: time.Minute})
	body := bytes.Repeat([]byte("User-agent: *\nDisallow: /x\n"), 2*MaxBodyBytes/27)
	if _, err := c.Put(ctx, "http://big.example", 200, body, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if n := rdb.HStrLen(ctx, testPrefix+"http://big.example", fieldBody).Val(); n != MaxBodyBytes {
		t.Errorf("stored body %d bytes, want %d", n, MaxBodyBytes)
	}
}

func TestCacheLRUBound(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	c := newCache(t, rdb, CacheOptions{Validity: time.Minute, MaxLocal: 3})
	origins := []string{"http://a.example", "http://b.example", "http://c.example", "http://d.example", "http://e.example"}
	for _, o := range origins[:3] {
		if _, err := c.Put(ctx, o, 200, []byte(siteRobots), time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	mustGet(t, c, origins[0]) // a becomes the most recently used
	for _, o := range origins[3:] {
		if _, err := c.Put(ctx, o, 404, nil, time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.local.Len(); n != 3 {
		t.Fatalf("local entries = %d, want 3", n)
	}
	now := time.Now()
	for o, want := range map[string]bool{origins[0]: true, origins[1]: false, origins[2]: false, origins[3]: true, origins[4]: true} {
		if _, ok := c.local.Get(o, now); ok != want {
			t.Errorf("local has %s = %v, want %v", o, ok, want)
		}
	}
	// An evicted origin is still answered from Redis.
	if r, ok := mustGet(t, c, origins[1]); !ok || r.Allowed(ourUA, "/private") {
		t.Errorf("evicted origin: ok %v", ok)
	}
	if got := counterValue(t, c.metrics.hits.WithLabelValues(tierRedis)); got != 1 {
		t.Errorf("redis hits = %v, want 1", got)
	}
}

func TestCacheUnreadableEntries(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	log, buf := testlog.New(slog.LevelDebug)
	c := newCache(t, rdb, CacheOptions{Validity: time.Minute, Logger: log})
	now := time.Now().UnixMilli()
	entries := map[string][]any{
		"http://status.example":  {fieldStatus, "abc", fieldBody, "", fieldFetched, now},
		"http://failed.example":  {fieldStatus, "503", fieldBody, "", fieldFetched, now},
		"http://time.example":    {fieldStatus, "200", fieldBody, "", fieldFetched, "yesterday"},
		"http://partial.example": {fieldStatus, "200"},
	}
	for origin, fields := range entries {
		rdb.HSet(ctx, testPrefix+origin, fields...)
		if r, ok := mustGet(t, c, origin); ok || r != nil {
			t.Errorf("%s: unreadable entry answered", origin)
		}
		if !strings.Contains(buf.String(), origin) {
			t.Errorf("%s: not logged; log:\n%s", origin, buf)
		}
	}
	// An entry written by a worker whose clock says it expired is a miss.
	rdb.HSet(ctx, testPrefix+"http://old.example", fieldStatus, "200", fieldBody, "", fieldFetched, now-int64(2*time.Minute/time.Millisecond))
	if _, ok := mustGet(t, c, "http://old.example"); ok {
		t.Error("expired entry answered")
	}
	// Put repairs a broken entry.
	if _, err := c.Put(ctx, "http://status.example", 200, []byte(siteRobots), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, ok := mustGet(t, newCache(t, rdb, CacheOptions{Validity: time.Minute}), "http://status.example"); !ok {
		t.Error("entry not repaired by Put")
	}
}

func TestCacheForever(t *testing.T) {
	ctx := context.Background()
	rdb := embeddedtest.Redis(t)
	c := newCache(t, rdb, CacheOptions{})
	if _, err := c.Put(ctx, "http://forever.example", 200, []byte(siteRobots), time.Now().Add(-1000*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, testPrefix+"http://forever.example").Val(); ttl != -1 {
		t.Errorf("TTL %v, want none", ttl)
	}
	if _, ok := mustGet(t, newCache(t, rdb, CacheOptions{}), "http://forever.example"); !ok {
		t.Error("zero validity entry not answered")
	}
}

func TestCacheRedisDown(t *testing.T) {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: embeddedtest.Redis(t).Options().Addr, MaxRetries: -1})
	c := newCache(t, rdb, CacheOptions{Validity: time.Minute})
	if err := rdb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := c.Get(ctx, "http://down.example"); err == nil || ok || !strings.Contains(err.Error(), "down.example") {
		t.Errorf("Get = %v, %v; want an error naming the origin", ok, err)
	}
	r, err := c.Put(ctx, "http://down.example", 200, []byte(siteRobots), time.Time{})
	if err == nil || r == nil || r.Allowed(ourUA, "/private") {
		t.Errorf("Put = %v, %v; want rules and an error", r, err)
	}
}

func TestNewCacheBadOptions(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = rdb.Close() })
	reg := prometheus.NewRegistry()
	if _, err := NewCache(rdb, testPrefix, CacheOptions{Registerer: reg}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		rdb  redis.UniversalClient
		o    CacheOptions
		want string
	}{
		{"nil client", nil, CacheOptions{}, "nil redis client"},
		{"negative validity", rdb, CacheOptions{Validity: -time.Second}, "negative"},
		{"negative MaxLocal", rdb, CacheOptions{MaxLocal: -1}, "MaxLocal"},
		{"registered twice", rdb, CacheOptions{Registerer: reg}, "one Cache per Registerer"},
	}
	for _, tt := range tests {
		if _, err := NewCache(tt.rdb, testPrefix, tt.o); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
}

func TestOrigin(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://Example.COM/a/b?c", "http://example.com"},
		{"https://example.com:443/x", "https://example.com"},
		{"http://example.com:80/", "http://example.com"},
		{"http://example.com:8080/x", "http://example.com:8080"},
		{"https://example.com:80/", "https://example.com:80"},
		{"http://bücher.example/", "http://xn--bcher-kva.example"},
		{"http://[::1]:8080/", "http://[::1]:8080"},
		{"http://example.com/x", "http://example.com"}, {"https://127.0.0.1:8443/x", "https://127.0.0.1:8443"},
		{"http://a.example?q", "http://a.example"}, {"https://a.example#f", "https://a.example"},
	}
	for _, tt := range tests {
		got, err := Origin(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Origin(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "not a url", "ftp://example.com/", "mailto:a@example.com", "http://"} {
		if got, err := Origin(bad); err == nil || !strings.Contains(err.Error(), "robots origin") {
			t.Errorf("Origin(%q) = %q, %v; want an error", bad, got, err)
		}
	}
}
