package cookies

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/fetch"
)

// The fetcher's consumer-side interface is what the jar is for.
var _ fetch.CookieJar = (*Jar)(nil)

// step is one action of a jar scenario: advance the clock, store the
// Set-Cookie lines of a response for set, or check the Cookie header sent
// to get.
type step struct {
	advance time.Duration
	set     string
	cookies []string
	get     string
	want    string
}

func set(u string, lines ...string) step { return step{set: u, cookies: lines} }
func get(u, want string) step            { return step{get: u, want: want} }
func after(d time.Duration) step         { return step{advance: d} }

// rfc6265Cases exercise RFC 6265 sections 5.1-5.4 as a crawler meets them.
var rfc6265Cases = []struct {
	name  string
	steps []step
}{
	{"host-only cookie goes to its host only", []step{
		set("http://www.example.com/", "a=1"),
		get("http://www.example.com/", "a=1"),
		get("http://example.com/", ""),
		get("http://sub.www.example.com/", ""),
	}},
	{"domain cookie goes to the domain and subdomains", []step{
		set("http://www.example.com/", "a=1; Domain=example.com"),
		get("http://example.com/", "a=1"),
		get("http://www.example.com/", "a=1"),
		get("http://deep.other.example.com/", "a=1"),
		get("http://notexample.com/", ""),
		get("http://example.org/", ""),
	}},
	{"leading dot of Domain is ignored", []step{
		set("http://www.example.com/", "a=1; Domain=.EXAMPLE.com"),
		get("http://other.example.com/", "a=1"),
	}},
	{"Domain must domain-match the host", []step{
		set("http://www.example.com/", "a=1; Domain=other.com", "b=2; Domain=sub.www.example.com", "c=3; Domain=ww.example.com"),
		get("http://other.com/", ""),
		get("http://sub.www.example.com/", ""),
		get("http://www.example.com/", ""),
		get("http://ww.example.com/", ""),
	}},
	{"Domain that is a public suffix is rejected", []step{
		set("http://www.example.co.uk/", "a=1; Domain=co.uk", "b=2; Domain=uk", "c=3; Domain=example.co.uk"),
		get("http://www.example.co.uk/", "c=3"),
		get("http://other.co.uk/", ""),
	}},
	{"host that is a public suffix keeps Domain=itself as host-only", []step{
		set("https://github.io/", "a=1; Domain=github.io"),
		get("https://github.io/", "a=1"),
		get("https://someone.github.io/", ""),
	}},
	{"private-registry suffix isolates sites", []step{
		set("https://alice.github.io/", "a=1; Domain=alice.github.io", "b=2; Domain=github.io"),
		get("https://alice.github.io/", "a=1"),
		get("https://www.alice.github.io/", "a=1"),
		get("https://bob.github.io/", ""),
	}},
	{"single-label host", []step{
		set("http://localhost:8080/", "a=1", "b=2; Domain=localhost"),
		get("http://localhost/", "a=1; b=2"),
	}},
	{"IPv4 host: Domain may only repeat the address", []step{
		set("http://192.168.0.10/", "a=1", "b=2; Domain=192.168.0.10", "c=3; Domain=168.0.10", "d=4; Domain=.192.168.0.10"),
		get("http://192.168.0.10/", "a=1; b=2"),
		get("http://10.192.168.0.10/", ""),
		get("http://192.168.0.11/", ""),
	}},
	{"IPv6 host", []step{
		set("http://[2001:db8::1]:8080/", "a=1"),
		get("http://[2001:db8::1]/", "a=1"),
		get("http://[2001:db8::2]/", ""),
	}},
	{"ports and host case do not separate cookies", []step{
		set("http://WWW.Example.COM:8080/", "a=1"),
		get("http://www.example.com/", "a=1"),
		get("https://www.example.com.:8443/", "a=1"),
	}},
	{"default path is the directory of the request", []step{
		set("http://h.example/a/b/c.html", "a=1", "p=2; Path=foo"),
		get("http://h.example/a/b", "a=1; p=2"),
		get("http://h.example/a/b/", "a=1; p=2"),
		get("http://h.example/a/b/x/y", "a=1; p=2"),
		get("http://h.example/a/bc", ""),
		get("http://h.example/a/", ""),
	}},
	{"default path of a top-level resource is /", []step{
		set("http://h.example/index.html?q=1", "a=1"),
		set("http://h.example", "b=2"),
		get("http://h.example/x/y", "a=1; b=2"),
	}},
	{"path-match needs a / boundary", []step{
		set("http://h.example/", "a=1; Path=/docs", "b=2; Path=/docs/"),
		get("http://h.example/docs", "a=1"),
		get("http://h.example/docs/x", "b=2; a=1"),
		get("http://h.example/docsx", ""),
		get("http://h.example/", ""),
	}},
	{"secure cookies go on https only", []step{
		set("https://h.example/", "s=1; Secure", "p=2"),
		get("https://h.example/", "s=1; p=2"),
		get("http://h.example/", "p=2"),
	}},
	{"longest path first, then oldest", []step{
		set("http://h.example/", "root=1; Path=/"),
		after(time.Second),
		set("http://h.example/", "z=2; Path=/x", "y=3; Path=/x"),
		set("http://h.example/", "deep=4; Path=/x/y"),
		get("http://h.example/x/y/z", "deep=4; z=2; y=3; root=1"),
	}},
	{"replacing a cookie keeps its creation time", []step{
		set("http://h.example/", "a=1"),
		after(time.Second),
		set("http://h.example/", "b=2"),
		after(time.Second),
		set("http://h.example/", "a=3"),
		get("http://h.example/", "a=3; b=2"),
	}},
	{"host-only and Domain cookie of the same name and domain are one cookie", []step{
		set("http://example.com/", "a=1"),
		set("http://example.com/", "a=2; Domain=example.com"),
		get("http://example.com/", "a=2"),
		get("http://www.example.com/", "a=2"),
	}},
	{"same name on different paths or domains are different cookies", []step{
		set("http://www.example.com/", "a=1", "a=2; Path=/p", "a=3; Domain=example.com"),
		get("http://www.example.com/p", "a=2; a=1; a=3"),
	}},
	{"Max-Age expires", []step{
		set("http://h.example/", "a=1; Max-Age=60", "s=2"),
		after(59 * time.Second),
		get("http://h.example/", "a=1; s=2"),
		after(2 * time.Second),
		get("http://h.example/", "s=2"),
	}},
	{"Expires expires", []step{
		set("http://h.example/", "a=1; Expires=Sun, 01 Mar 2026 13:00:00 GMT"),
		get("http://h.example/", "a=1"),
		after(time.Hour),
		get("http://h.example/", ""),
	}},
	{"Max-Age wins over Expires", []step{
		set("http://h.example/", "a=1; Max-Age=60; Expires=Thu, 01 Jan 2015 00:00:00 GMT",
			"b=2; Max-Age=0; Expires=Fri, 01 Jan 2100 00:00:00 GMT"),
		get("http://h.example/", "a=1"),
	}},
	{"past expiry and Max-Age<=0 delete", []step{
		set("http://h.example/", "a=1", "b=2", "c=3"),
		set("http://h.example/", "a=; Expires=Thu, 01 Jan 2015 00:00:00 GMT", "b=x; Max-Age=0", "c=y; Max-Age=-5"),
		get("http://h.example/", ""),
	}},
	{"deletion must name the same domain and path", []step{
		set("http://www.example.com/", "a=1; Path=/p"),
		set("http://www.example.com/", "a=; Max-Age=0", "a=; Max-Age=0; Domain=example.com; Path=/p"),
		get("http://www.example.com/p", "a=1"),
	}},
	{"quoted value", []step{
		set("http://h.example/", `q="a b"`),
		get("http://h.example/", "q=a b"),
	}},
	{"non-http schemes neither set nor get", []step{
		set("ftp://h.example/", "a=1"),
		get("http://h.example/", ""),
		set("http://h.example/", "b=1"),
		get("ws://h.example/", ""),
	}},
	{"URL without host", []step{
		set("http:///path", "a=1"),
		get("http:///path", ""),
	}},
	{"internationalised host", []step{
		// net/http drops a non-ASCII Domain attribute: host-only.
		set("http://bücher.example/", "a=1; Domain=BÜCHER.example"),
		get("http://xn--bcher-kva.example/", "a=1"),
		get("http://www.bücher.example/", ""),
	}},
}

