package cookies

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

// TestStatelessWorkersShareCookies is the reason for the package: one
// worker receives a cookie, another sends it.
func TestStatelessWorkersShareCookies(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	clk := newClock()
	a, _ := newTestJar(rdb, clk, Options{})
	b, _ := newTestJar(rdb, clk, Options{})
	login := mustURL(t, "https://login.example.org/auth")
	a.SetCookies(ctx, login, parseSetCookies("sid=abc; Domain=example.org; Path=/; Secure; HttpOnly"))
	page := mustURL(t, "https://www.example.org/private/page")
	if got := header(b.Cookies(ctx, page)); got != "sid=abc" {
		t.Fatalf("second jar sends %q, want sid=abc", got)
	}
	b.SetCookies(ctx, page, parseSetCookies("sid=def; Domain=example.org; Path=/"))
	if got := header(a.Cookies(ctx, login)); got != "sid=def" {
		t.Fatalf("first jar sends %q after the second replaced it, want sid=def", got)
	}
	b.SetCookies(ctx, page, parseSetCookies("sid=; Domain=example.org; Path=/; Max-Age=0"))
	if got := a.Cookies(ctx, login); len(got) != 0 {
		t.Fatalf("first jar sends %q after the second deleted it", header(got))
	}
	// A different prefix is a different jar.
	other := New(rdb, "other:", Options{Now: clk.Now})
	a.SetCookies(ctx, login, parseSetCookies("x=1"))
	if got := other.Cookies(ctx, login); len(got) != 0 {
		t.Fatalf("jar with another prefix sees %q", header(got))
	}
}

func TestMaxPerDomainDropsOldest(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	clk := newClock()
	jar, _ := newTestJar(rdb, clk, Options{MaxPerDomain: 3})
	// Subdomains share their registrable domain's cap.
	for i, host := range []string{"a", "b", "c", "d", "e"} {
		jar.SetCookies(ctx, mustURL(t, "http://"+host+".example.com/"), parseSetCookies(fmt.Sprintf("c%d=%d; Domain=example.com", i, i)))
		clk.Advance(time.Second)
	}
	if got := header(jar.Cookies(ctx, mustURL(t, "http://example.com/"))); got != "c2=2; c3=3; c4=4" {
		t.Errorf("after 5 writes with a cap of 3: %q, want the newest 3", got)
	}
	// Replacing an old cookie keeps its age, so it is still evicted first.
	jar.SetCookies(ctx, mustURL(t, "http://example.com/"), parseSetCookies("c2=new; Domain=example.com", "c5=5; Domain=example.com"))
	if got := header(jar.Cookies(ctx, mustURL(t, "http://example.com/"))); got != "c3=3; c4=4; c5=5" {
		t.Errorf("after replacing the oldest and adding one: %q", got)
	}
	// Expired cookies go before live ones are evicted.
	jar.SetCookies(ctx, mustURL(t, "http://example.com/"), parseSetCookies("c4=4; Domain=example.com; Max-Age=10"))
	clk.Advance(time.Minute)
	jar.SetCookies(ctx, mustURL(t, "http://example.com/"), parseSetCookies("c6=6; Domain=example.com"))
	if got := header(jar.Cookies(ctx, mustURL(t, "http://example.com/"))); got != "c3=3; c5=5; c6=6" {
		t.Errorf("after expiry: %q", got)
	}
	if n := rdb.HLen(ctx, "test:cookies:example.com").Val(); n != 3 {
		t.Errorf("hash holds %d fields, want 3", n)
	}
	// One response setting more than the cap keeps its last cookies.
	lines := make([]string, 6)
	for i := range lines {
		lines[i] = fmt.Sprintf("n%d=%d", i, i)
	}
	jar.SetCookies(ctx, mustURL(t, "http://example.com/"), parseSetCookies(lines...))
	if got := header(jar.Cookies(ctx, mustURL(t, "http://example.com/"))); got != "n3=3; n4=4; n5=5" {
		t.Errorf("after one response of 6 cookies: %q", got)
	}
}

func TestMaxValueBytes(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	u := mustURL(t, "http://h.example/")
	tests := []struct {
		name  string
		opts  Options
		value int
		kept  bool
	}{
		{"default limit, just under", Options{}, DefaultMaxValueBytes - 2, true},
		{"default limit, exact", Options{}, DefaultMaxValueBytes - 1, true},
		{"default limit, over", Options{}, DefaultMaxValueBytes, false},
		{"huge", Options{}, 1 << 20, false},
		{"custom limit", Options{MaxValueBytes: 100}, 100, false},
		{"custom limit, fits", Options{MaxValueBytes: 100}, 99, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rdb.FlushDB(ctx)
			jar, _ := newTestJar(rdb, newClock(), tc.opts)
			// Name "v" is one byte: name plus value is value+1.
			jar.SetCookies(ctx, u, []*http.Cookie{{Name: "v", Value: strings.Repeat("x", tc.value)}})
			got := jar.Cookies(ctx, u)
			if kept := len(got) == 1; kept != tc.kept {
				t.Fatalf("value of %d bytes kept = %v, want %v", tc.value, kept, tc.kept)
			}
			if tc.kept && len(got[0].Value) != tc.value {
				t.Errorf("value came back with %d bytes, want %d", len(got[0].Value), tc.value)
			}
		})
	}
}

