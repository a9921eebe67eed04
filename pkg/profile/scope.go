package profile

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Scope is the crawl scope: an ordered list of Heritrix decide rules plus
// the thresholds those rules read. The thresholds are per-URI settings:
// sheets may override them for a SURT prefix (scope.maxHops: 1 is the
// resourceScope sheet), so the engine reads them from the effective profile
// of each candidate rather than from the rule list.
type Scope struct {
	// MaxHops is TooManyHopsDecideRule's limit on the hop-path length.
	// -1 means no limit (the noMaxHops sheet).
	MaxHops int `yaml:"maxHops"`
	// MaxTransHops is TransclusionDecideRule's limit on trailing non-link
	// hops (embeds, redirects, speculative embeds).
	MaxTransHops int `yaml:"maxTransHops"`
	// MaxSpeculativeHops is TransclusionDecideRule's limit on trailing
	// speculative (X) hops.
	MaxSpeculativeHops int `yaml:"maxSpeculativeHops"`
	// MaxPathDepth is TooManyPathSegmentsDecideRule's limit on the number
	// of "/" in the URL path.
	MaxPathDepth int `yaml:"maxPathDepth"`
	// MaxRepetitions is PathologicalPathDecideRule's limit on consecutive
	// repeats of a path segment; 0 disables the rule, as in Heritrix.
	MaxRepetitions int `yaml:"maxRepetitions"`
	// ExcludedSurtsFile lists SURT prefixes that are always out of scope.
	// It applies after every rule, as a final REJECT, and again just
	// before each fetch, so a site blocked after a complaint stops being
	// fetched as soon as the file is reloaded. Empty means none.
	ExcludedSurtsFile string `yaml:"excludedSurtsFile"`
	// SourceCheckInterval is how often, in seconds, watched SURT files are
	// polled for changes (UKWA's WatchedFileSurtPrefixedDecideRule name).
	SourceCheckInterval int `yaml:"sourceCheckInterval"`
	// LogToFile writes one line per scope decision to the crawl's scope
	// log, as Heritrix's DecideRuleSequence.logToFile does.
	LogToFile bool `yaml:"logToFile"`
	// LogExtraInfo adds hop path, via, source tag and host as JSON to each
	// scope log line (Heritrix's logExtraInfo).
	LogExtraInfo bool `yaml:"logExtraInfo"`
	// SeedsRedirectNewSeeds makes the target of a seed's redirect a seed
	// too, with the seed's sheets, source tag, launch timestamp and scope
	// (Heritrix's candidatesProcessor.seedsRedirectNewSeeds, on by
	// default there too): otherwise a seed that moved to another host
	// captures its landing page and nothing under it. Read from the
	// redirecting seed's effective settings.
	SeedsRedirectNewSeeds bool `yaml:"seedsRedirectNewSeeds"`
	// Traps tunes the crawler-trap heuristics (pkg/traps) applied to a
	// page's links, by the page's settings.
	Traps Traps `yaml:"traps"`
	// Rules is the ordered rule list; the last rule that answers ACCEPT or
	// REJECT decides. Rules are numbered from 1 in this order in decisions
	// ("ACCEPT by rule #2 SurtPrefixedDecideRule") and in errors.
	Rules RuleList `yaml:"rules"`
}

func defaultScope() Scope {
	return Scope{
		MaxHops: 20, MaxTransHops: 2, MaxSpeculativeHops: 1, MaxPathDepth: 20, MaxRepetitions: 2,
		SourceCheckInterval: 1, SeedsRedirectNewSeeds: true,
		Traps: Traps{MaxQueryBytes: 1024, MaxQueryParams: 48, MaxRepeatedParam: 4, MaxPerPattern: 10000},
		Rules: NewRuleList(DefaultRules()...),
	}
}

// DefaultRules returns the scope of Heritrix's default crawler-beans: reject
// everything, accept what is under a seed's SURT prefix, reject too many
// hops, accept transclusions near an accepted page, reject configured SURTs
// and regexes, reject pathological and too deep paths, accept
// prerequisites, and reject unsupported schemes.
func DefaultRules() []Rule {
	no := false
	return []Rule{
		{Name: "RejectDecideRule"},
		{Name: "SurtPrefixedDecideRule", Decision: Accept},
		{Name: "TooManyHopsDecideRule"},
		{Name: "TransclusionDecideRule"},
		{Name: "SurtPrefixedDecideRule", Decision: Reject, SeedsAsSurtPrefixes: &no},
		{Name: "MatchesListRegexDecideRule", Decision: Reject},
		{Name: "PathologicalPathDecideRule"},
		{Name: "TooManyPathSegmentsDecideRule"},
		{Name: "PrerequisiteAcceptDecideRule"},
		{Name: "SchemeNotInSetDecideRule"},
	}
}

