package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// siteHandler is one small site served over both protocols: pages of
// several kinds, so payload digests are compared across content types,
// codings and sizes.
func siteHandler(t *testing.T) http.Handler {
	big := bytes.Repeat([]byte("0123456789abcdef"), 200_000) // 3.2 MB, past the spool threshold and many frames
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<html><a href="/big">big</a></html>`)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(big) // no Content-Length: chunked over HTTP/1.1
	})
	mux.HandleFunc("/gz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(gzipped(t, strings.Repeat("compressed ", 1000)))
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Set-Cookie", "session=abc; Path=/")
		fmt.Fprintf(w, "%s %d %s ua=%s ref=%s", r.Method, len(b), r.Proto, r.UserAgent(), r.Referer())
	})
	return mux
}

// tlsSite starts the site over TLS on loopback, with HTTP/2 offered by
// ALPN or not.
func tlsSite(t *testing.T, h2 bool) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(siteHandler(t))
	srv.EnableHTTP2 = h2
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "https://site.test:" + port
}

// The acceptance test of issue 38: the same site over HTTP/2 and over
// HTTP/1.1 gives the same payloads and payload digests; the HTTP/2
// exchange is recorded in HTTP/1.1 text form with WARC-Protocol h2.
func TestH2SameDigestsAsH1(t *testing.T) {
	h2Site, h1Site := tlsSite(t, true), tlsSite(t, false)
	f := newFetcher(t, Config{AllowPrivate: true, HTTP2: true})
	for _, path := range []string{"/page", "/big", "/gz", "/empty"} {
		t.Run(path, func(t *testing.T) {
			r2 := fetchOK(t, f, h2Site+path, nil)
			r1 := fetchOK(t, f, h1Site+path, nil)
			if !slices.Equal(r2.Protocols, []string{"h2", "tls/1.3"}) || !slices.Equal(r1.Protocols, []string{"http/1.0", "tls/1.3"}) {
				t.Fatalf("protocols h2 site %v, h1 site %v", r2.Protocols, r1.Protocols)
			}
			// Heritrix's FetchHTTP2 annotates an h2 fetch in the crawl.log.
			if !slices.Equal(r2.Annotations, []string{AnnotationH2}) || len(r1.Annotations) != 0 {
				t.Fatalf("annotations h2 site %v, h1 site %v", r2.Annotations, r1.Annotations)
			}
			if r2.PayloadDigest != r1.PayloadDigest || r2.StatusCode != r1.StatusCode || r2.MIME != r1.MIME {
				t.Fatalf("h2 %d %s %s, h1 %d %s %s", r2.StatusCode, r2.MIME, r2.PayloadDigest, r1.StatusCode, r1.MIME, r1.PayloadDigest)
			}
			p2 := readAll(t, r2.Payload)
			if !bytes.Equal(p2, readAll(t, r1.Payload)) || sha1Digest(p2) != r2.PayloadDigest {
				t.Fatalf("payloads differ or digest wrong (%d bytes over h2)", len(p2))
			}
			raw := readAll(t, r2.Raw)
			status := fmt.Sprintf("HTTP/1.1 %d %s\r\n", r2.StatusCode, http.StatusText(r2.StatusCode))
			if !strings.HasPrefix(string(raw), status) || !bytes.HasSuffix(raw, append([]byte("\r\n\r\n"), p2...)) {
				t.Fatalf("raw h2 response not in HTTP/1.1 form: %.200q", raw)
			}
			wantReq := "GET " + path + " HTTP/1.1\r\nhost: site.test:" + strings.Split(h2Site, ":")[2] + "\r\nuser-agent: "
			if !strings.HasPrefix(string(r2.RequestBytes), wantReq) || !strings.HasSuffix(string(r2.RequestBytes), "\r\n\r\n") {
				t.Fatalf("request %q, want prefix %q", r2.RequestBytes, wantReq)
			}
		})
	}
}

// HTTP/2 is only spoken when both sides want it: an h1-only server gets
// HTTP/1.x from an HTTP2 fetcher, and a fetcher with HTTP2 off never
// offers it.
func TestH2FallsBackToH1(t *testing.T) {
	cases := []struct {
		name      string
		serverH2  bool
		fetcherH2 bool
		keepAlive bool
		want      []string
	}{
		{"server without h2", false, true, false, []string{"http/1.0", "tls/1.3"}},
		{"server without h2, keep-alive", false, true, true, []string{"http/1.1", "tls/1.3"}},
		{"fetcher with http2 off", true, false, false, []string{"http/1.0", "tls/1.3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			site := tlsSite(t, tc.serverH2)
			f := newFetcher(t, Config{AllowPrivate: true, HTTP2: tc.fetcherH2, KeepAlive: tc.keepAlive})
			r := fetchOK(t, f, site+"/echo", nil)
			if !slices.Equal(r.Protocols, tc.want) {
				t.Fatalf("protocols %v, want %v", r.Protocols, tc.want)
			}
			if got := string(readAll(t, r.Payload)); !strings.Contains(got, "GET 0 HTTP/1.") {
				t.Fatalf("server saw %q", got)
			}
		})
	}
	// Plain http never negotiates anything.
	srv := httptest.NewServer(siteHandler(t))
	t.Cleanup(srv.Close)
	f := newFetcher(t, Config{AllowPrivate: true, HTTP2: true})
	r := fetchOK(t, f, strings.Replace(srv.URL, "127.0.0.1", "site.test", 1)+"/page", nil)
	if !slices.Equal(r.Protocols, []string{"http/1.0"}) {
		t.Fatalf("plain http protocols %v", r.Protocols)
	}
}

// POST (a body larger than HTTP/2's initial 64 KiB window, so flow
// control is exercised), HEAD, Referer, User-Agent and cookies work over
// HTTP/2 as over HTTP/1.1.
func TestH2MethodsAndCookies(t *testing.T) {
	site := tlsSite(t, true)
	f := newFetcher(t, Config{AllowPrivate: true, HTTP2: true})
	jar := newMapJar()
	body := bytes.Repeat([]byte("k=v&"), 50_000)
	resp, err := f.Fetch(context.Background(), Request{URL: site + "/echo", Method: http.MethodPost, Body: body,
		Referer: "https://site.test/from", Jar: jar})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Close() })
	want := fmt.Sprintf("POST %d HTTP/2.0 ua=trawler-test (+https://example.org/contact) ref=https://site.test/from", len(body))
	if got := string(readAll(t, resp.Payload)); got != want {
		t.Fatalf("server saw %q, want %q", got, want)
	}
	if !bytes.HasSuffix(resp.RequestBytes, body) || !bytes.Contains(resp.RequestBytes, []byte("\r\ncontent-type: application/x-www-form-urlencoded\r\n")) {
		t.Fatalf("recorded request lacks its body or content-type: %.300q", resp.RequestBytes)
	}
	if jar.value("site.test", "session") != "abc" {
		t.Fatal("Set-Cookie over HTTP/2 not given to the jar")
	}
	// The kept cookie goes back on the next request.
	again, err := f.Fetch(context.Background(), Request{URL: site + "/echo", Jar: jar})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = again.Close() })
	if !bytes.Contains(again.RequestBytes, []byte("\r\ncookie: session=abc\r\n")) {
		t.Fatalf("cookie not sent: %q", again.RequestBytes)
	}
	head, err := f.Fetch(context.Background(), Request{URL: site + "/page", Method: http.MethodHead})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = head.Close() })
	if head.StatusCode != 200 || head.Payload.Size() != 0 || head.Header.Get("Content-Type") == "" {
		t.Fatalf("HEAD gave %d, %d payload bytes, header %v", head.StatusCode, head.Payload.Size(), head.Header)
	}
}

// Content coding is recorded as served over HTTP/2 too: the payload is
// the gzip stream, not its decoding.
func TestH2KeepsContentCoding(t *testing.T) {
	site := tlsSite(t, true)
	f := newFetcher(t, Config{AllowPrivate: true, HTTP2: true})
	r := fetchOK(t, f, site+"/gz", nil)
	zr, err := gzip.NewReader(bytes.NewReader(readAll(t, r.Payload)))
	if err != nil {
		t.Fatalf("payload is not the gzip stream: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || string(plain) != strings.Repeat("compressed ", 1000) || r.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("decoded %d bytes, err %v, header %v", len(plain), err, r.Header)
	}
}

// A 401 with a Basic challenge is answered once over HTTP/2 as over
// HTTP/1.1.
func TestH2AnswersAuthChallenge(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "me" || p != "secret" {
			w.Header().Set("WWW-Authenticate", `Basic realm="vault"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = io.WriteString(w, "inside")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	f := newFetcher(t, Config{AllowPrivate: true, HTTP2: true,
		Credentials: []Credential{{Domain: "site.test:" + port, Realm: "vault", Login: "me", Password: "secret"}}})
	r := fetchOK(t, f, "https://site.test:"+port+"/", nil)
	if r.StatusCode != 200 || string(readAll(t, r.Payload)) != "inside" || r.Protocols[0] != ProtocolH2 {
		t.Fatalf("got %d %v", r.StatusCode, r.Protocols)
	}
	if !bytes.Contains(r.RequestBytes, []byte("\r\nauthorization: Basic ")) {
		t.Fatalf("request %q", r.RequestBytes)
	}
}