func TestConcurrentWorkers(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	clk := newClock()
	const workers, perWorker, limit = 8, 10, 20
	var wg sync.WaitGroup
	for w := range workers {
		jar, _ := newTestJar(rdb, clk, Options{MaxPerDomain: limit})
		wg.Go(func() {
			for i := range perWorker {
				u := mustURL(t, fmt.Sprintf("https://w%d.example.net/p%d", w, i))
				jar.SetCookies(ctx, u, parseSetCookies(fmt.Sprintf("w%di%d=1; Domain=example.net; Path=/", w, i)))
				if n := len(jar.Cookies(ctx, u)); n == 0 || n > limit {
					t.Errorf("worker %d read %d cookies, want 1..%d", w, n, limit)
				}
			}
		})
	}
	wg.Wait()
	jar, _ := newTestJar(rdb, clk, Options{})
	if n := len(jar.Cookies(ctx, mustURL(t, "https://example.net/"))); n != limit {
		t.Errorf("after %d concurrent writes: %d cookies, want the cap %d", workers*perWorker, n, limit)
	}
}

func TestRedisFailureIsLoggedNotFatal(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	dead := redis.NewClient(&redis.Options{Addr: rdb.Options().Addr, MaxRetries: -1})
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	jar, logs := newTestJar(dead, newClock(), Options{})
	u := mustURL(t, "http://h.example/")
	jar.SetCookies(ctx, u, parseSetCookies("a=1"))
	if got := jar.Cookies(ctx, u); got != nil {
		t.Errorf("Cookies on a closed client = %q", header(got))
	}
	out := logs.String()
	if !strings.Contains(out, "store cookies") || !strings.Contains(out, "read cookies") {
		t.Errorf("expected both failures logged, got:\n%s", out)
	}
	// A key of another type (written by something else) is an error too.
	if err := rdb.Set(ctx, "test:cookies:h.example", "not a hash", 0).Err(); err != nil {
		t.Fatal(err)
	}
	jar2, logs2 := newTestJar(rdb, newClock(), Options{})
	if got := jar2.Cookies(ctx, u); got != nil {
		t.Errorf("Cookies on a string key = %q", header(got))
	}
	if !strings.Contains(logs2.String(), "WRONGTYPE") {
		t.Errorf("expected WRONGTYPE logged, got:\n%s", logs2.String())
	}
}

func TestCorruptStoredCookies(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	jar, _ := newTestJar(rdb, newClock(), Options{})
	u := mustURL(t, "http://h.example/")
	jar.SetCookies(ctx, u, parseSetCookies("good=1"))
	key := "test:cookies:h.example"
	if err := rdb.HSet(ctx, key, "junk", "garbage", "old", "v0\t1\t0\t-\tn\th.example\t/\tv").Err(); err != nil {
		t.Fatal(err)
	}
	if got := header(jar.Cookies(ctx, u)); got != "good=1" {
		t.Errorf("Cookies with corrupt fields = %q, want good=1", got)
	}
	// The next write clears them out.
	jar.SetCookies(ctx, u, parseSetCookies("more=2"))
	if n := rdb.HLen(ctx, key).Val(); n != 2 {
		t.Errorf("hash holds %d fields after a write, want 2", n)
	}
}

func TestScriptCacheFlushed(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	jar, _ := newTestJar(rdb, newClock(), Options{})
	u := mustURL(t, "http://h.example/")
	jar.SetCookies(ctx, u, parseSetCookies("a=1"))
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	jar.SetCookies(ctx, u, parseSetCookies("b=2"))
	if got := header(jar.Cookies(ctx, u)); got != "a=1; b=2" {
		t.Errorf("after SCRIPT FLUSH: %q", got)
	}
}

// Concurrent reads share pipelines; each caller still gets its own
// domain's cookies.
func TestConcurrentReadsGetTheirOwnCookies(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	jar, _ := newTestJar(rdb, newClock(), Options{})
	const domains = 40
	for d := range domains {
		u := mustURL(t, fmt.Sprintf("http://www.site%d.example/", d))
		jar.SetCookies(ctx, u, parseSetCookies(fmt.Sprintf("id=%d; Path=/", d)))
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				d := (g*7 + i) % domains
				u := mustURL(t, fmt.Sprintf("http://www.site%d.example/page", d))
				if got, want := header(jar.Cookies(ctx, u)), fmt.Sprintf("id=%d", d); got != want {
					t.Errorf("site%d: sends %q, want %q", d, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