// Decisions a rule can be configured to give.
const (
	Accept = "ACCEPT"
	Reject = "REJECT"
)

// Validate checks the section on its own, as Profile.Validate does.
func (s Scope) Validate() error { return s.validate() }

func (s Scope) validate() error {
	var errs []error
	if s.MaxHops < -1 {
		errs = append(errs, errors.New("scope.maxHops: must be >= 0, or -1 for no limit"))
	}
	for _, f := range []struct {
		key string
		v   int
	}{
		{"maxTransHops", s.MaxTransHops}, {"maxSpeculativeHops", s.MaxSpeculativeHops},
		{"maxPathDepth", s.MaxPathDepth}, {"maxRepetitions", s.MaxRepetitions},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("scope.%s: must be >= 0", f.key))
		}
	}
	if s.SourceCheckInterval <= 0 {
		errs = append(errs, errors.New("scope.sourceCheckInterval: must be > 0 seconds"))
	}
	errs = append(errs, s.Traps.validate())
	rules := s.Rules.Rules()
	if len(rules) == 0 {
		errs = append(errs, errors.New("scope.rules: empty; no URI could ever be accepted"))
	}
	for i, r := range rules {
		if err := r.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.where(i+1), err))
		}
	}
	return errors.Join(errs...)
}

// Rule is one entry of the scope rule list: a Heritrix decide rule name
// with its decision and parameters. Which parameters a rule takes is
// fixed by its name (see RuleNames); giving another is a load error.
type Rule struct {
	// Name is the Heritrix class name, e.g. "SurtPrefixedDecideRule".
	Name string `yaml:"rule"`
	// Decision is ACCEPT or REJECT; empty means the rule's Heritrix
	// default. Rules with a fixed answer (AcceptDecideRule, ...) take none.
	Decision string `yaml:"decision,omitempty"`
	// Comment is free text kept for operators.
	Comment string `yaml:"comment,omitempty"`

	// SURT-prefix rules (SurtPrefixed, OnDomains, OnHosts and their Not
	// forms). SurtsSourceFile is a watched file of prefixes; Surts lists
	// prefixes inline in the same syntax ("+http://(uk," or a URL);
	// SeedsAsSurtPrefixes (default true) adds the crawl's seeds;
	// AlsoCheckVia also matches a URI whose via URI is under a prefix.
	SurtsSourceFile     string   `yaml:"surtsSourceFile,omitempty"`
	Surts               []string `yaml:"surts,omitempty"`
	SeedsAsSurtPrefixes *bool    `yaml:"seedsAsSurtPrefixes,omitempty"`
	AlsoCheckVia        bool     `yaml:"alsoCheckVia,omitempty"`

	// Regex rules. Patterns must match the whole string, as Java's
	// Matcher.matches() does; they use Go (RE2) syntax.
	Regex         string   `yaml:"regex,omitempty"`
	RegexList     []string `yaml:"regexList,omitempty"`
	ListLogicalOr *bool    `yaml:"listLogicalOr,omitempty"`

	// Schemes is SchemeNotInSetDecideRule's set (default http, https, ftp,
	// dns, whois, sftp, as Heritrix).
	Schemes []string `yaml:"schemes,omitempty"`

	// ExternalGeoLocationDecideRule: accepted ISO country codes, the
	// GeoIP2/GeoLite2 City or Country database, and whether to look up
	// every URI (true, UKWA's default) or only those the rule could still
	// change (false: cheaper, but accepted URIs get no geo: annotation).
	CountryCodes   []string `yaml:"countryCodes,omitempty"`
	Database       string   `yaml:"database,omitempty"`
	LookupEveryURI *bool    `yaml:"lookupEveryUri,omitempty"`

	// Line is the rule's line in the profile file (0 when built in code).
	Line int `yaml:"-"`
}

// ruleKind describes one rule class: its default decision, whether the
// decision is fixed, and which parameter keys it takes.
type ruleKind struct {
	decision string
	fixed    bool
	params   []string
}

