package scope

import (
	"slices"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/geolocate"
	"github.com/trawler-crawl/trawler/pkg/geolocate/geotest"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// TestProfileRuleErrors checks that bad rule lists fail at profile load
// with the YAML key and its line.
func TestProfileRuleErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"unknown rule", "scope:\n  rules:\n  - rule: RejectDecideRule\n  - rule: FooDecideRule\n",
			`line 4: scope.rules #2: rule: unknown rule "FooDecideRule"`},
		{"missing name", "scope:\n  rules:\n  - decision: ACCEPT\n",
			"line 3: scope.rules #1: missing key rule"},
		{"unknown parameter", "scope:\n  rules:\n  - rule: SurtPrefixedDecideRule\n    surtsFile: x.txt\n",
			`line 4: scope.rules #1 (SurtPrefixedDecideRule): unknown parameter "surtsFile"`},
		{"parameter of another rule", "scope:\n  rules:\n  - {rule: TooManyPathSegmentsDecideRule, regex: 'x'}\n",
			"line 3: scope.rules #1 (TooManyPathSegmentsDecideRule): parameter regex does not apply"},
		{"per-URI threshold", "scope:\n  rules:\n  - rule: TooManyHopsDecideRule\n    maxHops: 5\n",
			"line 4: scope.rules #1 (TooManyHopsDecideRule): maxHops is set as scope.maxHops"},
		{"fixed decision", "scope:\n  rules:\n  - {rule: PathologicalPathDecideRule, decision: ACCEPT}\n",
			"PathologicalPathDecideRule always answers REJECT"},
		{"bad decision", "scope:\n  rules:\n  - {rule: SurtPrefixedDecideRule, decision: accept}\n",
			`line 3: scope.rules #1 (SurtPrefixedDecideRule): decision: "accept" must be ACCEPT or REJECT`},
		{"repeated key", "scope:\n  rules:\n  - {rule: MatchesRegexDecideRule, regex: a, regex: b}\n",
			"key regex given twice"},
		{"wrong type", "scope:\n  rules:\n  - {rule: SurtPrefixedDecideRule, alsoCheckVia: sometimes}\n",
			"scope.rules #1 (SurtPrefixedDecideRule).alsoCheckVia"},
		{"bad regex", "scope:\n  rules:\n  - rule: RejectDecideRule\n  - rule: MatchesListRegexDecideRule\n    regexList: ['ok', '(unclosed']\n",
			`line 4: scope.rules #2 (MatchesListRegexDecideRule): regexList[1] "(unclosed": invalid pattern`},
		{"backreference", "scope:\n  rules:\n  - {rule: MatchesRegexDecideRule, regex: '(a)\\1'}\n",
			"invalid escape sequence"},
		{"regex required", "scope:\n  rules:\n  - rule: HopsPathMatchesRegexDecideRule\n", "regex: required"},
		{"geo needs codes", "scope:\n  rules:\n  - {rule: ExternalGeoLocationDecideRule, database: g.mmdb}\n", "countryCodes: required"},
		{"geo code form", "scope:\n  rules:\n  - {rule: ExternalGeoLocationDecideRule, database: g.mmdb, countryCodes: [gb]}\n",
			`countryCodes[0] "gb": want an ISO 3166-1 alpha-2 code`},
		{"scheme form", "scope:\n  rules:\n  - {rule: SchemeNotInSetDecideRule, schemes: ['HTTP:']}\n", `schemes[0] "HTTP:"`},
		{"not a list", "scope:\n  rules: RejectDecideRule\n", "line 2: scope.rules: want a list"},
		{"entry not a mapping", "scope:\n  rules:\n  - RejectDecideRule\n", "line 3: scope.rules #1: want a mapping"},
		{"empty list", "scope:\n  rules: []\n", "scope.rules: empty"},
		{"negative threshold", "scope:\n  maxTransHops: -1\n", "scope.maxTransHops: must be >= 0"},
		{"hops below -1", "scope:\n  maxHops: -2\n", "scope.maxHops: must be >= 0, or -1"},
		{"poll interval", "scope:\n  sourceCheckInterval: 0\n", "scope.sourceCheckInterval"},
		{"unknown scope key", "scope:\n  maxHop: 3\n", "line 2: scope.maxHop: no such setting (did you mean scope.maxHops?)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := profile.Default()
			err := profile.Decode(strings.NewReader(tc.yaml), &p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant containing %q", err, tc.want)
			}
		})
	}
}

