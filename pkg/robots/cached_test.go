package robots

import (
	"context"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

// Cached shows the stored file as fetched (status, body, time); an origin
// never fetched is not found, and an unreadable entry is an error naming
// the origin rather than an empty file.
func TestCached(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	c, err := NewCache(rdb, testPrefix, CacheOptions{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(time.Now().UnixMilli())
	if _, err := c.Put(ctx, "http://a.test:80", 200, []byte("User-agent: *\nDisallow: /x\n"), at); err != nil {
		t.Fatal(err)
	}
	got, ok, err := c.Cached(ctx, "http://a.test:80")
	if err != nil || !ok || got.Status != 200 || string(got.Body) != "User-agent: *\nDisallow: /x\n" || !got.Fetched.Equal(at) {
		t.Fatalf("cached: %+v %v %v", got, ok, err)
	}
	if _, ok, err := c.Cached(ctx, "http://never.test:80"); ok || err != nil {
		t.Fatalf("never fetched: %v %v", ok, err)
	}
	if err := rdb.HSet(ctx, testPrefix+"http://bad.test:80", "status", "x").Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Cached(ctx, "http://bad.test:80"); err == nil {
		t.Fatal("an unreadable entry read as a file")
	}
}
