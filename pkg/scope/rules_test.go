package scope

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

// ruleCase is one candidate and the answer expected from a one-rule scope.
type ruleCase struct {
	url, via, hops string
	seed           bool
	params         *Params // nil: profile defaults
	want           string  // ACCEPT, REJECT or PASS
}

// checkRule builds a scope holding just the given rule and checks each
// case's answer; with one rule the decision is that rule's answer.
func checkRule(t *testing.T, ruleYAML string, cases []ruleCase) {
	t.Helper()
	e := newEngine(t, scopeFromYAML(t, "rules:\n"+ruleYAML), Options{})
	for _, tc := range cases {
		c := candidate(t, tc.url, tc.via, tc.hops, tc.seed)
		c.Params = tc.params
		d := e.Decide(context.Background(), c)
		if got := d.Result.String(); got != tc.want {
			t.Errorf("%s via=%q hops=%q seed=%v params=%+v: got %s (%s), want %s",
				tc.url, tc.via, tc.hops, tc.seed, tc.params, got, d, tc.want)
		}
		if d.Result != Pass && (d.Rule != 1 || d.RuleName == "") {
			t.Errorf("%s: decision %s does not name rule #1", tc.url, d)
		}
	}
}

func params(mod func(*Params)) *Params {
	p := ParamsFrom(profile.Default().Scope)
	mod(&p)
	return &p
}

func TestFixedRules(t *testing.T) {
	checkRule(t, "- rule: AcceptDecideRule\n", []ruleCase{{url: "http://a.example/", want: "ACCEPT"}})
	checkRule(t, "- rule: RejectDecideRule\n", []ruleCase{{url: "http://a.example/", seed: true, want: "REJECT"}})
	checkRule(t, "- rule: SeedAcceptDecideRule\n", []ruleCase{
		{url: "http://a.example/", seed: true, want: "ACCEPT"},
		{url: "http://a.example/x", hops: "L", want: "PASS"},
	})
	checkRule(t, "- rule: PrerequisiteAcceptDecideRule\n", []ruleCase{
		{url: "http://a.example/robots.txt", hops: "LP", want: "ACCEPT"},
		{url: "http://a.example/robots.txt", hops: "P", want: "ACCEPT"},
		{url: "http://a.example/x", hops: "PL", want: "PASS"},
		{url: "http://a.example/", want: "PASS"},
	})
}

func TestTooManyHopsDecideRule(t *testing.T) {
	twenty := strings.Repeat("L", 20)
	checkRule(t, "- rule: TooManyHopsDecideRule\n", []ruleCase{
		{url: "http://a.example/", hops: twenty, want: "PASS"}, // maxHops 20 by default
		{url: "http://a.example/", hops: twenty + "E", want: "REJECT"},
		{url: "http://a.example/", hops: "", want: "PASS"},
		// resourceScope sheet: maxHops 1.
		{url: "http://a.example/", hops: "L", params: params(func(p *Params) { p.MaxHops = 1 }), want: "PASS"},
		{url: "http://a.example/", hops: "LE", params: params(func(p *Params) { p.MaxHops = 1 }), want: "REJECT"},
		{url: "http://a.example/", hops: "L", params: params(func(p *Params) { p.MaxHops = 0 }), want: "REJECT"},
		// noMaxHops sheet: -1.
		{url: "http://a.example/", hops: strings.Repeat("L", 500), params: params(func(p *Params) { p.MaxHops = -1 }), want: "PASS"},
	})
	checkRule(t, "- {rule: TooManyHopsDecideRule, decision: ACCEPT}\n", []ruleCase{
		{url: "http://a.example/", hops: twenty + "L", want: "ACCEPT"},
	})
}

func TestTooManyPathSegmentsDecideRule(t *testing.T) {
	deep := "http://a.example" + strings.Repeat("/d", 20) // 20 slashes
	checkRule(t, "- rule: TooManyPathSegmentsDecideRule\n", []ruleCase{
		{url: deep, want: "PASS"},
		{url: deep + "/", want: "REJECT"},
		{url: "http://a.example", want: "PASS"},                                 // path "/"
		{url: "http://a.example/a?q=" + strings.Repeat("/x", 30), want: "PASS"}, // the query does not count
		{url: "http://a.example/a/b/c", params: params(func(p *Params) { p.MaxPathDepth = 2 }), want: "REJECT"}, // UKWA sets 15
		{url: "http://a.example/a/b", params: params(func(p *Params) { p.MaxPathDepth = 2 }), want: "PASS"},
		{url: "mailto:someone@example.org", want: "PASS"},
	})
}