// ruleKindOf returns the description of a rule class. It is a switch
// rather than a map so the catalogue cannot be changed at run time.
func ruleKindOf(name string) (ruleKind, bool) {
	switch name {
	case "AcceptDecideRule", "SeedAcceptDecideRule", "PrerequisiteAcceptDecideRule":
		return ruleKind{decision: Accept, fixed: true}, true
	case "RejectDecideRule", "PathologicalPathDecideRule":
		return ruleKind{decision: Reject, fixed: true}, true
	case "SurtPrefixedDecideRule", "NotSurtPrefixedDecideRule", "OnDomainsDecideRule",
		"NotOnDomainsDecideRule", "OnHostsDecideRule", "NotOnHostsDecideRule":
		return ruleKind{decision: Accept, params: []string{"surtsSourceFile", "surts", "seedsAsSurtPrefixes", "alsoCheckVia"}}, true
	case "TooManyHopsDecideRule", "TooManyPathSegmentsDecideRule":
		return ruleKind{decision: Reject}, true
	case "TransclusionDecideRule":
		return ruleKind{decision: Accept}, true
	case "MatchesListRegexDecideRule", "NotMatchesListRegexDecideRule":
		return ruleKind{decision: Accept, params: []string{"regexList", "listLogicalOr"}}, true
	case "MatchesRegexDecideRule", "NotMatchesRegexDecideRule", "HopsPathMatchesRegexDecideRule":
		return ruleKind{decision: Accept, params: []string{"regex"}}, true
	case "SchemeNotInSetDecideRule":
		return ruleKind{decision: Reject, params: []string{"schemes"}}, true
	case "ExternalGeoLocationDecideRule":
		return ruleKind{decision: Accept, params: []string{"countryCodes", "database", "lookupEveryUri"}}, true
	}
	return ruleKind{}, false
}

// RuleNames lists every rule class a profile may name.
func RuleNames() []string {
	return []string{
		"AcceptDecideRule", "RejectDecideRule", "SeedAcceptDecideRule", "PrerequisiteAcceptDecideRule",
		"PathologicalPathDecideRule", "SurtPrefixedDecideRule", "NotSurtPrefixedDecideRule",
		"OnDomainsDecideRule", "NotOnDomainsDecideRule", "OnHostsDecideRule", "NotOnHostsDecideRule",
		"TooManyHopsDecideRule", "TooManyPathSegmentsDecideRule", "TransclusionDecideRule",
		"MatchesListRegexDecideRule", "NotMatchesListRegexDecideRule", "MatchesRegexDecideRule",
		"NotMatchesRegexDecideRule", "HopsPathMatchesRegexDecideRule", "SchemeNotInSetDecideRule",
		"ExternalGeoLocationDecideRule",
	}
}

// EffectiveDecision is the configured decision, or the rule's default.
func (r Rule) EffectiveDecision() string {
	if k, ok := ruleKindOf(r.Name); ok && (k.fixed || r.Decision == "") {
		return k.decision
	}
	return r.Decision
}

// SeedsAsPrefixes reports whether the crawl's seeds feed this rule's
// prefix set (Heritrix's default is true).
func (r Rule) SeedsAsPrefixes() bool { return r.SeedsAsSurtPrefixes == nil || *r.SeedsAsSurtPrefixes }

// LogicalOr reports whether any regex of RegexList suffices (default) or
// all must match.
func (r Rule) LogicalOr() bool { return r.ListLogicalOr == nil || *r.ListLogicalOr }

// LookupEvery reports whether the geolocation rule runs even when it
// cannot change the decision, so that every URI gets its geo: annotation.
func (r Rule) LookupEvery() bool { return r.LookupEveryURI == nil || *r.LookupEveryURI }

// EffectiveSchemes is the configured scheme set or Heritrix's default.
func (r Rule) EffectiveSchemes() []string {
	if len(r.Schemes) > 0 {
		return r.Schemes
	}
	return []string{"http", "https", "ftp", "dns", "whois", "sftp"}
}

// FullMatch compiles a rule pattern so that it must match the whole
// string, as Java's Matcher.matches() requires.
func FullMatch(pattern string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + pattern + `)$`)
}

// where names the rule in errors: its 1-based number and, when loaded
// from a file, its line.
func (r Rule) where(n int) string {
	if r.Line > 0 {
		return fmt.Sprintf("line %d: scope.rules #%d (%s)", r.Line, n, r.Name)
	}
	return fmt.Sprintf("scope.rules #%d (%s)", n, r.Name)
}

// Validate checks the rule name, its decision, that only its own
// parameters are set, and that its patterns and codes are well formed.
func (r Rule) Validate() error {
	k, ok := ruleKindOf(r.Name)
	if !ok {
		return fmt.Errorf("unknown rule %q", r.Name)
	}
	var errs []error
	switch {
	case r.Decision == "":
	case k.fixed:
		errs = append(errs, fmt.Errorf("decision: %s always answers %s", r.Name, k.decision))
	case r.Decision != Accept && r.Decision != Reject:
		errs = append(errs, fmt.Errorf("decision: %q must be ACCEPT or REJECT", r.Decision))
	}
	for _, p := range r.setParams() {
		if !contains(k.params, p) {
			errs = append(errs, fmt.Errorf("parameter %s does not apply to %s", p, r.Name))
		}
	}
	errs = append(errs, r.validateValues()...)
	return errors.Join(errs...)
}

