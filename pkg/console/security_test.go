package console

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/admin"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// pages are every page a session can GET.
var pages = []string{"", "hosts", "host?h=a.test", "url", "control", "ack?id=x", "launches", "log", "live.json", "ack.json?id=x"}

// Without a session no page shows and nothing is done: pages redirect to
// the login (keeping where they were going), JSON answers 401, and every
// POST 401; a wrong or expired session cookie is no session.
func TestNoSessionNoPage(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	for _, cookie := range []string{"", "forged-session-id"} {
		cl := h.client()
		if cookie != "" {
			u, _ := url.Parse(h.srv.URL + Prefix)
			cl.Jar.SetCookies(u, []*http.Cookie{{Name: cookieName, Value: cookie, Path: Prefix}})
		}
		for _, p := range pages {
			code, body, resp := h.do(cl, "GET", Prefix+p, nil)
			if strings.HasSuffix(strings.SplitN(p, "?", 2)[0], ".json") {
				if code != http.StatusUnauthorized {
					t.Errorf("GET %s with cookie %q: %d, want 401", p, cookie, code)
				}
				continue
			}
			loc := resp.Header.Get("Location")
			if code != http.StatusSeeOther || !strings.HasPrefix(loc, Prefix+"login?next=") {
				t.Errorf("GET %s with cookie %q: %d %q, want a redirect to the login; %s", p, cookie, code, loc, body)
			}
		}
		for _, p := range []string{"control", "logout"} {
			if code, _, _ := h.do(cl, "POST", Prefix+p, url.Values{"command": {"pause"}}); code != http.StatusUnauthorized {
				t.Errorf("POST %s with cookie %q: %d, want 401", p, cookie, code)
			}
		}
	}

	// A session expires after its time.
	cl := h.client()
	h.login(cl, operatorToken)
	if code, _, _ := h.do(cl, "GET", Prefix, nil); code != http.StatusOK {
		t.Fatalf("overview in session: %d", code)
	}
	h.clock.Add((12*time.Hour + time.Second).Milliseconds())
	if code, _, _ := h.do(cl, "GET", Prefix, nil); code != http.StatusSeeOther {
		t.Fatalf("overview after the session expired: %d, want a redirect to the login", code)
	}
}

// The login takes either token, refuses another with 401 and a message,
// needs its own CSRF token, and sets an HttpOnly, SameSite=Strict session
// cookie, Secure over TLS only; logging out ends the session.
func TestLogin(t *testing.T) {
	for _, tls := range []bool{false, true} {
		h := newHarness(t, harnessOptions{tls: tls})
		cl := h.client()
		_, page, _ := h.do(cl, "GET", Prefix+"login", nil)
		csrf := h.csrfOf(page)
		if code, body, _ := h.do(cl, "POST", Prefix+"login", url.Values{"csrf": {csrf}, "token": {"wrong"}}); code != http.StatusUnauthorized ||
			!strings.Contains(body, "neither the operator") {
			t.Fatalf("wrong token: %d %s", code, body)
		}
		// The failed login set a new login token; the old one is spent.
		if code, _, _ := h.do(cl, "POST", Prefix+"login", url.Values{"csrf": {csrf}, "token": {operatorToken}}); code != http.StatusForbidden {
			t.Fatalf("login with a spent CSRF token: %d, want 403", code)
		}
		if code, _, _ := h.do(h.client(), "POST", Prefix+"login", url.Values{"token": {operatorToken}}); code != http.StatusForbidden {
			t.Fatalf("login without CSRF token: %d, want 403", code)
		}
		_, page, _ = h.do(cl, "GET", Prefix+"login", nil)
		code, _, resp := h.do(cl, "POST", Prefix+"login", url.Values{"csrf": {h.csrfOf(page)}, "token": {operatorToken},
			"next": {"//evil.example/"}})
		if code != http.StatusSeeOther || resp.Header.Get("Location") != Prefix {
			t.Fatalf("login with an outside next: %d %q, want %s", code, resp.Header.Get("Location"), Prefix)
		}
		var sc *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == cookieName {
				sc = c
			}
		}
		if sc == nil || !sc.HttpOnly || sc.SameSite != http.SameSiteStrictMode || sc.Secure != tls || sc.Path != Prefix {
			t.Fatalf("tls=%v session cookie: %+v", tls, sc)
		}
		_, page, _ = h.do(cl, "GET", Prefix, nil)
		if code, _, _ := h.do(cl, "POST", Prefix+"logout", url.Values{"csrf": {h.csrfOf(page)}}); code != http.StatusSeeOther {
			t.Fatalf("logout: %d", code)
		}
		if code, _, _ := h.do(cl, "GET", Prefix, nil); code != http.StatusSeeOther {
			t.Fatalf("overview after logout: %d, want a redirect to the login", code)
		}
	}
}

