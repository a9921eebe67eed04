package fetch

import (
	"context"
	"net/http"
	"net/url"
)

// CookieJar stores cookies between fetches; pkg/cookies implements it on
// Redis. Implementations log their own errors: a fetch never fails because
// cookies could not be loaded or saved.
type CookieJar interface {
	Cookies(ctx context.Context, u *url.URL) []*http.Cookie
	SetCookies(ctx context.Context, u *url.URL, cookies []*http.Cookie)
}

// jarCookies renders the jar's cookies for u as a Cookie header value, ""
// when there are none or there is no jar.
func jarCookies(ctx context.Context, jar CookieJar, u *url.URL) string {
	if jar == nil {
		return ""
	}
	cs := jar.Cookies(ctx, u)
	if len(cs) == 0 {
		return ""
	}
	// Invalid cookies are dropped rather than repaired (net/http would log
	// the repair on the global logger), so a hostile value stored earlier
	// cannot inject headers either way.
	r := &http.Request{Header: http.Header{}}
	for _, c := range cs {
		if c == nil || c.Valid() != nil {
			continue
		}
		r.AddCookie(c)
	}
	return r.Header.Get("Cookie")
}

// keepCookies hands the response's Set-Cookie values to the jar, whatever
// the status: sites set session cookies on redirects and error pages too.
func keepCookies(ctx context.Context, jar CookieJar, u *url.URL, hr *http.Response) {
	if jar == nil {
		return
	}
	if cs := hr.Cookies(); len(cs) > 0 {
		jar.SetCookies(ctx, u, cs)
	}
}
