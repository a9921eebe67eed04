package traps

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestPattern(t *testing.T) {
	for _, c := range []struct {
		url, want string
		variable  bool
	}{
		{"http://a.test/calendar/2024/01/05", "/calendar/9/9/9", true},
		{"http://a.test/calendar/1999/12", "/calendar/9/9", true},
		{"http://a.test/news/uk-67234511", "/news/uk-9", true},
		{"http://a.test/s/0f8e2c1d9a7b4e3f8c6d5b4a39281706/page", "/s/h/page", true},
		{"http://a.test/list?page=3&sort=asc", "/list?page=&sort=", true},
		{"http://a.test/about/team", "/about/team", false},
		{"http://a.test/search?q", "/search?q=", false},
		{"http://a.test/p2p/index", "/p9p/index", true},
		{"http://a.test/a-very-long-word-without-digits/", "/a-very-long-word-without-digits/", false},
	} {
		got, v := Pattern(mustURL(t, c.url))
		if got != c.want || v != c.variable {
			t.Errorf("Pattern(%s) = %q, %v; want %q, %v", c.url, got, v, c.want, c.variable)
		}
	}
}

func TestQueryTrap(t *testing.T) {
	o := Options{}.WithDefaults()
	for _, c := range []struct {
		url  string
		trap bool
	}{
		{"http://a.test/x", false},
		{"http://a.test/x?a=1&b=2", false},
		{"http://a.test/x?" + strings.Repeat("a", 1025), true},
		{"http://a.test/x?" + strings.Repeat("p=1&", 5), true},
		{"http://a.test/x?p=1&p=2&p=3&p=4", false},
		{"http://a.test/x?" + strings.TrimSuffix(strings.Repeat("k=v&", 49), "&"), true},
		{"http://a.test/x?" + strings.Repeat("&", 60), true},
	} {
		if got := o.QueryTrap(mustURL(t, c.url)); got != c.trap {
			t.Errorf("QueryTrap(%.60s) = %v, want %v", c.url, got, c.trap)
		}
	}
}

// The budget is the crawl's: counts from every caller add up in Redis,
// a pattern is over once its total passes max, and each host's counts
// expire.
func TestBudget(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	a, b := NewBudget(rdb, "trawler:fc-npld:", time.Minute), NewBudget(rdb, "trawler:fc-npld:", time.Minute)
	k := Key{Host: "cal.test", Pattern: "/calendar/9/9"}
	other := Key{Host: "cal.test", Pattern: "/news/9"}
	if over, err := a.Add(ctx, map[Key]int64{k: 6, other: 1}, 10); err != nil || len(over) != 0 {
		t.Fatalf("first add: %v, %v", over, err)
	}
	over, err := b.Add(ctx, map[Key]int64{k: 5}, 10)
	if err != nil || len(over) != 1 || over[0] != k {
		t.Fatalf("second worker's add: %v, %v; want the pattern over its budget", over, err)
	}
	if over, _ := a.Add(ctx, map[Key]int64{other: 1}, 10); len(over) != 0 {
		t.Fatalf("another pattern of the host: %v", over)
	}
	if ttl := rdb.TTL(ctx, "trawler:fc-npld:traps:cal.test").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("host's counts expire in %v", ttl)
	}
	if over, err := a.Add(ctx, map[Key]int64{k: 100}, -1); err != nil || over != nil {
		t.Fatalf("budget off: %v, %v", over, err)
	}
	if err := rdb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Add(ctx, map[Key]int64{k: 1}, 10); err == nil || !strings.Contains(err.Error(), "trap budget") {
		t.Fatalf("a closed connection: %v", err)
	}
}
