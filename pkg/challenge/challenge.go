// Package challenge recognises bot-challenge and CAPTCHA interstitials:
// the page a CDN or bot manager serves instead of the one asked for until
// a browser proves itself (Cloudflare's "Just a moment...", DataDome,
// PerimeterX/HUMAN, Imperva/Incapsula, AWS WAF, Sucuri, and bare
// reCAPTCHA, hCaptcha or Turnstile walls). Zeno v2 discards such pages and
// Browsertrix Crawler detects them; an archive of them helps nobody, and
// a crawler that keeps asking only deepens the block. The worker treats a
// match as a server asking the crawl to slow down (a 429): the attempt is
// not recorded, the host backs off, and the URI is tried again later.
//
// Detection reads the status, the header and at most BodyPrefix bytes of
// the decoded body. A vendor's own header is enough; body signatures count
// only on the statuses challenges are served with (403, 429, 503, and 202
// or 405 for AWS WAF), so an ordinary page that embeds a CAPTCHA in a form
// (a 200) is never taken for a wall.
package challenge

import (
	"bytes"
	"net/http"
	"strings"
)

// BodyPrefix is how much of a body Detect needs: interstitials are small
// and carry their markers near the top.
const BodyPrefix = 32 << 10

// Match is a recognised interstitial.
type Match struct {
	// Vendor names who served it: cloudflare, datadome, perimeterx,
	// imperva, aws-waf, sucuri, or captcha for a bare CAPTCHA wall.
	Vendor string
	// Signature says what gave it away, for logs and tests.
	Signature string
}

// signature is one rule: a header (name and a value it contains, "" for
// any), or a body marker, on the statuses listed (nil: any status).
type signature struct {
	vendor   string
	header   string
	value    string
	body     string
	statuses []int
}

var challengeStatuses = []int{http.StatusForbidden, http.StatusTooManyRequests, http.StatusServiceUnavailable}

// signatures, most specific first. They are data, not state: never
// written after start.
var signatures = []signature{
	{vendor: "cloudflare", header: "Cf-Mitigated", value: "challenge"},
	{vendor: "aws-waf", header: "X-Amzn-Waf-Action", value: "captcha"},
	{vendor: "aws-waf", header: "X-Amzn-Waf-Action", value: "challenge"},
	{vendor: "datadome", header: "X-Datadome", statuses: challengeStatuses},
	{vendor: "cloudflare", body: "/cdn-cgi/challenge-platform/", statuses: challengeStatuses},
	{vendor: "cloudflare", body: "window._cf_chl_opt", statuses: challengeStatuses},
	{vendor: "datadome", body: "captcha-delivery.com", statuses: challengeStatuses},
	{vendor: "perimeterx", body: "px-captcha", statuses: challengeStatuses},
	{vendor: "perimeterx", body: "_pxAppId", statuses: challengeStatuses},
	{vendor: "imperva", body: "_Incapsula_Resource", statuses: append([]int{http.StatusOK}, challengeStatuses...)},
	{vendor: "imperva", body: "Incapsula incident ID", statuses: challengeStatuses},
	{vendor: "sucuri", body: "sucuri_cloudproxy_js", statuses: append([]int{http.StatusOK}, challengeStatuses...)},
	{vendor: "aws-waf", body: "awswaf", statuses: []int{http.StatusAccepted, http.StatusMethodNotAllowed}},
	{vendor: "captcha", body: "g-recaptcha", statuses: challengeStatuses},
	{vendor: "captcha", body: "h-captcha", statuses: challengeStatuses},
	{vendor: "captcha", body: "cf-turnstile", statuses: challengeStatuses},
}

// Detect reports whether a response is a challenge interstitial. body is
// the start of the decoded body (at most BodyPrefix bytes are read);
// extra are body markers of the profile's own, matched on the challenge
// statuses (vendor "custom").
func Detect(status int, h http.Header, body []byte, extra []string) (Match, bool) {
	if len(body) > BodyPrefix {
		body = body[:BodyPrefix]
	}
	for _, s := range signatures {
		if s.statuses != nil && !hasStatus(s.statuses, status) {
			continue
		}
		if s.header != "" {
			if v := h.Get(s.header); v != "" && (s.value == "" || strings.Contains(strings.ToLower(v), s.value)) {
				return Match{Vendor: s.vendor, Signature: "header " + s.header + ": " + v}, true
			}
			continue
		}
		if bytes.Contains(body, []byte(s.body)) {
			return Match{Vendor: s.vendor, Signature: "body " + s.body}, true
		}
	}
	if hasStatus(challengeStatuses, status) {
		for _, m := range extra {
			if m != "" && bytes.Contains(body, []byte(m)) {
				return Match{Vendor: "custom", Signature: "body " + m}, true
			}
		}
	}
	return Match{}, false
}

func hasStatus(list []int, s int) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
