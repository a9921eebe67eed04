package cookies

import (
	"context"
	"fmt"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

// BenchmarkCookies reads a domain holding the default cap of 50 cookies,
// half of them on a path the request matches, from redis-server.
//
//	go test -run '^$' -bench BenchmarkCookies ./pkg/cookies/
func BenchmarkCookies(b *testing.B) {
	rdb := embeddedtest.Redis(b)
	ctx := context.Background()
	jar, _ := newTestJar(rdb, newClock(), Options{})
	lines := make([]string, DefaultMaxPerDomain)
	for i := range lines {
		path := "/shop"
		if i%2 == 0 {
			path = "/blog"
		}
		lines[i] = fmt.Sprintf("c%02d=%032d; Domain=example.com; Path=%s", i, i, path)
	}
	jar.SetCookies(ctx, mustURL(b, "https://www.example.com/"), parseSetCookies(lines...))
	u := mustURL(b, "https://www.example.com/shop/item/42")
	if n := len(jar.Cookies(ctx, u)); n != len(lines)/2 {
		b.Fatalf("setup: %d cookies match, want %d", n, len(lines)/2)
	}
	b.ReportAllocs()
	for b.Loop() {
		jar.Cookies(ctx, u)
	}
}
