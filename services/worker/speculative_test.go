package worker

import (
	"testing"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// TestJSBase: a script's guessed links resolve against the page that
// loaded it, as Heritrix's do; without an http(s) via, against the
// script itself.
func TestJSBase(t *testing.T) {
	const js = "http://example.com/_static/searchtools.js"
	cases := []struct {
		name, via, want string
	}{
		{"loaded by a page", "http://example.com/search.html", "http://example.com/search.html"},
		{"loaded by an https page", "https://example.com/a/b.html", "https://example.com/a/b.html"},
		{"a seed", "", js},
		{"via a prerequisite", "dns:example.com", js},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tk := &task{l: messages.Launch{URL: js, ParentURL: tc.via}}
			if got := jsBase(tk); got != tc.want {
				t.Errorf("jsBase(via %q) = %q, want %q", tc.via, got, tc.want)
			}
		})
	}
}
