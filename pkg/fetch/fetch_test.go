package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/pkg/spool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var testResolver = staticResolver{
	"site.test":       {"127.0.0.1"},
	"public.example":  {"10.0.0.5"},
	"mixed.example":   {"192.168.1.1", "127.0.0.1"},
	"mapped.example":  {"::ffff:127.0.0.1"},
	"metadata.google": {"169.254.169.254"},
}

func newFetcher(t *testing.T, cfg Config) *Fetcher {
	t.Helper()
	if cfg.SpoolDir == "" {
		cfg.SpoolDir = t.TempDir()
	}
	cfg.UserAgent = "trawler-test (+https://example.org/contact)"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	f := New(cfg, testResolver)
	t.Cleanup(func() { _ = f.Close() })
	return f
}

func fetchOK(t *testing.T, f *Fetcher, url string, h http.Header) *Response {
	t.Helper()
	resp, err := f.Fetch(context.Background(), Request{URL: url, Header: h})
	if err != nil {
		t.Fatalf("Fetch(%s): %v", url, err)
	}
	t.Cleanup(func() { _ = resp.Close() })
	return resp
}

func readAll(t *testing.T, b *spool.Buffer) []byte {
	t.Helper()
	p, err := io.ReadAll(b.NewReader())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func sha1Digest(p []byte) string {
	sum := sha1.Sum(p)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

func TestExactRequestBytes(t *testing.T) {
	srv := startServer(t, respond("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	f := newFetcher(t, Config{AllowPrivate: true})
	h := http.Header{
		"Accept-Language": {"en-GB"},
		"Host":            {"evil.example"}, // owned by the fetcher: dropped
		"User-Agent":      {"spoof"},        // idem
		"Connection":      {"keep-alive"},   // idem
		"X-Two":           {"a", "b"},
	}
	resp := fetchOK(t, f, "http://Site.Test:"+srv.port()+"/a%20b/c?q=1&r=%7E#frag", h)
	want := "GET /a%20b/c?q=1&r=%7E HTTP/1.0\r\n" +
		"Host: site.test:" + srv.port() + "\r\n" +
		"User-Agent: trawler-test (+https://example.org/contact)\r\n" +
		"Connection: close\r\n" +
		"Accept-Language: en-GB\r\n" +
		"X-Two: a\r\nX-Two: b\r\n" +
		"Accept: " + defaultAccept + "\r\n\r\n"
	if got := string(resp.RequestBytes); got != want {
		t.Fatalf("request bytes:\n%q\nwant\n%q", got, want)
	}
	if got := string(<-srv.requests); got != want {
		t.Fatalf("server received:\n%q\nwant\n%q", got, want)
	}
	if resp.IP.String() != "127.0.0.1" || resp.URL == "" || resp.Start.IsZero() || resp.Duration <= 0 {
		t.Fatalf("metadata: ip %v url %q start %v duration %v", resp.IP, resp.URL, resp.Start, resp.Duration)
	}
}

func TestRequestTargetAndHost(t *testing.T) {
	cases := []struct{ url, line, host string }{
		{"http://site.test", "GET / HTTP/1.0", "site.test"},
		{"http://site.test:80/x", "GET /x HTTP/1.0", "site.test"},
		{"https://site.test:443?q", "GET /?q HTTP/1.0", "site.test"},
		{"http://site.test/ünï", "GET /%C3%BCn%C3%AF HTTP/1.0", "site.test"},
		{"http://[::1]:8080/p", "GET /p HTTP/1.0", "[::1]:8080"},
		{"http://[::1]/p", "GET /p HTTP/1.0", "[::1]"},
	}
	for _, tc := range cases {
		tg, err := parseTarget(tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		b, err := buildRequest(reqSpec{method: "GET", requestTarget: tg.requestURI, hostHeader: tg.hostHeader, userAgent: "ua"})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\r\n")
		if lines[0] != tc.line || lines[1] != "Host: "+tc.host {
			t.Errorf("%s: got %q / %q, want %q / Host: %s", tc.url, lines[0], lines[1], tc.line, tc.host)
		}
	}
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func chunk(p []byte) string { return fmt.Sprintf("%x\r\n%s\r\n", len(p), p) }

func TestRawResponseFidelity(t *testing.T) {
	gz := gzipped(t, strings.Repeat("<p>hello archive</p>\n", 50))
	cases := []struct {
		name    string
		resp    string
		payload []byte
		status  int
		mime    string
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\nContent-Length: 5\r\n\r\nhello",
			[]byte("hello"), 200, "text/html"},
		{"chunked with extension and trailer",
			"HTTP/1.1 200 OK\r\nContent-Type: Text/Plain\r\nTransfer-Encoding: chunked\r\n\r\n" +
				"5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nX-Trailer: yes\r\n\r\n",
			[]byte("hello, world"), 200, "text/plain"},
		{"chunked gzip stays gzip",
			"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" +
				chunk(gz[:10]) + chunk(gz[10:]) + "0\r\n\r\n",
			gz, 200, "text/html"},
		{"http/1.0 read to close", "HTTP/1.0 404 Not Found\r\nServer: old\r\n\r\nno length here",
			[]byte("no length here"), 404, "unknown"},
		{"no content", "HTTP/1.1 204 No Content\r\nContent-Type: ;\r\n\r\n", nil, 204, "unknown"},
		{"interim 100 kept in raw", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 301 Moved\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n",
			nil, 301, "unknown"},
		{"bare LF line endings", "HTTP/1.0 200 OK\nContent-Type: image/gif\n\nGIF89a",
			[]byte("GIF89a"), 200, "image/gif"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, respond(tc.resp))
			f := newFetcher(t, Config{AllowPrivate: true, SpoolThreshold: 16})
			resp := fetchOK(t, f, "http://site.test:"+srv.port()+"/", nil)
			raw := readAll(t, resp.Raw)
			if string(raw) != tc.resp {
				t.Fatalf("raw:\n%q\nwant\n%q", raw, tc.resp)
			}
			if p := readAll(t, resp.Payload); !bytes.Equal(p, tc.payload) {
				t.Fatalf("payload %q, want %q", p, tc.payload)
			}
			if resp.StatusCode != tc.status || resp.MIME != tc.mime {
				t.Fatalf("status %d mime %q, want %d %q", resp.StatusCode, resp.MIME, tc.status, tc.mime)
			}
			if resp.PayloadDigest != sha1Digest(tc.payload) {
				t.Fatalf("payload digest %s", resp.PayloadDigest)
			}
			if len(resp.Annotations) != 0 {
				t.Fatalf("annotations %v", resp.Annotations)
			}
		})
	}
}

func TestSurplusBytesDropped(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
	srv := startServer(t, respond(head+"helloEXTRA-JUNK"))
	f := newFetcher(t, Config{AllowPrivate: true})
	resp := fetchOK(t, f, "http://site.test:"+srv.port()+"/", nil)
	raw := readAll(t, resp.Raw)
	if string(raw) != head+"hello" {
		t.Fatalf("raw %q", raw)
	}
}

func TestSpoolsLargeResponses(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	head := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(body))
	srv := startServer(t, respond(head+string(body)))
	dir := t.TempDir()
	f := newFetcher(t, Config{AllowPrivate: true, SpoolThreshold: 4096, SpoolDir: dir})
	resp, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/big"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Raw.InMemory() || resp.Payload.InMemory() {
		t.Fatal("1 MiB response stayed in memory with a 4 KiB threshold")
	}
	if got := readAll(t, resp.Payload); !bytes.Equal(got, body) {
		t.Fatal("payload differs")
	}
	if got := readAll(t, resp.Raw); string(got) != head+string(body) {
		t.Fatal("raw differs")
	}
	if resp.PayloadDigest != sha1Digest(body) {
		t.Fatal("digest mismatch")
	}
	if err := resp.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("spool files left after Close: %v", left)
	}
}