// TestProfileRules loads a UKWA-like domain-crawl scope and checks what the
// profile keeps, and that rendering and re-reading it gives the same list.
func TestProfileRules(t *testing.T) {
	doc := `scope:
  maxHops: 20
  maxPathDepth: 15
  maxRepetitions: 3
  excludedSurtsFile: exclude.txt
  rules:
  - rule: RejectDecideRule
  - rule: SurtPrefixedDecideRule
    comment: seeds and the UK domains
    surts: ['+uk', '+scot', '+wales', '+cymru', '+london']
  - rule: ExternalGeoLocationDecideRule
    countryCodes: [GB]
    database: /geo/GeoLite2-City.mmdb
    lookupEveryUri: false
  - {rule: HopsPathMatchesRegexDecideRule, decision: REJECT, regex: '.*RRRRR'}
  - {rule: MatchesListRegexDecideRule, decision: REJECT, listLogicalOr: true, regexList: ['^.{512,}$']}
  - rule: PrerequisiteAcceptDecideRule
`
	p := profile.Default()
	if err := profile.Decode(strings.NewReader(doc), &p); err != nil {
		t.Fatal(err)
	}
	rules := p.Scope.Rules.Rules()
	if len(rules) != 6 || rules[1].Comment != "seeds and the UK domains" || rules[1].Line != 8 ||
		!rules[1].SeedsAsPrefixes() || rules[2].LookupEvery() || rules[3].EffectiveDecision() != "REJECT" ||
		rules[1].EffectiveDecision() != "ACCEPT" || p.Scope.MaxPathDepth != 15 {
		t.Fatalf("unexpected rules %+v", rules)
	}
	rules[0].Name = "changed" // Rules returns a copy
	if p.Scope.Rules.Rules()[0].Name != "RejectDecideRule" {
		t.Fatal("the profile's rule list was modified through Rules()")
	}
	again := profile.Default()
	if err := profile.Decode(strings.NewReader(p.YAML()), &again); err != nil {
		t.Fatalf("re-reading the rendered profile: %v\n%s", err, p.YAML())
	}
	a, b := p.Scope.Rules.Rules(), again.Scope.Rules.Rules()
	for i := range a {
		a[i].Line, b[i].Line = 0, 0
	}
	if len(a) != len(b) || !slices.EqualFunc(a, b, rulesEqual) {
		t.Fatalf("round trip changed the rules:\n%+v\n%+v", a, b)
	}
	// Setting one threshold, as a sheet does, keeps the list.
	if err := p.Set("scope.maxHops", "1"); err != nil || p.Scope.Rules.Len() != 6 || ParamsFrom(p.Scope).MaxHops != 1 {
		t.Fatalf("Set scope.maxHops: %v, %d rules", err, p.Scope.Rules.Len())
	}
}

func rulesEqual(a, b profile.Rule) bool {
	return a.Name == b.Name && a.Decision == b.Decision && a.Comment == b.Comment &&
		slices.Equal(a.Surts, b.Surts) && slices.Equal(a.RegexList, b.RegexList) && a.Regex == b.Regex &&
		slices.Equal(a.CountryCodes, b.CountryCodes) && a.Database == b.Database &&
		a.LookupEvery() == b.LookupEvery() && a.SeedsAsPrefixes() == b.SeedsAsPrefixes() && a.LogicalOr() == b.LogicalOr()
}

// TestEveryRuleNameBuilds guards the catalogue in pkg/profile against
// names with no implementation here.
func TestEveryRuleNameBuilds(t *testing.T) {
	dir := t.TempDir()
	db := geotest.WriteDB(t, dir, "geo.mmdb", map[string]string{"127.0.0.0/8": "GB"})
	b := builder{e: &Engine{seeds: NewSeeds(nil, "")}, dbs: map[string]*geolocate.Locator{}}
	for _, name := range profile.RuleNames() {
		r := profile.Rule{Name: name}
		switch name {
		case "MatchesRegexDecideRule", "NotMatchesRegexDecideRule", "HopsPathMatchesRegexDecideRule":
			r.Regex = ".*"
		case "ExternalGeoLocationDecideRule":
			r.CountryCodes, r.Database = []string{"GB"}, db
		}
		if err := r.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if _, err := b.rule(r); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := (&Engine{closers: b.e.closers}).Close(); err != nil {
		t.Fatal(err)
	}
	if err := (profile.Rule{Name: "Nope"}).Validate(); err == nil {
		t.Fatal("unknown rule validated")
	}
}