func TestRFC6265(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	for _, tc := range rfc6265Cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := rdb.FlushDB(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			clk := newClock()
			jar, _ := newTestJar(rdb, clk, Options{})
			for i, s := range tc.steps {
				switch {
				case s.advance != 0:
					clk.Advance(s.advance)
				case s.set != "":
					jar.SetCookies(ctx, mustURL(t, s.set), parseSetCookies(s.cookies...))
				default:
					if got := header(jar.Cookies(ctx, mustURL(t, s.get))); got != s.want {
						t.Errorf("step %d: Cookies(%s) = %q, want %q", i, s.get, got, s.want)
					}
				}
			}
		})
	}
}

// TestInvalidCookiesIgnored feeds cookies the Set-Cookie parser would not
// produce but a caller could build.
func TestInvalidCookiesIgnored(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	jar, _ := newTestJar(rdb, newClock(), Options{})
	u := mustURL(t, "http://h.example/")
	jar.SetCookies(ctx, u, []*http.Cookie{
		nil,
		{Name: "", Value: "empty-name"},
		{Name: "bad name", Value: "1"},
		{Name: "tab", Value: "a\tb"},
		{Name: "semi", Value: "a;b"},
		{Name: "ctl", Value: "a\x00"},
		{Name: "dom", Value: "1", Domain: "h.example;evil"},
		{Name: "path", Value: "1", Path: "/a\tb"},
		{Name: "ok", Value: "1"},
	})
	// A hand-built cookie may carry a U-label Domain: it is compared in A-labels.
	jar.SetCookies(ctx, mustURL(t, "http://www.bücher.example/"), []*http.Cookie{
		{Name: "idn", Value: "1", Domain: "BÜCHER.example"},
		{Name: "badidn", Value: "1", Domain: "bü\u200dcher..example"},
	})
	if got := header(jar.Cookies(ctx, mustURL(t, "http://shop.xn--bcher-kva.example/"))); got != "idn=1" {
		t.Errorf("Cookies = %q, want idn=1", got)
	}
	if got := header(jar.Cookies(ctx, u)); got != "path=1; ok=1" {
		t.Errorf("Cookies = %q, want only the valid cookies (path falls back to the default)", got)
	}
}

