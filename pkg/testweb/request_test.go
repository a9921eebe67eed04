package testweb

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

func TestBadRequests(t *testing.T) {
	srv := startSite(t, smallSite(13))
	client := newClient(t, srv)
	s := srv.site
	other := 0
	if s.trapHost == 0 {
		other = 1
	}
	page5 := s.pagePath(0, 5)
	wrongSection := "/sec2/page5.html"
	if page5 == wrongSection {
		wrongSection = "/sec1/page5.html"
	}
	cases := []struct {
		name, method string
		host         int
		path         string
		hostHeader   string
		want         int
	}{
		{"post", http.MethodPost, 0, "/", "", http.StatusMethodNotAllowed},
		{"delete", http.MethodDelete, 0, page5, "", http.StatusMethodNotAllowed},
		{"wrong Host header", http.MethodGet, 0, "/", "site2.test", http.StatusMisdirectedRequest},
		{"Host header with trailing dot", http.MethodGet, 0, "/", s.HostName(0) + ".", http.StatusOK},
		{"page in the wrong section", http.MethodGet, 0, wrongSection, "", http.StatusNotFound},
		{"leading zeros", http.MethodGet, 0, "/sec1/page01.html", "", http.StatusNotFound},
		{"page beyond the site", http.MethodGet, 0, "/sec1/page6001.html", "", http.StatusNotFound},
		{"negative page", http.MethodGet, 0, "/sec1/page-1.html", "", http.StatusNotFound},
		{"image beyond range", http.MethodGet, 0, "/img/999.png", "", http.StatusNotFound},
		{"image with sign", http.MethodGet, 0, "/img/+1.png", "", http.StatusNotFound},
		{"private doc beyond range", http.MethodGet, 0, "/private/doc4.html", "", http.StatusNotFound},
		{"unknown redirect", http.MethodGet, 0, "/r/nowhere", "", http.StatusNotFound},
		{"month 13", http.MethodGet, s.trapHost, "/calendar/2024/13", "", http.StatusNotFound},
		{"short month", http.MethodGet, s.trapHost, "/calendar/2024/1", "", http.StatusNotFound},
		{"year out of range", http.MethodGet, s.trapHost, "/calendar/0999/12", "", http.StatusNotFound},
		{"calendar trailing junk", http.MethodGet, s.trapHost, "/calendar/2024/01x", "", http.StatusNotFound},
		{"calendar far future", http.MethodGet, s.trapHost, "/calendar/9999/12", "", http.StatusOK},
		{"calendar on another host", http.MethodGet, other, pathCalendar, "", http.StatusNotFound},
		{"query is ignored", http.MethodGet, 0, page5 + "?x=1", "", http.StatusOK},
		{"head", http.MethodHead, 0, pathLarge, "", http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := target{c.host, ""}.url(srv.authority) + c.path
			req, err := http.NewRequest(c.method, u, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.hostHeader != "" {
				req.Host = c.hostHeader
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", c.method, u, err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("%s %s: status %d, want %d", c.method, u, resp.StatusCode, c.want)
			}
			if c.method == http.MethodHead && (len(body) != 0 || resp.ContentLength != s.cfg.LargeFileBytes) {
				t.Errorf("HEAD: %d body bytes, Content-Length %d", len(body), resp.ContentLength)
			}
		})
	}
}

func TestRelPath(t *testing.T) {
	cases := []struct{ base, target, want string }{
		{"/", "/", "./"},
		{"/", "/a.html", "a.html"},
		{"/sec1/", "/", "../"},
		{"/sec1/", "/sec1/page3.html", "page3.html"},
		{"/sec1/", "/sec2/archive/page9.html", "../sec2/archive/page9.html"},
		{"/sec1/archive/", "/sec1/page2.html", "../page2.html"},
		{"/sec1/archive/", "/sec1/archive/", "./"},
		{"/private/", "/private/doc1.html?x=1", "doc1.html?x=1"},
		{"/a/b/c/", "/x/", "../../../x/"},
	}
	for _, c := range cases {
		got := relPath(c.base, c.target)
		if got != c.want {
			t.Errorf("relPath(%q, %q) = %q, want %q", c.base, c.target, got, c.want)
		}
		base, _ := url.Parse("http://h" + c.base + "doc.html")
		ref, err := url.Parse(got)
		if err != nil {
			t.Fatalf("relPath gave unparsable %q", got)
		}
		if r := base.ResolveReference(ref); r.RequestURI() != c.target {
			t.Errorf("relPath(%q, %q) = %q resolves to %q", c.base, c.target, got, r.RequestURI())
		}
	}
}

func TestHTTP10WithoutHostHeader(t *testing.T) {
	srv := startSite(t, smallSite(14))
	s := srv.site
	chunkedPage := ""
	for idx := range s.linked {
		p := s.pagePath(0, idx)
		if s.hashOf(0, pathKey(p), saltChunked)%3 == 0 {
			chunkedPage = p
			break
		}
	}
	if chunkedPage == "" {
		t.Fatal("no chunked page on host 0")
	}
	conn, err := srv.Resolver().DialContext(context.Background(), "tcp", srv.authority(0))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, "GET "+chunkedPage+" HTTP/1.0\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(conn) // HTTP/1.0: the server closes after the body
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("parse response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("body: %v", err)
	}
	if resp.StatusCode != http.StatusOK || len(resp.TransferEncoding) != 0 || !bytes.HasSuffix(body, []byte("</html>\n")) {
		t.Errorf("HTTP/1.0 GET %s: status %d, transfer encoding %v, %d body bytes", chunkedPage, resp.StatusCode, resp.TransferEncoding, len(body))
	}
}