func TestPathologicalPathDecideRule(t *testing.T) {
	three := params(func(p *Params) { p.MaxRepetitions = 3 })
	checkRule(t, "- rule: PathologicalPathDecideRule\n", []ruleCase{
		{url: "http://a.example/a/a/", want: "PASS"}, // a/ twice: allowed with maxRepetitions 2
		{url: "http://a.example/a/a/a/", want: "REJECT"},
		{url: "http://a.example/x/a/b/a/b/a/b/c", want: "REJECT"}, // multi-segment group
		{url: "http://a.example/a/aa/aaa/", want: "PASS"},
		{url: "http://a.example/cal/2024/01/2024/01/", want: "PASS"},
		{url: "http://a.example/a////", want: "REJECT"}, // empty segments repeat too, as in Heritrix
		{url: "http://a.example/a/a/a/", params: three, want: "PASS"},
		{url: "http://a.example/a/a/a/a/", params: three, want: "REJECT"},
		{url: "http://a.example/a/a/a/a/", params: params(func(p *Params) { p.MaxRepetitions = 0 }), want: "PASS"},
	})
}

func TestTransclusionDecideRule(t *testing.T) {
	checkRule(t, "- rule: TransclusionDecideRule\n", []ruleCase{
		{url: "http://a.example/", hops: "", want: "PASS"},
		{url: "http://a.example/", hops: "L", want: "PASS"},
		{url: "http://a.example/", hops: "LE", want: "ACCEPT"},
		{url: "http://a.example/", hops: "LEE", want: "ACCEPT"},
		{url: "http://a.example/", hops: "LEEE", want: "PASS"}, // maxTransHops 2
		{url: "http://a.example/", hops: "LX", want: "ACCEPT"},
		{url: "http://a.example/", hops: "LXX", want: "PASS"},      // maxSpeculativeHops 1
		{url: "http://a.example/", hops: "LRRRRE", want: "ACCEPT"}, // redirects are free
		{url: "http://a.example/", hops: "LEL", want: "PASS"},
		{url: "http://a.example/", hops: "LMP", want: "ACCEPT"},
		{url: "http://a.example/", hops: "LEEE", params: params(func(p *Params) { p.MaxTransHops = 3 }), want: "ACCEPT"},
		{url: "http://a.example/", hops: "LXX", params: params(func(p *Params) { p.MaxSpeculativeHops = 2 }), want: "ACCEPT"},
	})
}

func TestSchemeNotInSetDecideRule(t *testing.T) {
	checkRule(t, "- rule: SchemeNotInSetDecideRule\n", []ruleCase{
		{url: "http://a.example/", want: "PASS"},
		{url: "https://a.example/", want: "PASS"},
		{url: "ftp://a.example/f", want: "PASS"}, // in Heritrix's default set
		{url: "mailto:someone@example.org", want: "REJECT"},
		{url: "gopher://a.example/", want: "REJECT"},
	})
	checkRule(t, "- {rule: SchemeNotInSetDecideRule, schemes: [http]}\n", []ruleCase{
		{url: "http://a.example/", want: "PASS"},
		{url: "https://a.example/", want: "REJECT"},
	})
}

func TestMatchesListRegexDecideRule(t *testing.T) {
	checkRule(t, `- rule: MatchesListRegexDecideRule
  decision: REJECT
  regexList: ['.*\.pdf', '^https?://[^/]+/cart/add/.+$', '.*\?(?:.*&)?replytocom=\d+']
`, []ruleCase{
		{url: "http://a.example/doc.pdf", want: "REJECT"},
		{url: "http://a.example/doc.pdfx", want: "PASS"}, // whole-string match, as Java's matches()
		{url: "http://a.example/cart/add/7", want: "REJECT"},
		{url: "http://a.example/post?x=1&replytocom=42", want: "REJECT"},
		{url: "http://a.example/", want: "PASS"},
	})
	checkRule(t, `- {rule: MatchesListRegexDecideRule, listLogicalOr: false, regexList: ['.*\.pdf', '.*/docs/.*']}
`, []ruleCase{
		{url: "http://a.example/docs/a.pdf", want: "ACCEPT"},
		{url: "http://a.example/a.pdf", want: "PASS"},
	})
	checkRule(t, "- {rule: MatchesListRegexDecideRule, decision: REJECT}\n", []ruleCase{
		{url: "http://a.example/", want: "PASS"}, // empty list never matches
	})
	checkRule(t, "- {rule: NotMatchesListRegexDecideRule, decision: REJECT, regexList: ['https?://a\\.example/.*']}\n", []ruleCase{
		{url: "http://a.example/x", want: "PASS"},
		{url: "http://b.example/x", want: "REJECT"},
	})
	checkRule(t, "- {rule: NotMatchesListRegexDecideRule}\n", []ruleCase{
		{url: "http://a.example/", want: "ACCEPT"}, // Heritrix: the empty list is never matched
	})
}