func TestSessionCookieLivesUntilTTL(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	jar, _ := newTestJar(rdb, newClock(), Options{TTL: time.Hour})
	jar.SetCookies(ctx, mustURL(t, "https://www.example.co.uk/"), parseSetCookies("s=1"))
	ttl, err := rdb.PTTL(ctx, "test:cookies:example.co.uk").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("key TTL = %v, want about 1h", ttl)
	}
	// A later write refreshes the expiry.
	if err := rdb.PExpire(ctx, "test:cookies:example.co.uk", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	jar.SetCookies(ctx, mustURL(t, "https://shop.example.co.uk/"), parseSetCookies("t=2"))
	if ttl := rdb.PTTL(ctx, "test:cookies:example.co.uk").Val(); ttl <= 59*time.Minute {
		t.Errorf("key TTL after write = %v, want refreshed to about 1h", ttl)
	}
	if got := header(jar.Cookies(ctx, mustURL(t, "https://www.example.co.uk/"))); got != "s=1" {
		t.Errorf("Cookies = %q", got)
	}
	// Deleting the last cookie leaves no key behind.
	jar.SetCookies(ctx, mustURL(t, "https://www.example.co.uk/"), parseSetCookies("s=; Max-Age=0"))
	jar.SetCookies(ctx, mustURL(t, "https://shop.example.co.uk/"), parseSetCookies("t=; Max-Age=0"))
	if n := rdb.Exists(ctx, "test:cookies:example.co.uk").Val(); n != 0 {
		t.Errorf("key still exists after deleting every cookie")
	}
}

func TestCookieValuesNeverLogged(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	jar, logs := newTestJar(rdb, newClock(), Options{MaxPerDomain: 1, MaxValueBytes: 40})
	const secret = "SESSIONSECRET"
	u := mustURL(t, "http://h.example/")
	jar.SetCookies(ctx, u, parseSetCookies("a="+secret+"; Domain=evil.example", "b="+secret+strings.Repeat("x", 40)))
	jar.SetCookies(ctx, u, []*http.Cookie{{Name: "c", Value: secret + ";"}})
	jar.SetCookies(ctx, u, parseSetCookies("d="+secret, "e="+secret)) // evicts one
	if err := rdb.HSet(ctx, "test:cookies:h.example", "broken", "v9\t"+secret).Err(); err != nil {
		t.Fatal(err)
	}
	jar.Cookies(ctx, u)
	out := logs.String()
	if !strings.Contains(out, "ignore cookie") || !strings.Contains(out, "skip stored cookie") || !strings.Contains(out, "evicted") {
		t.Fatalf("expected the ignored, corrupt and evicted cookies to be logged, got:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Errorf("log holds a cookie value:\n%s", out)
	}
}
