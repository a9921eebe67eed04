package replay

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/mitm"
	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// countingListener counts the connections made to a live server whose
// URLs are also in the archive: the archive's proxy must never make one.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// liveSite serves every path on a loopback port, counting connections.
func liveSite(t *testing.T) (string, *countingListener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "live web: must never be reached")
	})}
	go func() { _ = srv.Serve(cl) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String(), cl
}

// proxyArchive writes captures of origin's pages (one chunked, one
// redirect, robots.txt disallowing /private/) and of an https page, and
// indexes them.
func proxyArchive(t *testing.T, origin string) (dir string, lines []cdx.Line) {
	t.Helper()
	dir = t.TempDir()
	w, err := warcwriter.New(warcwriter.Config{Dir: dir, Prefix: "QA", Name: "QA-0.warc.gz", Hostname: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, c := range []struct {
		url, status, body string
		header            []string
		raw               string
	}{
		{url: origin + "/", status: "200 OK", body: "<p>home</p>", header: []string{"Content-Type: text/html"}},
		{url: origin + "/robots.txt", status: "200 OK", body: "User-agent: *\nDisallow: /private/\n", header: []string{"Content-Type: text/plain"}},
		{url: origin + "/old", status: "301 Moved Permanently", body: "", header: []string{"Location: /"}},
		{url: origin + "/chunked", raw: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"},
		{url: "https://secure.test/", status: "200 OK", body: "secure page", header: []string{"Content-Type: text/html"}},
		{url: origin + "/big.bin", status: "200 OK", body: bigBody[:50_000], header: []string{"Content-Type: application/octet-stream"}},
	} {
		resp := []byte(c.raw)
		if c.raw == "" {
			resp = httpResponse(c.status, c.body, c.header...)
		}
		if _, err := w.WriteCapture(ctx, warcwriter.Capture{URL: c.url, Date: at(i), Request: []byte("GET / HTTP/1.1\r\n\r\n"),
			Response: strings.NewReader(string(resp)), ResponseLength: int64(len(resp)), PayloadDigest: "sha1:" + sha1Digest([]byte(c.body))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := warcindex.IndexFile(ctx, filepath.Join(dir, "QA-0.warc.gz"), func(l cdx.Line) error {
		lines = append(lines, l)
		return nil
	}, func(e *warcindex.RecordError) { t.Errorf("index: %v", e) }); err != nil {
		t.Fatal(err)
	}
	return dir, lines
}

// startProxy serves p as the browser's proxy (HTTPS intercepted with ca)
// and returns a client that sends everything through it.
func startProxy(t *testing.T, p *Proxy) *http.Client {
	t.Helper()
	ca, err := mitm.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mitm.NewServer(mitm.Config{CA: ca, Handler: p})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	pu, _ := url.Parse("http://" + ln.Addr().String())
	tr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Every request is answered from the archive or marked as what the archive
// lacks, over plain HTTP and HTTPS alike, and the live server behind the
// archived URLs gets no connection.
func TestProxyAnswersFromTheArchiveOnly(t *testing.T) {
	origin, live := liveSite(t)
	dir, lines := proxyArchive(t, origin)
	// A line pointing at a file no directory has, and one at an offset
	// that is not a record.
	lines = append(lines,
		cdx.Line{URLKey: "x", Timestamp: ts(0), Original: origin + "/lost-file", Mimetype: "text/html", Status: "200", Digest: "D", Length: 100, Offset: 0, Filename: "NOWHERE.warc.gz"},
		cdx.Line{URLKey: "x", Timestamp: ts(0), Original: origin + "/bad-offset", Mimetype: "text/html", Status: "200", Digest: "D", Length: 100, Offset: 7, Filename: "QA-0.warc.gz"})
	lines = canonical(t, lines)
	r, err := New(Options{Index: indexOf(t, lines), Records: NewDirs(dir)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProxy(ProxyOptions{Resolver: r, Timestamp: ts(0), UserAgent: "trawler"})
	if err != nil {
		t.Fatal(err)
	}
	client := startProxy(t, p)
	tests := []struct {
		url     string
		status  int
		body    string
		outcome Outcome
	}{
		{origin + "/", 200, "<p>home</p>", Answered},
		{origin + "/old", 301, "", Answered},
		{origin + "/chunked", 200, "hello world", Answered},
		{"https://secure.test/", 200, "secure page", Answered},
		{origin + "/never-fetched.js", 404, "not in the archive (missing)\n", Missing},
		{origin + "/private/x.png", 404, "not in the archive (robots)\n", Robots},
		{"http://other.test/a.css", 404, "not in the archive (offsite)\n", Offsite},
		{"https://secure.test/missing", 404, "not in the archive (missing)\n", Missing},
		{origin + "/lost-file", 502, "", Broken},
		{origin + "/bad-offset", 502, "", Broken},
	}
	for _, tc := range tests {
		resp, err := client.Get(tc.url)
		if err != nil {
			t.Fatalf("GET %s: %v", tc.url, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("GET %s: status %d, want %d (%s)", tc.url, resp.StatusCode, tc.status, b)
		}
		if tc.body != "" && string(b) != tc.body {
			t.Errorf("GET %s: body %q, want %q", tc.url, b, tc.body)
		}
	}
	got := p.Exchanges()
	if len(got) != len(tests) {
		t.Fatalf("%d exchanges recorded, want %d: %+v", len(got), len(tests), got)
	}
	for i, tc := range tests {
		if got[i].URL != tc.url || got[i].Outcome != tc.outcome {
			t.Errorf("exchange %d: %s %s, want %s %s", i, got[i].URL, got[i].Outcome, tc.url, tc.outcome)
		}
		if tc.outcome == Broken && got[i].Error == "" {
			t.Errorf("exchange %d (%s): broken without a reason", i, tc.url)
		}
	}
	if n := live.n.Load(); n != 0 {
		t.Errorf("the live server behind the archived URLs got %d connections, want 0", n)
	}
}

// A record cut short, in its header or in its payload, is Broken, not
// answered with part of its body.
func TestProxyTruncatedRecordIsBroken(t *testing.T) {
	origin, _ := liveSite(t)
	dir, lines := proxyArchive(t, origin)
	for _, path := range []string{"/", "/big.bin"} {
		t.Run(path, func(t *testing.T) {
			var rec cdx.Line
			for _, l := range lines {
				if l.Original == origin+path {
					rec = l
				}
			}
			// Keep the file up to the middle of the record.
			cut := t.TempDir()
			copyFile(t, filepath.Join(dir, rec.Filename), cut, rec.Filename, int(rec.Offset+rec.Length/2))
			r, err := New(Options{Index: indexOf(t, canonical(t, lines)), Records: NewDirs(cut)})
			if err != nil {
				t.Fatal(err)
			}
			p, err := NewProxy(ProxyOptions{Resolver: r, Timestamp: ts(0)})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := startProxy(t, p).Get(origin + path)
			if err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusBadGateway {
					t.Errorf("truncated record answered %d, want 502", resp.StatusCode)
				}
			}
			ex := p.Exchanges()
			if len(ex) != 1 || ex[0].Outcome != Broken || !strings.Contains(ex[0].Error, "truncated") {
				t.Errorf("exchanges %+v: want one broken with the truncation named", ex)
			}
		})
	}
}

// canonical gives hand-made lines the index's key for their URL.
func canonical(t *testing.T, lines []cdx.Line) []cdx.Line {
	t.Helper()
	for i := range lines {
		k, err := surt.CDXKey(lines[i].Original)
		if err != nil {
			t.Fatal(err)
		}
		lines[i].URLKey = k
	}
	return lines
}

func TestNewProxyRejectsBadOptions(t *testing.T) {
	if _, err := NewProxy(ProxyOptions{Timestamp: ts(0)}); err == nil {
		t.Error("no resolver: want an error")
	}
	r, err := New(Options{Index: indexOf(t, nil), Records: NewDirs(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewProxy(ProxyOptions{Resolver: r, Timestamp: "2025x"}); err == nil || !strings.Contains(err.Error(), "2025x") {
		t.Errorf("bad timestamp: err %v, want one naming it", err)
	}
}