// setParams lists the parameters holding a non-zero value.
func (r Rule) setParams() []string {
	var out []string
	add := func(set bool, key string) {
		if set {
			out = append(out, key)
		}
	}
	add(r.SurtsSourceFile != "", "surtsSourceFile")
	add(len(r.Surts) > 0, "surts")
	add(r.SeedsAsSurtPrefixes != nil, "seedsAsSurtPrefixes")
	add(r.AlsoCheckVia, "alsoCheckVia")
	add(r.Regex != "", "regex")
	add(len(r.RegexList) > 0, "regexList")
	add(r.ListLogicalOr != nil, "listLogicalOr")
	add(len(r.Schemes) > 0, "schemes")
	add(len(r.CountryCodes) > 0, "countryCodes")
	add(r.Database != "", "database")
	add(r.LookupEveryURI != nil, "lookupEveryUri")
	return out
}

func (r Rule) validateValues() []error {
	var errs []error
	k, _ := ruleKindOf(r.Name)
	if contains(k.params, "regex") {
		if r.Regex == "" {
			errs = append(errs, errors.New("regex: required"))
		} else if _, err := FullMatch(r.Regex); err != nil {
			errs = append(errs, fmt.Errorf("regex %q: %w", r.Regex, err))
		}
	}
	for i, re := range r.RegexList {
		if _, err := FullMatch(re); err != nil || re == "" {
			errs = append(errs, fmt.Errorf("regexList[%d] %q: invalid pattern: %v", i, re, err))
		}
	}
	for i, s := range r.Schemes {
		if s == "" || s != strings.ToLower(s) || strings.ContainsAny(s, ":/ ") {
			errs = append(errs, fmt.Errorf("schemes[%d] %q: want a lowercase scheme name such as https", i, s))
		}
	}
	if r.Name == "ExternalGeoLocationDecideRule" {
		if len(r.CountryCodes) == 0 {
			errs = append(errs, errors.New("countryCodes: required (e.g. [GB])"))
		}
		if r.Database == "" {
			errs = append(errs, errors.New("database: required (path to a GeoLite2-City .mmdb)"))
		}
	}
	for i, c := range r.CountryCodes {
		if len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' {
			errs = append(errs, fmt.Errorf("countryCodes[%d] %q: want an ISO 3166-1 alpha-2 code such as GB", i, c))
		}
	}
	for i, s := range r.Surts {
		if strings.TrimSpace(s) == "" {
			errs = append(errs, fmt.Errorf("surts[%d]: empty entry", i))
		}
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// RuleList is the ordered scope rule list. It holds the rules behind a
// pointer so that Profile stays comparable and cheap to copy (sheets copy
// a profile per URI); a loaded list is never modified, and Rules returns
// a copy.
type RuleList struct {
	rules *[]Rule
}

// NewRuleList returns a list holding a copy of rules.
func NewRuleList(rules ...Rule) RuleList {
	cp := append([]Rule(nil), rules...)
	return RuleList{rules: &cp}
}

// Rules returns a copy of the rules in order.
func (l RuleList) Rules() []Rule {
	if l.rules == nil {
		return nil
	}
	return append([]Rule(nil), *l.rules...)
}

// Len is the number of rules.
func (l RuleList) Len() int {
	if l.rules == nil {
		return 0
	}
	return len(*l.rules)
}

// MarshalYAML renders the list as a YAML sequence.
func (l RuleList) MarshalYAML() (any, error) { return l.Rules(), nil }

// UnmarshalYAML reads a sequence of {rule: NAME, decision: ..., params}
// mappings strictly: an unknown rule, an unknown or inapplicable parameter
// or a repeated key is an error naming the key and its line.
func (l *RuleList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: scope.rules: want a list of {rule: NAME, ...} entries", n.Line)
	}
	rules := make([]Rule, 0, len(n.Content))
	for i, item := range n.Content {
		r, err := decodeRule(i+1, item)
		if err != nil {
			return err
		}
		rules = append(rules, r)
	}
	l.rules = &rules
	return nil
}

