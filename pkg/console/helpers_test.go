package console

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/admin/api"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/frontier"
)

const (
	operatorToken = "op-token-for-tests"
	readToken     = "ro-token-for-tests"
)

// harness is a console served over HTTP on a real Redis and frontier.
type harness struct {
	t      *testing.T
	srv    *httptest.Server
	c      *Console
	f      *frontier.Frontier
	clock  *atomic.Int64 // unix ms
	logDir string
}

type harnessOptions struct {
	tls  bool
	deps func(*Deps) // adjusts the deps before New
	cfg  Config
}

func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	rdb := embeddedtest.Redis(t)
	f, err := frontier.New(rdb, "fc-npld", frontier.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, f: f, clock: &atomic.Int64{}, logDir: t.TempDir()}
	h.clock.Store(time.Now().UnixMilli())
	d := Deps{API: api.Deps{Crawl: "fc", Frontier: f}, Redis: rdb,
		Tokens: admin.Tokens{Operator: admin.StaticToken(operatorToken), ReadOnly: admin.StaticToken(readToken)},
		Files:  Files{DataDir: h.logDir, LogDir: h.logDir, ReportsDir: t.TempDir()},
		Now:    func() time.Time { return time.UnixMilli(h.clock.Load()) }}
	if o.deps != nil {
		o.deps(&d)
	}
	c, err := New(o.cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	mux := http.NewServeMux()
	mux.Handle(Prefix, c)
	if o.tls {
		h.srv = httptest.NewTLSServer(mux)
	} else {
		h.srv = httptest.NewServer(mux)
	}
	t.Cleanup(h.srv.Close)
	return h
}

// client is a browser-like client: a cookie jar, no redirect following
// (the tests look at each answer).
func (h *harness) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	cl := h.srv.Client()
	return &http.Client{Transport: cl.Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var hiddenCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// do sends a request and returns status, body and response.
func (h *harness) do(cl *http.Client, method, path string, form url.Values) (int, string, *http.Response) {
	h.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(context.Background(), method, h.srv.URL+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := cl.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp
}

// csrfOf finds the CSRF token in a page.
func (h *harness) csrfOf(page string) string {
	h.t.Helper()
	m := hiddenCSRF.FindStringSubmatch(page)
	if m == nil {
		h.t.Fatalf("no CSRF field in %s", page)
	}
	return m[1]
}

// login logs cl in with token and returns a page's CSRF token.
func (h *harness) login(cl *http.Client, token string) string {
	h.t.Helper()
	_, page, _ := h.do(cl, "GET", Prefix+"login", nil)
	code, body, resp := h.do(cl, "POST", Prefix+"login", url.Values{"csrf": {h.csrfOf(page)}, "token": {token}, "next": {Prefix}})
	if code != http.StatusSeeOther || resp.Header.Get("Location") != Prefix {
		h.t.Fatalf("login: %d %s %s", code, resp.Header.Get("Location"), body)
	}
	_, page, _ = h.do(cl, "GET", Prefix+"control", nil)
	return h.csrfOf(page)
}
