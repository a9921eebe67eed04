package fetch

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// mapJar is a real, minimal CookieJar: cookies by host, name replaces name.
type mapJar struct {
	mu   sync.Mutex
	byHo map[string]map[string]*http.Cookie
	sets int
}

func newMapJar() *mapJar { return &mapJar{byHo: map[string]map[string]*http.Cookie{}} }

func (j *mapJar) Cookies(_ context.Context, u *url.URL) []*http.Cookie {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []*http.Cookie
	for _, c := range j.byHo[u.Hostname()] {
		out = append(out, c)
	}
	return out
}

func (j *mapJar) SetCookies(_ context.Context, u *url.URL, cs []*http.Cookie) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.sets++
	m := j.byHo[u.Hostname()]
	if m == nil {
		m = map[string]*http.Cookie{}
		j.byHo[u.Hostname()] = m
	}
	for _, c := range cs {
		m[c.Name] = c
	}
}

// fixedJar always returns the same cookies and keeps nothing.
type fixedJar []*http.Cookie

func (j fixedJar) Cookies(context.Context, *url.URL) []*http.Cookie { return j }

func (fixedJar) SetCookies(context.Context, *url.URL, []*http.Cookie) {}

func (j *mapJar) value(host, name string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if c := j.byHo[host][name]; c != nil {
		return c.Value
	}
	return ""
}

// headerOf returns the value of the first header named name in a raw
// request head, and whether it was there.
func headerOf(req []byte, name string) (string, bool) {
	for _, line := range strings.Split(string(req), "\r\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

func TestCookiesSentAndKeptForEveryStatus(t *testing.T) {
	for _, status := range []string{"200 OK", "302 Found", "404 Not Found", "500 Internal Server Error"} {
		t.Run(status, func(t *testing.T) {
			srv := startServer(t, respond("HTTP/1.0 "+status+"\r\nSet-Cookie: session=abc123; Path=/; HttpOnly\r\n"+
				"Set-Cookie: theme=dark\r\nContent-Length: 0\r\n\r\n"))
			f := newFetcher(t, Config{AllowPrivate: true})
			jar := newMapJar()
			jar.SetCookies(context.Background(), &url.URL{Host: "site.test"}, []*http.Cookie{{Name: "seen", Value: "1"}})
			u := "http://site.test:" + srv.port() + "/"
			resp, err := f.Fetch(context.Background(), Request{URL: u, Jar: jar,
				Header: http.Header{"Cookie": {"caller=ignored"}}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = resp.Close() })
			if got, _ := headerOf(resp.RequestBytes, "Cookie"); got != "seen=1" {
				t.Fatalf("Cookie header %q, want the jar's seen=1 only", got)
			}
			if jar.value("site.test", "session") != "abc123" || jar.value("site.test", "theme") != "dark" {
				t.Fatalf("Set-Cookie not kept: %+v", jar.byHo)
			}
			// The next fetch sends what the response set.
			resp2, err := f.Fetch(context.Background(), Request{URL: u, Jar: jar})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = resp2.Close() })
			got, _ := headerOf(resp2.RequestBytes, "Cookie")
			for _, want := range []string{"seen=1", "session=abc123", "theme=dark"} {
				if !strings.Contains(got, want) {
					t.Fatalf("second Cookie header %q lacks %s", got, want)
				}
			}
		})
	}
}

func TestNilJarSendsAndKeepsNone(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\nSet-Cookie: a=b\r\n\r\n"))
	f := newFetcher(t, Config{AllowPrivate: true})
	r := fetchOK(t, f, "http://site.test:"+srv.port()+"/", nil)
	if _, ok := headerOf(r.RequestBytes, "Cookie"); ok {
		t.Fatalf("Cookie sent without a jar: %q", r.RequestBytes)
	}
	// Without a jar the caller's own Cookie header is still honoured.
	r2 := fetchOK(t, f, "http://site.test:"+srv.port()+"/", http.Header{"Cookie": {"mine=1"}})
	if got, _ := headerOf(r2.RequestBytes, "Cookie"); got != "mine=1" {
		t.Fatalf("caller Cookie %q", got)
	}
}

func TestHostileCookiesCannotInjectHeaders(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\n\r\n"))
	f := newFetcher(t, Config{AllowPrivate: true})
	// A jar holding what a hostile site or a corrupt store could hand back.
	jar := fixedJar{{Name: "ok", Value: "1"}, {Name: "evil", Value: "x\r\nX-Injected: 1"}, nil, {Name: ""},
		{Name: "bad\r\nname", Value: "2"}}
	r, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/", Jar: jar})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if _, ok := headerOf(r.RequestBytes, "X-Injected"); ok || strings.Count(string(r.RequestBytes), "\r\n\r\n") != 1 {
		t.Fatalf("cookie value broke the request: %q", r.RequestBytes)
	}
	if got, _ := headerOf(r.RequestBytes, "Cookie"); !strings.Contains(got, "ok=1") {
		t.Fatalf("Cookie %q lacks ok=1", got)
	}
}

func TestMalformedSetCookieIgnored(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\nSet-Cookie: =novalue\r\nSet-Cookie: bad name=1\r\nSet-Cookie: good=1\r\n\r\n"))
	f := newFetcher(t, Config{AllowPrivate: true})
	jar := newMapJar()
	r, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/", Jar: jar})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	if jar.value("site.test", "good") != "1" || len(jar.byHo["site.test"]) != 1 {
		t.Fatalf("jar %+v, want only good=1", jar.byHo["site.test"])
	}
}