func TestLengthTruncation(t *testing.T) {
	full := "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + strings.Repeat("x", 1000)
	for _, name := range []string{"content-length", "chunked"} {
		t.Run(name, func(t *testing.T) {
			resp := full
			if name == "chunked" {
				resp = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.Repeat(chunk([]byte("abcdefghij")), 100) + "0\r\n\r\n"
			}
			srv := startServer(t, respond(resp))
			f := newFetcher(t, Config{AllowPrivate: true, MaxLengthBytes: 100})
			r := fetchOK(t, f, "http://site.test:"+srv.port()+"/", nil)
			raw := readAll(t, r.Raw)
			if string(raw) != resp[:100] {
				t.Fatalf("raw %q, want first 100 bytes", raw)
			}
			if len(r.Annotations) != 1 || r.Annotations[0] != AnnotationLenTrunc {
				t.Fatalf("annotations %v", r.Annotations)
			}
			if r.PayloadDigest != sha1Digest(readAll(t, r.Payload)) {
				t.Fatal("digests do not cover the truncated data")
			}
		})
	}
	t.Run("headers longer than limit", func(t *testing.T) {
		srv := startServer(t, respond("HTTP/1.1 200 OK\r\nX-Long: "+strings.Repeat("y", 200)+"\r\n\r\n"))
		f := newFetcher(t, Config{AllowPrivate: true, MaxLengthBytes: 100})
		_, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/"})
		fetchErr(t, err, StatusConnectionBroken, false)
	})
}

func TestEndlessHeadersBounded(t *testing.T) {
	srv := startServer(t, func(ss *session) {
		if _, err := ss.readRequest(); err != nil {
			return
		}
		if ss.write([]byte("HTTP/1.1 200 OK\r\n")) != nil {
			return
		}
		line := []byte("X-Junk: " + strings.Repeat("z", 1000) + "\r\n")
		for i := 0; i < 3000; i++ { // 3 MB of headers, no end
			if ss.write(line) != nil {
				return
			}
		}
	})
	f := newFetcher(t, Config{AllowPrivate: true})
	_, err := f.Fetch(context.Background(), Request{URL: "http://site.test:" + srv.port() + "/"})
	fe := fetchErr(t, err, StatusConnectionBroken, false)
	if !strings.Contains(fe.Error(), "headers") {
		t.Fatalf("error %v does not explain itself", fe)
	}
}