// The request is sent over HTTP/2 with the headers of the HTTP/1.1
// request in the same order, lower-cased, Host as :authority and no
// connection-specific header; the record keeps the HTTP/1.1 form.
func TestBuildH2Request(t *testing.T) {
	s := reqSpec{method: "GET", requestTarget: "/a?b=1", hostHeader: "site.test:8443", userAgent: "ua",
		header: http.Header{"X-Zeta": {"z"}, "Accept": {"text/plain"}}, referer: "https://site.test/", compression: true}
	r, err := buildH2Request(s, "https")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.fields {
		got = append(got, f.Name+"="+f.Value)
	}
	want := []string{":method=GET", ":scheme=https", ":authority=site.test:8443", ":path=/a?b=1",
		"user-agent=ua", "accept=text/plain", "x-zeta=z", "accept-encoding=gzip,deflate", "referer=https://site.test/"}
	if !slices.Equal(got, want) {
		t.Fatalf("fields\n%q\nwant\n%q", got, want)
	}
	wantText := "GET /a?b=1 HTTP/1.1\r\nhost: site.test:8443\r\nuser-agent: ua\r\naccept: text/plain\r\nx-zeta: z\r\n" +
		"accept-encoding: gzip,deflate\r\nreferer: https://site.test/\r\n\r\n"
	if string(r.text) != wantText {
		t.Fatalf("text %q", r.text)
	}
	if _, err := buildH2Request(reqSpec{method: "GET", requestTarget: "/", userAgent: "bad\r\nua"}, "https"); err == nil {
		t.Fatal("bad User-Agent accepted")
	}
}