// perURIKeys are thresholds that look like rule parameters in Heritrix
// but are scope-level settings here, so that sheets can override them.
func perURIKey(key string) bool {
	switch key {
	case "maxHops", "maxTransHops", "maxSpeculativeHops", "maxPathDepth", "maxRepetitions":
		return true
	}
	return false
}

func decodeRule(num int, n *yaml.Node) (Rule, error) {
	r := Rule{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		return r, fmt.Errorf("line %d: scope.rules #%d: want a mapping {rule: NAME, ...}", n.Line, num)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Value == "rule" {
			if err := k.Decode(new(string)); err != nil || n.Content[i+1].Decode(&r.Name) != nil {
				return r, fmt.Errorf("line %d: scope.rules #%d: rule: want a rule name", k.Line, num)
			}
		}
	}
	kind, ok := ruleKindOf(r.Name)
	if !ok {
		if r.Name == "" {
			return r, fmt.Errorf("line %d: scope.rules #%d: missing key rule (the rule name)", n.Line, num)
		}
		return r, fmt.Errorf("line %d: scope.rules #%d: rule: unknown rule %q", n.Line, num, r.Name)
	}
	fields := r.fieldPointers()
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if err := checkRuleKey(num, r.Name, kind, k, fields, seen); err != nil {
			return r, err
		}
		if err := v.Decode(fields[k.Value]); err != nil {
			return r, fmt.Errorf("scope.rules #%d (%s).%s: %w", num, r.Name, k.Value, err)
		}
	}
	return r, nil
}

// checkRuleKey rejects a key that is repeated, unknown, or not a parameter
// of this rule class.
func checkRuleKey(num int, name string, kind ruleKind, k *yaml.Node, fields map[string]any, seen map[string]bool) error {
	key := k.Value
	at := fmt.Sprintf("line %d: scope.rules #%d (%s)", k.Line, num, name)
	switch {
	case seen[key]:
		return fmt.Errorf("%s: key %s given twice", at, key)
	case perURIKey(key):
		return fmt.Errorf("%s: %s is set as scope.%s, per URI, so that sheets can override it", at, key, key)
	case fields[key] == nil:
		return fmt.Errorf("%s: unknown parameter %q", at, key)
	case key == "decision" && kind.fixed:
		return fmt.Errorf("%s: decision: %s always answers %s", at, name, kind.decision)
	case key != "rule" && key != "decision" && key != "comment" && !contains(kind.params, key):
		return fmt.Errorf("%s: parameter %s does not apply to %s", at, key, name)
	}
	seen[key] = true
	return nil
}

// fieldPointers maps each YAML key of Rule to its field.
func (r *Rule) fieldPointers() map[string]any {
	return map[string]any{
		"rule": &r.Name, "decision": &r.Decision, "comment": &r.Comment,
		"surtsSourceFile": &r.SurtsSourceFile, "surts": &r.Surts,
		"seedsAsSurtPrefixes": &r.SeedsAsSurtPrefixes, "alsoCheckVia": &r.AlsoCheckVia,
		"regex": &r.Regex, "regexList": &r.RegexList, "listLogicalOr": &r.ListLogicalOr,
		"schemes": &r.Schemes, "countryCodes": &r.CountryCodes, "database": &r.Database,
		"lookupEveryUri": &r.LookupEveryURI,
	}
}

// Traps settings: a page's links that look like a crawler trap's are
// dropped (pkg/traps), the page annotated trap:<kind>.
type Traps struct {
	// MaxQueryBytes, MaxQueryParams and MaxRepeatedParam bound a link's
	// query: longer, with more parameters, or naming one parameter more
	// often is an ever-growing query.
	MaxQueryBytes    int `yaml:"maxQueryBytes"`
	MaxQueryParams   int `yaml:"maxQueryParams"`
	MaxRepeatedParam int `yaml:"maxRepeatedParam"`
	// MaxPerPattern bounds the new URLs of one self-similar pattern (a
	// page's links of its own shape, digits and ids aside) per host;
	// -1 turns it off.
	MaxPerPattern int64 `yaml:"maxPerPattern"`
}

func (t Traps) validate() error {
	if t.MaxQueryBytes < 1 || t.MaxQueryParams < 1 || t.MaxRepeatedParam < 1 || t.MaxPerPattern < -1 || t.MaxPerPattern == 0 {
		return fmt.Errorf("scope.traps: maxQueryBytes (%d), maxQueryParams (%d) and maxRepeatedParam (%d) must be >= 1, maxPerPattern (%d) >= 1 or -1 (off)",
			t.MaxQueryBytes, t.MaxQueryParams, t.MaxRepeatedParam, t.MaxPerPattern)
	}
	return nil
}