func TestMatchesRegexDecideRules(t *testing.T) {
	// UKWA's helper-file rule, with a mid-pattern (?i).
	checkRule(t, `- rule: MatchesRegexDecideRule
  regex: '^https?://[^/]+/.+(?i)(\.(js|css|gif|jpe?g|png|woff))\b.*$'
`, []ruleCase{
		{url: "http://a.example/s/site.CSS?v=2", want: "ACCEPT"},
		{url: "http://a.example/i/logo.jpeg", want: "ACCEPT"},
		{url: "http://a.example/page.html", want: "PASS"},
	})
	checkRule(t, "- {rule: NotMatchesRegexDecideRule, decision: REJECT, regex: 'https?://a\\.example/.*'}\n", []ruleCase{
		{url: "http://a.example/x", want: "PASS"},
		{url: "http://b.example/x", want: "REJECT"},
	})
	checkRule(t, "- {rule: HopsPathMatchesRegexDecideRule, decision: REJECT, regex: '.*RRRRR'}\n", []ruleCase{
		{url: "http://a.example/", hops: "LRRRRR", want: "REJECT"},
		{url: "http://a.example/", hops: "LRRRR", want: "PASS"},
	})
	checkRule(t, "- {rule: HopsPathMatchesRegexDecideRule, regex: '^.*[ER]+$'}\n", []ruleCase{
		{url: "http://a.example/", hops: "LLE", want: "ACCEPT"},
		{url: "http://a.example/", hops: "LLER", want: "ACCEPT"},
		{url: "http://a.example/", hops: "LEL", want: "PASS"},
		{url: "http://a.example/", hops: "", want: "PASS"},
	})
}

func TestRepeatsSegments(t *testing.T) {
	tests := []struct {
		s    string
		rep  int
		want bool
	}{
		{"/a/a/a/", 2, true},
		{"/a/a/", 2, false},
		{"/a/a/", 1, true},
		{"x/ab/ab/ab/", 2, true},
		{"x/ab/a/ab/", 2, false},
		{"/", 2, false},
		{"", 2, false},
		{"no slashes", 1, false},
	}
	for _, tc := range tests {
		if got := repeatsSegments(tc.s, tc.rep); got != tc.want {
			t.Errorf("repeatsSegments(%q, %d) = %v, want %v", tc.s, tc.rep, got, tc.want)
		}
	}
}

func TestRequiredLiterals(t *testing.T) {
	tests := []struct {
		re   string
		want []string
	}{
		{`^.+ProductCats\.asp\?Keywords=.+xargs=.+$`, []string{"ProductCats.asp?Keywords=", "xargs="}},
		{`^https?://[^/]+\.bbc\.co\.uk/iplayer/.*$`, []string{"http", "://", ".bbc.co.uk/iplayer/"}},
		{`abc|abd`, []string{"ab"}}, // the parser factors the common prefix out
		{`(?i)^.+/checkout/.*$`, nil},
		{`^.+(?:foo)?bar.*$`, []string{"bar"}},
		{`^.{512,}$`, nil},
		{`(a|b)cd`, []string{"cd"}},
		{`x(`, nil},
	}
	for _, tc := range tests {
		if got := requiredLiterals(tc.re); !slices.Equal(got, tc.want) {
			t.Errorf("requiredLiterals(%q) = %q, want %q", tc.re, got, tc.want)
		}
	}
}

// TestPrefilterAgreesWithRegex: the literal prefilter never changes an
// answer, checked on UKWA's patterns against URLs made to hit each.
func TestPrefilterAgreesWithRegex(t *testing.T) {
	urls := []string{
		"http://shop.example.uk/ProductCats.asp?Keywords=x&xargs=1",
		"http://a.example.uk/basket/checkout/step",
		"http://a.example.org/index.php/x/index.php?y",
		"http://www.camcycle.org/a/camcycle.org/b",
		"http://a.example/cart/add/7",
		"https://www.bbc.co.uk/iplayer/episode/1",
		"https://twitter.com/someone?lang=en",
		"http://blog.example/post?replytocom=12",
		"http://blog.example/wp-admin/edit.php",
		"http://a.example/" + strings.Repeat("x", 520),
		"http://a.example/plain/page.html",
		"http://a.example/CHECKOUT",
	}
	matched := 0
	for _, p := range ukwaExcludes {
		pat, err := compilePattern(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range urls {
			got, want := pat.match(u), pat.re.MatchString(u)
			if got != want {
				t.Errorf("pattern %q on %s: prefiltered %v, regex %v", p, u, got, want)
			}
			if want {
				matched++
			}
		}
	}
	if matched < 10 {
		t.Fatalf("only %d pattern/URL pairs match: the check proves little", matched)
	}
}
