package fetch

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
)

// RefererFor follows Heritrix's FetchHTTPRequest: the via, except without
// one, from a non-HTTP via, or from https to http.
func TestRefererFor(t *testing.T) {
	cases := []struct{ via, uri, want string }{
		{"", "http://a.test/", ""},
		{"http://a.test/page", "http://a.test/x", "http://a.test/page"},
		{"http://a.test/page", "https://a.test/x", "http://a.test/page"},
		{"https://a.test/page", "https://b.test/x", "https://a.test/page"},
		{"https://a.test/page", "http://a.test/x", ""},
		{"HTTPS://a.test/page", "HTTP://a.test/x", ""},
		{"dns:a.test", "http://a.test/", ""},
		{"a.test/page", "http://a.test/", ""},
	}
	for _, tc := range cases {
		if got := RefererFor(tc.via, tc.uri); got != tc.want {
			t.Errorf("RefererFor(%q, %q) = %q, want %q", tc.via, tc.uri, got, tc.want)
		}
	}
}

// Referer and Accept-Encoding are written as Heritrix writes them, only
// when asked for; a caller's Accept-Encoding header is dropped (the
// fetcher owns it), a caller's Referer wins over Request.Referer, and a
// Referer that is no valid header value is left out.
func TestRequestHeadersRefererAndCompression(t *testing.T) {
	cases := []struct {
		name              string
		referer           string
		compression       bool
		header            http.Header
		want, notWant     []string
		wantErrContaining string
	}{
		{name: "defaults send neither", notWant: []string{"Referer:", "Accept-Encoding:"}},
		{name: "referer", referer: "http://a.test/from", want: []string{"Referer: http://a.test/from\r\n"}},
		{name: "compression", compression: true, want: []string{"Accept-Encoding: gzip,deflate\r\n"}},
		{name: "caller accept-encoding dropped", header: http.Header{"Accept-Encoding": {"br"}},
			notWant: []string{"Accept-Encoding:"}},
		{name: "caller referer wins", referer: "http://a.test/from", header: http.Header{"Referer": {"http://b.test/"}},
			want: []string{"Referer: http://b.test/\r\n"}, notWant: []string{"Referer: http://a.test/from"}},
		{name: "bad referer dropped, request kept", referer: "http://a.test/\r\nX: y", notWant: []string{"Referer:", "X: y"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := buildRequest(reqSpec{method: "GET", requestTarget: "/", hostHeader: "a.test", userAgent: "ua",
				header: tc.header, referer: tc.referer, compression: tc.compression})
			if tc.wantErrContaining != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrContaining) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErrContaining)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !bytes.Contains(b, []byte(w)) {
					t.Errorf("request %q lacks %q", b, w)
				}
			}
			for _, w := range tc.notWant {
				if bytes.Contains(b, []byte(w)) {
					t.Errorf("request %q has %q", b, w)
				}
			}
		})
	}
}

// With acceptCompression the server's gzip entity is recorded as served:
// the raw response holds the gzip bytes, the payload is the gzip entity
// and its digest is over those bytes (WARC 1.1 section 5.9: the payload is
// the entity body after transfer decoding only).
func TestAcceptCompressionRecordsEncodedEntity(t *testing.T) {
	gz := gzipped(t, strings.Repeat("<p>compressed page</p>\n", 40))
	raw := "HTTP/1.0 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n" + string(gz)
	srv := startServer(t, respond(raw))
	f := newFetcher(t, Config{AllowPrivate: true})
	resp, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/", AcceptCompression: true,
		Referer: "http://site.test:" + srv.port() + "/from"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = resp.Close() })
	sent := string(<-srv.requests)
	if !strings.Contains(sent, "\r\nAccept-Encoding: gzip,deflate\r\n") || !strings.Contains(sent, "\r\nReferer: http://site.test:"+srv.port()+"/from\r\n") {
		t.Fatalf("request sent: %q", sent)
	}
	if string(resp.RequestBytes) != sent {
		t.Fatalf("recorded request %q differs from the bytes sent %q", resp.RequestBytes, sent)
	}
	if got := readAll(t, resp.Raw); string(got) != raw {
		t.Fatalf("raw response is not the bytes served (%d vs %d bytes)", len(got), len(raw))
	}
	if got := readAll(t, resp.Payload); !bytes.Equal(got, gz) {
		t.Fatalf("payload is not the gzip entity (%d vs %d bytes)", len(got), len(gz))
	}
	if resp.PayloadDigest != sha1Digest(gz) {
		t.Fatalf("payload digest %s, want the gzip entity's %s", resp.PayloadDigest, sha1Digest(gz))
	}
}
