package cookies

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

func loadFile(t *testing.T, jar *Jar, name string) (int, error) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return jar.LoadNetscape(context.Background(), f)
}

func TestLoadNetscape(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	jar, logs := newTestJar(rdb, newClock(), Options{})
	n, err := loadFile(t, jar, "testdata/cookies.txt")
	if err != nil {
		t.Fatalf("LoadNetscape: %v", err)
	}
	// session (its second line replaces the first), acct, sid, empty, ip;
	// the expired cookie is skipped.
	if n != 5 {
		t.Errorf("loaded %d cookies, want 5", n)
	}
	if !strings.Contains(logs.String(), "skipped expired cookies") {
		t.Errorf("expired cookie not reported in the log:\n%s", logs.String())
	}
	tests := []struct{ url, want string }{
		{"https://www.example.com/account/x", "acct=a2; sid=quoted value; session=s2"},
		{"http://www.example.com/account/x", "session=s2"},
		{"https://example.com/", "sid=quoted value; session=s2"},
		{"https://example.com/account", "sid=quoted value; session=s2"},
		{"http://old.example.com/", "session=s2"},
		{"http://shop.example.co.uk/", "empty="},
		{"http://www.example.co.uk/", ""},
		{"http://192.168.0.10/", "ip=v"},
	}
	for _, tc := range tests {
		if got := header(jar.Cookies(ctx, mustURL(t, tc.url))); got != tc.want {
			t.Errorf("Cookies(%s) = %q, want %q", tc.url, got, tc.want)
		}
	}
	if cs := jar.Cookies(ctx, mustURL(t, "https://example.com/")); !cs[0].Quoted {
		t.Errorf("quoted value lost its quotes flag")
	}
	// Loaded cookies keep HttpOnly and Secure in storage.
	v := rdb.HGet(ctx, "test:cookies:example.com", "sid;example.com;/").Val()
	if e, err := decodeEntry(v); err != nil || !e.HTTPOnly || !e.Secure || e.HostOnly {
		t.Errorf("stored sid = %+v, %v; want HttpOnly, Secure, domain cookie", e, err)
	}
}

func TestLoadNetscapeBadLines(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	jar, _ := newTestJar(rdb, newClock(), Options{})
	n, err := loadFile(t, jar, "testdata/bad-cookies.txt")
	if n != 2 {
		t.Errorf("loaded %d cookies, want the 2 good lines", n)
	}
	want := map[int]string{
		3:  "has 1 TAB-separated fields, want 7",
		4:  `domain "co.uk" is a public suffix`,
		5:  `include-subdomains field "YES"`,
		6:  `secure field "maybe"`,
		7:  `path "nopath"`,
		8:  `expiry "tomorrow"`,
		9:  `expiry "-5"`,
		10: `invalid cookie name "bad name"`,
		11: `cookie "semi": value has a disallowed byte at offset 6`,
		12: `malformed domain "exa mple.com"`,
		13: `malformed domain ""`,
		14: "has 8 TAB-separated fields",
	}
	got := lineErrors(t, err)
	for line, reason := range want {
		if !strings.Contains(got[line], reason) {
			t.Errorf("line %d: error %q, want one containing %q", line, got[line], reason)
		}
	}
	for line := range got {
		if _, ok := want[line]; !ok {
			t.Errorf("unexpected error for line %d: %s", line, got[line])
		}
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error exposes a cookie value: %v", err)
	}
	if !strings.Contains(err.Error(), "cookies.txt line 11: ") {
		t.Errorf("error does not name the line: %v", err)
	}
}

// lineErrors maps line numbers to the reasons in a joined LoadNetscape error.
func lineErrors(t *testing.T, err error) map[int]string {
	t.Helper()
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error %v is not a join", err)
	}
	got := make(map[int]string)
	for _, e := range joined.Unwrap() {
		var le *LineError
		if !errors.As(e, &le) {
			t.Fatalf("error %v is not a *LineError", e)
		}
		got[le.Line] = le.Reason
	}
	return got
}

func TestLoadNetscapeBounds(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	line := func(name, value string) string {
		return strings.Join([]string{".example.com", "TRUE", "/", "FALSE", "0", name, value}, "\t")
	}
	tests := []struct {
		name   string
		opts   Options
		input  string
		n      int
		errs   map[int]string
		cookie string
	}{
		{"over-long line is skipped, the rest loads", Options{},
			line("a", "1") + "\n" + line("huge", strings.Repeat("x", 3*maxLineBytes)) + "\n" + line("b", "2") + "\n",
			2, map[int]string{2: "longer than 65536 bytes"}, "a=1; b=2"},
		{"over-long last line without newline", Options{},
			line("a", "1") + "\n" + line("huge", strings.Repeat("x", maxLineBytes+10)),
			1, map[int]string{2: "longer than"}, "a=1"},
		{"value over MaxValueBytes", Options{MaxValueBytes: 10},
			line("a", "1") + "\n" + line("big", strings.Repeat("x", 10)) + "\n",
			1, map[int]string{2: "name and value are 13 bytes, over the limit of 10"}, "a=1"},
		{"MaxPerDomain keeps the last lines", Options{MaxPerDomain: 2},
			line("a", "1") + "\n" + line("b", "2") + "\n" + line("c", "3") + "\n",
			3, nil, "b=2; c=3"},
		{"empty input", Options{}, "", 0, nil, ""},
		{"binary junk", Options{}, "\x00\x01\x02\n\xff\xfe", 0, map[int]string{1: "has 1", 2: "has 1"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rdb.FlushDB(ctx)
			jar, _ := newTestJar(rdb, newClock(), tc.opts)
			n, err := jar.LoadNetscape(ctx, strings.NewReader(tc.input))
			if n != tc.n {
				t.Errorf("loaded %d, want %d", n, tc.n)
			}
			if tc.errs == nil && err != nil {
				t.Errorf("unexpected error: %v", err)
			}
			if tc.errs != nil {
				got := lineErrors(t, err)
				if len(got) != len(tc.errs) {
					t.Errorf("errors %v, want %v", got, tc.errs)
				}
				for l, r := range tc.errs {
					if !strings.Contains(got[l], r) {
						t.Errorf("line %d: %q, want one containing %q", l, got[l], r)
					}
				}
			}
			if got := header(jar.Cookies(ctx, mustURL(t, "http://example.com/"))); got != tc.cookie {
				t.Errorf("Cookies = %q, want %q", got, tc.cookie)
			}
		})
	}
}

func TestLoadNetscapeFailures(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	good := ".example.com\tTRUE\t/\tFALSE\t0\ta\t1\n"

	jar, _ := newTestJar(rdb, newClock(), Options{})
	readErr := errors.New("disk on fire")
	n, err := jar.LoadNetscape(ctx, io.MultiReader(strings.NewReader(good), iotest.ErrReader(readErr)))
	if !errors.Is(err, readErr) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("read failure: err %v, want it wrapped with the line", err)
	}
	if n != 1 {
		t.Errorf("lines before a read failure: loaded %d, want 1", n)
	}

	dead := redis.NewClient(&redis.Options{Addr: rdb.Options().Addr, MaxRetries: -1})
	_ = dead.Close()
	deadJar, _ := newTestJar(dead, newClock(), Options{})
	n, err = deadJar.LoadNetscape(ctx, strings.NewReader(good))
	if n != 0 || err == nil || !strings.Contains(err.Error(), "store cookies") {
		t.Errorf("Redis failure: n=%d err=%v, want 0 and a store error", n, err)
	}
}