// Every POST needs the session's CSRF token: none, a wrong one, or
// another session's is refused 403 and nothing is sent; the read-only
// session sees every page but cannot act (403), and its pages offer no
// action forms.
func TestCSRFAndReadOnly(t *testing.T) {
	sent := 0
	h := newHarness(t, harnessOptions{deps: func(d *Deps) {
		d.API.Send = func(_ context.Context, _ messages.Control) (string, error) { sent++; return "id1", nil }
	}})
	op, ro := h.client(), h.client()
	opCSRF, roCSRF := h.login(op, operatorToken), h.login(ro, readToken)
	pause := url.Values{"command": {"pause"}}
	for _, tt := range []struct {
		name string
		cl   *http.Client
		csrf string
		want int
	}{
		{"operator without CSRF", op, "", http.StatusForbidden},
		{"operator with a wrong CSRF", op, "x" + opCSRF, http.StatusForbidden},
		{"operator with the read-only session's CSRF", op, roCSRF, http.StatusForbidden},
		{"read-only with its CSRF", ro, roCSRF, http.StatusForbidden},
		{"read-only without CSRF", ro, "", http.StatusForbidden},
	} {
		form := url.Values{"command": pause["command"]}
		if tt.csrf != "" {
			form.Set("csrf", tt.csrf)
		}
		code, body, _ := h.do(tt.cl, "POST", Prefix+"control", form)
		if code != tt.want {
			t.Errorf("%s: %d, want %d: %s", tt.name, code, tt.want, body)
		}
	}
	if sent != 0 {
		t.Fatalf("%d commands sent by refused POSTs", sent)
	}
	for _, p := range pages {
		code, body, _ := h.do(ro, "GET", Prefix+p, nil)
		if code != http.StatusOK {
			t.Errorf("read-only GET %s: %d %s", p, code, body)
		}
		if strings.Contains(body, `action="/console/control"`) {
			t.Errorf("read-only GET %s offers a control form", p)
		}
	}
	code, body, resp := h.do(op, "POST", Prefix+"control", url.Values{"csrf": {opCSRF}, "command": {"pause"}})
	if code != http.StatusSeeOther || sent != 1 || resp.Header.Get("Location") != Prefix+"ack?id=id1" {
		t.Fatalf("operator pause: %d %q sent %d: %s", code, resp.Header.Get("Location"), sent, body)
	}
}

// Every answer carries a Content-Security-Policy without inline script,
// and no page holds an inline script or event handler attribute.
func TestSecurityHeadersAndNoInlineScript(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	cl := h.client()
	h.login(cl, operatorToken)
	inline := regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]|<script>|\son[a-z]+\s*=|javascript:`)
	for _, p := range append(pages, "login", "nothing-here", "static/console.js") {
		code, body, resp := h.do(cl, "GET", Prefix+p, nil)
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s (%d): CSP %q", p, code, csp)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no nosniff", p)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") && inline.MatchString(body) {
			t.Errorf("GET %s: inline script: %q", p, inline.FindString(body))
		}
	}
}

// Logins past maxSessions end the session closest to expiry, not the
// newest: memory stays bounded and the operator who just logged in is in.
func TestSessionsBounded(t *testing.T) {
	now := time.Unix(0, 0)
	ss := newSessions(time.Hour, func() time.Time { return now })
	first, _ := ss.open(admin.ReadAccess)
	for range maxSessions {
		now = now.Add(time.Second)
		ss.open(admin.ReadAccess)
	}
	last, _ := ss.open(admin.OperatorAccess)
	if len(ss.byID) != maxSessions || ss.get(first) != nil || ss.get(last) == nil {
		t.Fatalf("%d sessions; first kept %v, last kept %v", len(ss.byID), ss.get(first) != nil, ss.get(last) != nil)
	}
}
