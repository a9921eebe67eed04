package scope

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/geolocate"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// builder turns the profile's rule list into rules.
type builder struct {
	e    *Engine
	opts Options
	dbs  map[string]*geolocate.Locator // one per database file
}

func (b *builder) build(cfg profile.Scope) error {
	list := cfg.Rules.Rules()
	names := make([]string, 0, len(list)+1)
	var domains, hosts bool
	for i, pr := range list {
		r, err := b.rule(pr)
		if err != nil {
			return ruleError(pr, i+1, err)
		}
		if sr, ok := r.(*surtRule); ok && sr.seeds != nil {
			domains = domains || sr.conv == convDomain
			hosts = hosts || sr.conv == convHost
		}
		b.e.rules = append(b.e.rules, entry{num: i + 1, name: pr.Name, decision: pr.EffectiveDecision(),
			comment: pr.Comment, r: r})
		names = append(names, pr.Name)
	}
	b.e.seeds.enable(domains, hosts)
	if cfg.ExcludedSurtsFile != "" {
		w, err := newWatchedSet(resolve(b.opts.BaseDir, cfg.ExcludedSurtsFile), convNone)
		if err != nil {
			return fmt.Errorf("scope.excludedSurtsFile: %w", err)
		}
		b.e.excluded = w
		b.e.watched = append(b.e.watched, w)
	}
	if cfg.ExcludedSurtsFile != "" || b.opts.Exclusions != nil {
		names = append(names, ExclusionRuleName)
	}
	b.e.metrics = newMetrics(b.opts.Registerer, names)
	for _, w := range b.e.watched {
		b.e.metrics.prefixes.WithLabelValues(w.path).Set(float64(w.load().Len()))
	}
	return b.openLog(cfg)
}

func (b *builder) openLog(cfg profile.Scope) error {
	if !cfg.LogToFile {
		return nil
	}
	if b.opts.LogDir == "" {
		return fmt.Errorf("scope.logToFile: no log directory given")
	}
	l, err := OpenDecisionLog(filepath.Join(b.opts.LogDir, "scope.log"), DecisionLogOptions{
		ExtraInfo: cfg.LogExtraInfo, OnDrop: b.e.metrics.logDrops.Inc})
	if err != nil {
		return fmt.Errorf("scope.logToFile: %w", err)
	}
	b.e.log = l
	b.e.closers = append(b.e.closers, l)
	return nil
}

// rule builds one rule; pr has been validated.
func (b *builder) rule(pr profile.Rule) (rule, error) {
	dec, err := parseResult(pr.EffectiveDecision())
	if err != nil {
		return nil, err
	}
	pred := predicate{decision: dec}
	switch pr.Name {
	case "AcceptDecideRule", "RejectDecideRule":
		return fixedRule{result: dec}, nil
	case "SeedAcceptDecideRule":
		return seedAcceptRule{}, nil
	case "PrerequisiteAcceptDecideRule":
		return prerequisiteRule{}, nil
	case "PathologicalPathDecideRule":
		return pathologicalRule{}, nil
	case "TooManyHopsDecideRule":
		return tooManyHopsRule{pred}, nil
	case "TooManyPathSegmentsDecideRule":
		return tooManySegmentsRule{pred}, nil
	case "TransclusionDecideRule":
		return transclusionRule{pred}, nil
	case "SchemeNotInSetDecideRule":
		return schemeRule{predicate: pred, schemes: schemeSet(pr.EffectiveSchemes())}, nil
	case "SurtPrefixedDecideRule", "NotSurtPrefixedDecideRule", "OnDomainsDecideRule",
		"NotOnDomainsDecideRule", "OnHostsDecideRule", "NotOnHostsDecideRule":
		return b.surtRule(pr, pred)
	case "MatchesListRegexDecideRule", "NotMatchesListRegexDecideRule":
		res, err := compileAll(pr.RegexList)
		return listRegexRule{predicate: pred, invert: strings.HasPrefix(pr.Name, "Not"), or: pr.LogicalOr(), res: res}, err
	case "MatchesRegexDecideRule", "NotMatchesRegexDecideRule", "HopsPathMatchesRegexDecideRule":
		re, err := compilePattern(pr.Regex)
		return regexRule{predicate: pred, invert: strings.HasPrefix(pr.Name, "Not"),
			hopPath: pr.Name == "HopsPathMatchesRegexDecideRule", re: re}, err
	case "ExternalGeoLocationDecideRule":
		return b.geoRule(pr, pred)
	}
	return nil, fmt.Errorf("no implementation of rule %q", pr.Name)
}

func (b *builder) surtRule(pr profile.Rule, pred predicate) (rule, error) {
	r := &surtRule{predicate: pred, invert: strings.HasPrefix(pr.Name, "Not"), alsoCheckVia: pr.AlsoCheckVia}
	switch {
	case strings.Contains(pr.Name, "OnDomains"):
		r.conv = convDomain
	case strings.Contains(pr.Name, "OnHosts"):
		r.conv = convHost
	}
	inline := make([]string, 0, len(pr.Surts))
	for i, line := range pr.Surts {
		p, ok, err := PrefixFromLine(line)
		if err != nil {
			return nil, fmt.Errorf("surts[%d] %q: %w", i, line, err)
		}
		if ok {
			inline = append(inline, p)
		}
	}
	r.inline = NewPrefixSet(r.conv.apply(inline))
	if pr.SurtsSourceFile != "" {
		w, err := newWatchedSet(resolve(b.opts.BaseDir, pr.SurtsSourceFile), r.conv)
		if err != nil {
			return nil, fmt.Errorf("surtsSourceFile: %w", err)
		}
		r.file = w
		b.e.watched = append(b.e.watched, w)
	}
	if pr.SeedsAsPrefixes() {
		r.seeds = b.e.seeds
	}
	return r, nil
}

func (b *builder) geoRule(pr profile.Rule, pred predicate) (rule, error) {
	path := resolve(b.opts.BaseDir, pr.Database)
	loc, ok := b.dbs[path]
	if !ok {
		db, err := geolocate.Open(path)
		if err != nil {
			return nil, fmt.Errorf("database: %w", err)
		}
		b.e.closers = append(b.e.closers, db)
		res := b.opts.Resolver
		if res == nil {
			res = &net.Resolver{}
		}
		loc = geolocate.NewLocator(db, res, b.opts.Geo)
		b.dbs[path] = loc
	}
	pred.alwaysRun = pr.LookupEvery()
	countries := make(map[string]bool, len(pr.CountryCodes))
	for _, c := range pr.CountryCodes {
		countries[c] = true
	}
	return &geoRule{predicate: pred, locator: loc, countries: countries}, nil
}

func compileAll(patterns []string) ([]pattern, error) {
	out := make([]pattern, len(patterns))
	for i, p := range patterns {
		re, err := compilePattern(p)
		if err != nil {
			return nil, fmt.Errorf("regexList[%d]: %w", i, err)
		}
		out[i] = re
	}
	return out, nil
}
