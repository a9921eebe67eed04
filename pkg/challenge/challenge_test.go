package challenge

import (
	"net/http"
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	cloudflarePage := `<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>
<script>(function(){window._cf_chl_opt={cvId: '3'};var a=document.createElement('script');a.src='/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1';}());</script></body></html>`
	cases := []struct {
		name   string
		status int
		h      http.Header
		body   string
		extra  []string
		vendor string // "" means no match
	}{
		{"cloudflare header", 403, hdr("Cf-Mitigated", "challenge", "Server", "cloudflare"), cloudflarePage, nil, "cloudflare"},
		{"cloudflare page without the header", 503, hdr("Server", "cloudflare"), cloudflarePage, nil, "cloudflare"},
		{"cloudflare markers on a 200 are a page about Cloudflare", 200, hdr(), cloudflarePage, nil, ""},
		{"aws waf captcha", 405, hdr("X-Amzn-Waf-Action", "captcha"), "<html>", nil, "aws-waf"},
		{"aws waf challenge on a 202", 202, hdr("x-amzn-waf-action", "challenge"), "", nil, "aws-waf"},
		{"datadome header", 403, hdr("X-DataDome", "protected"), "", nil, "datadome"},
		{"datadome header on a 200 is its ordinary cookie", 200, hdr("X-DataDome", "protected"), "<html>", nil, ""},
		{"datadome page", 403, hdr(), `<script src="https://ct.captcha-delivery.com/c.js"></script>`, nil, "datadome"},
		{"perimeterx", 403, hdr(), `<div id="px-captcha"></div>`, nil, "perimeterx"},
		{"imperva on a 200", 200, hdr(), `<script src="/_Incapsula_Resource?SWJIYLWA=5074a744"></script>`, nil, "imperva"},
		{"imperva incident", 403, hdr(), `Request unsuccessful. Incapsula incident ID: 1234`, nil, "imperva"},
		{"sucuri", 200, hdr(), `<script>var s={},u,c,U,r,i,l=0;sucuri_cloudproxy_js='';</script>`, nil, "sucuri"},
		{"recaptcha wall", 429, hdr(), `<form><div class="g-recaptcha" data-sitekey="x"></div></form>`, nil, "captcha"},
		{"turnstile wall", 403, hdr(), `<div class="cf-turnstile"></div>`, nil, "captcha"},
		{"a contact form with reCAPTCHA is a page", 200, hdr(), `<form><div class="g-recaptcha"></div></form>`, nil, ""},
		{"a plain 403", 403, hdr("Server", "nginx"), "<h1>403 Forbidden</h1>", nil, ""},
		{"a maintenance 503", 503, hdr("Retry-After", "120"), "<h1>Down for maintenance</h1>", nil, ""},
		{"a profile marker", 403, hdr(), `<p>Please verify you are a human (ref 77)</p>`, []string{"verify you are a human"}, "custom"},
		{"an empty profile marker matches nothing", 403, hdr(), "anything", []string{""}, ""},
		{"a marker past the prefix is not read", 403, hdr(), strings.Repeat(" ", BodyPrefix) + "px-captcha", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, ok := Detect(c.status, c.h, []byte(c.body), c.extra)
			if ok != (c.vendor != "") || m.Vendor != c.vendor {
				t.Fatalf("Detect = %+v, %v; want vendor %q", m, ok, c.vendor)
			}
			if ok && m.Signature == "" {
				t.Error("a match without its signature")
			}
		})
	}
}
