package scope

import (
	"context"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
)

func TestSurtPrefixes(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()

	a := NewSurtPrefixes(rdb, "{t}:", 3)
	b := NewSurtPrefixes(rdb, "{t}:", 3) // another worker sharing the set
	for _, s := range []string{"http://www.example.org/main/sub", "https://blog.example.co.uk/", "http://host.example.net"} {
		if err := a.AddSeed(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url, hops string
		seed      bool
		accept    bool
		rule      string
	}{
		{"http://www.example.org/main/page", "L", false, true, "SurtPrefixedDecideRule"},
		{"https://www.example.org/main/x/y", "LL", false, true, "SurtPrefixedDecideRule"}, // https folded
		{"http://www.example.org/other", "L", false, false, "RejectDecideRule"},
		{"http://example.org/main/page", "L", false, false, "RejectDecideRule"}, // www matters in Heritrix SURTs
		{"http://blog.example.co.uk/a", "L", false, true, "SurtPrefixedDecideRule"},
		{"http://sub.host.example.net/x", "E", false, true, "SurtPrefixedDecideRule"}, // no path: subdomains too
		{"http://www.example.org/main/deep", "LLLL", false, false, "TooManyHopsDecideRule"},
		{"ftp://www.example.org/main/f", "L", false, false, "SchemeNotInSetDecideRule"},
		{"http://elsewhere.invalid/", "", true, true, "SeedAcceptDecideRule"},
	}
	for _, tc := range tests {
		for name, s := range map[string]*SurtPrefixes{"adder": a, "other worker": b} {
			d := s.Decide(tc.url, tc.hops, tc.seed)
			if d.Accept != tc.accept || !contains(d.Rule, tc.rule) {
				t.Errorf("%s: Decide(%s, %q) = %+v, want accept=%v by %s", name, tc.url, tc.hops, d, tc.accept, tc.rule)
			}
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) <= len(s) && (s[len(s)-len(sub):] == sub)
}
