package extract

import (
	"strings"
	"testing"
)

func TestPrefilter(t *testing.T) {
	tests := []struct {
		raw   string
		links bool
		name  string
	}{
		{"<p>", false, "p"},
		{"<LI>", false, "li"},
		{"<input disabled>", false, "input"},
		{`<div class="section">`, false, "div"},
		{`<div class="x" onclick="go()">`, true, "div"},
		{`<a/onclick=go()>`, true, "a"},
		{`<button type=button>`, false, "button"},
		{`<a HREF="/x">`, true, "a"},
		{`<IMG SRC=x.png>`, true, "img"},
		{`<img data-lazy-src="x">`, true, "img"},
		{`<object CodeBase=x>`, true, "object"},
		{`<td background=x.gif>`, true, "td"},
		{`<meta http-equiv=refresh content="0;url=x">`, true, "meta"},
		{`<span style="background:url(x)">`, true, "span"},
		{`<form action=/s>`, true, "form"},
		{`<STYLE type=text/css>`, true, "style"}, // the tag's own name matches: errs towards true
		{`<script>`, false, "script"},
		{`<noscript>`, false, "noscript"},
		{`<x-custom-element-with-long-tag a=b>`, false, ""},
		{"<div class=\"" + strings.Repeat("z", 600) + "\">", true, "div"},
	}
	for _, tc := range tests {
		if got := mayHoldLinks([]byte(tc.raw)); got != tc.links {
			t.Errorf("mayHoldLinks(%.40q) = %v, want %v", tc.raw, got, tc.links)
		}
		if got := rawTagName([]byte(tc.raw)); got != tc.name {
			t.Errorf("rawTagName(%.40q) = %q, want %q", tc.raw, got, tc.name)
		}
	}
}

// Every attribute name kindOf reads is found by the prefilter, in any case,
// whatever else the tag holds.
func TestPrefilterCoversKindOf(t *testing.T) {
	names := []string{"href", "cite", "codebase", "src", "lowsrc", "background", "longdesc", "usemap", "profile",
		"datasrc", "poster", "data-src", "data-original", "data-lazy", "data-lazy-src", "data-full-src",
		"data-src-small", "data-src-medium", "srcset", "imagesrcset", "data-srcset", "data-lazy-srcset",
		"data-original-set", "data-full-srcset", "data", "classid", "archive", "code", "style", "action",
		"method", "rel", "name", "http-equiv", "content", "property", "onclick", "onload", "onmouseover"}
	for _, n := range names {
		if kindOf([]byte(n)) == attrIgnored {
			t.Errorf("%s: kindOf ignores it; keep this list in step with kindOf", n)
		}
		for _, raw := range []string{"<x " + n + "=v>", "<x class=c " + strings.ToUpper(n) + "='v'>", "<x\n" + n + "=v/>"} {
			if !mayHoldLinks([]byte(raw)) {
				t.Errorf("mayHoldLinks(%q) = false", raw)
			}
		}
	}
}
