package scope

import (
	"context"
	"testing"
)

// TestSurtRules covers the SURT-prefix family: prefixes from an inline
// list, a file and the seeds, as they are or as domains and hosts, the Not
// forms, and alsoCheckVia.
func TestSurtRules(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "shorteners.txt", "# URL shorteners\n+http://bit.ly/\n+http://(ly,ow,)/\n")
	seeds := seedsWith(t, "http://www.example.org/news/today", "https://shop.example.co.uk/")
	tests := []struct {
		name, rule string
		cases      []ruleCase
	}{
		{"seeds as prefixes", "- rule: SurtPrefixedDecideRule\n", []ruleCase{
			{url: "http://www.example.org/news/tomorrow", want: "ACCEPT"},
			{url: "https://www.example.org/news/", want: "ACCEPT"},
			{url: "http://www.example.org/sport/", want: "PASS"},
			{url: "http://example.org/news/today", want: "PASS"}, // www is kept in Heritrix SURTs
			{url: "http://shop.example.co.uk/basket", want: "ACCEPT"},
		}},
		{"file without seeds", "- {rule: SurtPrefixedDecideRule, seedsAsSurtPrefixes: false, surtsSourceFile: shorteners.txt}\n", []ruleCase{
			{url: "https://bit.ly/abc", want: "ACCEPT"},
			{url: "http://ow.ly/x", want: "ACCEPT"},
			{url: "http://www.example.org/news/x", want: "PASS"},
		}},
		{"inline and seeds", "- {rule: SurtPrefixedDecideRule, surts: ['+uk', 'http://example.com/docs/']}\n", []ruleCase{
			{url: "http://anything.gov.uk/", want: "ACCEPT"},
			{url: "http://example.com/docs/a", want: "ACCEPT"},
			{url: "http://www.example.org/news/x", want: "ACCEPT"},
			{url: "http://example.com/", want: "PASS"},
		}},
		{"not prefixed", "- {rule: NotSurtPrefixedDecideRule, decision: REJECT}\n", []ruleCase{
			{url: "http://www.example.org/news/x", want: "PASS"},
			{url: "http://www.example.org/other", want: "REJECT"},
		}},
		{"also check via", "- {rule: SurtPrefixedDecideRule, alsoCheckVia: true}\n", []ruleCase{
			{url: "http://cdn.example.net/a.png", via: "http://www.example.org/news/x", want: "ACCEPT"},
			{url: "http://cdn.example.net/b.png", via: "http://cdn.example.net/a.png", want: "PASS"},
			{url: "http://cdn.example.net/c.png", want: "PASS"},
		}},
		{"on domains", "- rule: OnDomainsDecideRule\n", []ruleCase{
			{url: "http://example.org/", want: "ACCEPT"}, // www, dropped
			{url: "http://static.example.org/x", want: "ACCEPT"},
			{url: "http://a.shop.example.co.uk/", want: "ACCEPT"},
			{url: "http://example.co.uk/", want: "PASS"}, // the seed's domain is shop.example.co.uk
			{url: "http://example.com/", want: "PASS"},
		}},
		{"not on domains", "- {rule: NotOnDomainsDecideRule, decision: REJECT}\n", []ruleCase{
			{url: "http://static.example.org/x", want: "PASS"},
			{url: "http://example.com/", want: "REJECT"},
		}},
		{"on hosts", "- {rule: OnHostsDecideRule, surts: ['+uk,co,']}\n", []ruleCase{
			{url: "http://www.example.org/anything", want: "ACCEPT"}, // path dropped
			{url: "https://shop.example.co.uk/x", want: "ACCEPT"},
			{url: "http://static.example.org/x", want: "PASS"},
			{url: "http://www.example.org:8080/", want: "PASS"}, // another port is another host
		}},
		{"not on hosts", "- {rule: NotOnHostsDecideRule, decision: REJECT, seedsAsSurtPrefixes: false, surts: ['a.example']}\n", []ruleCase{
			{url: "http://a.example/x", want: "PASS"},
			{url: "http://sub.a.example/x", want: "REJECT"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t, scopeFromYAML(t, "rules:\n"+tc.rule), Options{Seeds: seeds, BaseDir: dir})
			for _, rc := range tc.cases {
				d := e.Decide(context.Background(), candidate(t, rc.url, rc.via, "L", false))
				if d.Result.String() != rc.want {
					t.Errorf("%s via %q: %s, want %s", rc.url, rc.via, d, rc.want)
				}
			}
		})
	}
}

// TestOnDomainsSeesLaterSeeds: the derived domain view follows seeds added
// after the engine was built.
func TestOnDomainsSeesLaterSeeds(t *testing.T) {
	seeds := seedsWith(t)
	e := newEngine(t, scopeFromYAML(t, "rules:\n- rule: OnDomainsDecideRule\n- {rule: OnHostsDecideRule, decision: REJECT}\n"), Options{Seeds: seeds})
	c := candidate(t, "http://img.later.example/x", "", "L", false)
	if e.Decide(context.Background(), c).Accepted() {
		t.Fatal("accepted before the seed was added")
	}
	if err := seeds.Add(context.Background(), "http://www.later.example/", SeedScopeRoot); err != nil {
		t.Fatal(err)
	}
	if d := e.Decide(context.Background(), c); d.String() != "ACCEPT by rule #1 OnDomainsDecideRule" {
		t.Fatalf("after adding the seed: %s", d)
	}
	if d := e.Decide(context.Background(), candidate(t, "http://www.later.example/y", "", "L", false)); d.String() != "REJECT by rule #2 OnHostsDecideRule" {
		t.Fatalf("host rule: %s", d)
	}
}
