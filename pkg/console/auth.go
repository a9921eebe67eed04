package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/admin"
)

// pageFunc serves a page to a session.
type pageFunc func(w http.ResponseWriter, r *http.Request, s *session)

// maxFormBytes bounds a form: seed lists are the long ones.
const maxFormBytes = 4 << 20

// session returns the request's live session, or nil.
func (c *Console) session(r *http.Request) *session {
	ck, err := r.Cookie(cookieName)
	if err != nil {
		return nil
	}
	return c.sessions.get(ck.Value)
}

// read serves f to any session; without one, a page redirects to the
// login and anything else (live.json) answers 401.
func (c *Console) read(f pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := c.session(r)
		if s == nil {
			if strings.HasSuffix(r.URL.Path, ".json") {
				http.Error(w, "unauthorized: log in at "+Prefix+"login", http.StatusUnauthorized)
				return
			}
			next := r.URL.RequestURI()
			http.Redirect(w, r, Prefix+"login?next="+url.QueryEscape(next), http.StatusSeeOther)
			return
		}
		f(w, r, s)
	})
}

// act serves f to a session's POST that carries its CSRF token; operator
// says the action needs the operator token (logging out does not).
func (c *Console) act(f pageFunc, operator bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := c.session(r)
		if s == nil {
			http.Error(w, "unauthorized: log in at "+Prefix+"login", http.StatusUnauthorized)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			c.fail(w, r, s, http.StatusBadRequest, "read form: "+err.Error())
			return
		}
		if !sameToken(r.PostForm.Get("csrf"), s.csrf) {
			c.log.Warn("console: POST refused, CSRF token missing or wrong", "path", r.URL.Path, "remote", r.RemoteAddr)
			c.fail(w, r, s, http.StatusForbidden, "forbidden: the form's CSRF token is missing or wrong; reload the page and try again")
			return
		}
		if operator && !s.canAct() {
			c.fail(w, r, s, http.StatusForbidden, "forbidden: this session logged in with the read-only token, which can see but not act")
			return
		}
		f(w, r, s)
	})
}

// loginPage shows the login form, with a CSRF token of its own held in a
// short-lived cookie (double submit): there is no session yet.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	tok := randomToken()
	c.setCookie(w, r, loginCookie, tok, 600)
	c.render(w, r, http.StatusOK, "login", page{Title: "Log in", CSRF: tok, Data: loginData{Next: safeNext(r.URL.Query().Get("next"))}})
}

type loginData struct {
	Next  string
	Error string
}

// login checks the token (constant time, pkg/admin) and opens a session.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "read form: "+err.Error(), http.StatusBadRequest)
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	ck, err := r.Cookie(loginCookie)
	if err != nil || !sameToken(r.PostForm.Get("csrf"), ck.Value) {
		c.log.Warn("console: login refused, CSRF token missing or wrong", "remote", r.RemoteAddr)
		http.Error(w, "forbidden: the login form's CSRF token is missing or wrong; reload "+Prefix+"login", http.StatusForbidden)
		return
	}
	a := c.d.Tokens.Check(r.PostForm.Get("token"))
	if a == admin.NoAccess {
		c.log.Warn("console: login with a wrong token", "remote", r.RemoteAddr)
		tok := randomToken()
		c.setCookie(w, r, loginCookie, tok, 600)
		c.render(w, r, http.StatusUnauthorized, "login", page{Title: "Log in", CSRF: tok,
			Data: loginData{Next: next, Error: "That token is neither the operator's nor the read-only one."}})
		return
	}
	id, s := c.sessions.open(a)
	c.setCookie(w, r, loginCookie, "", -1)
	c.setCookie(w, r, cookieName, id, int(c.cfg.SessionTTL.Seconds()))
	c.log.Info("console: logged in", "as", s.actor(), "remote", r.RemoteAddr)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request, s *session) {
	if ck, err := r.Cookie(cookieName); err == nil {
		c.sessions.close(ck.Value)
	}
	c.setCookie(w, r, cookieName, "", -1)
	c.log.Info("console: logged out", "as", s.actor(), "remote", r.RemoteAddr)
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}

// setCookie sets an HttpOnly, SameSite=Strict cookie scoped to the
// console, Secure over TLS (or when configured); maxAge < 0 deletes it.
func (c *Console) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: Prefix, MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || c.cfg.SecureCookie})
}

// safeNext keeps a post-login redirect inside the console.
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix) || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return Prefix
	}
	return next
}