// Through a CONNECT or SOCKS5 tunnel the TLS session is end to end, so
// HTTP/2 is negotiated with the site as on a direct connection.
func TestH2ThroughProxyTunnels(t *testing.T) {
	site := tlsSite(t, true)
	backend := strings.TrimPrefix(strings.Replace(site, "site.test", "127.0.0.1", 1), "https://")
	_, port, _ := net.SplitHostPort(backend)
	for _, kind := range []string{"http", "socks5"} {
		t.Run(kind, func(t *testing.T) {
			log := &proxyLog{}
			var px *rawServer
			if kind == "http" {
				px = httpProxy(t, backend, false, log)
			} else {
				px = socksServer(t, backend, "", "", false, log)
			}
			cfg := Config{Proxy: kind + "://127.0.0.1:" + px.port(), SpoolDir: t.TempDir(), UserAgent: "trawler-test", HTTP2: true}
			f := New(cfg, publicResolver)
			t.Cleanup(func() { _ = f.Close() })
			r, err := f.Fetch(context.Background(), Request{URL: "https://site.test:" + port + "/page"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Close() })
			if !slices.Equal(r.Protocols, []string{"h2", "tls/1.3"}) || r.StatusCode != 200 || len(log.all()) != 1 {
				t.Fatalf("protocols %v status %d proxy log %v", r.Protocols, r.StatusCode, log.all())
			}
		})
	}
}

// The address guard judges an h2 site as any other: loopback is refused
// unless allowed.
func TestH2GuardStillRefuses(t *testing.T) {
	site := tlsSite(t, true)
	f := newFetcher(t, Config{HTTP2: true})
	_, err := f.Fetch(context.Background(), Request{URL: site + "/page"})
	fe := fetchErr(t, err, StatusConnectFailed, false)
	if !errors.Is(fe, ErrAddressRefused) {
		t.Fatalf("error %v does not wrap ErrAddressRefused", fe)
	}
}
