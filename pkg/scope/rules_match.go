package scope

import (
	"context"
	"strings"
)

// surtConv says how a SURT rule turns its prefixes into the ones it
// tests: as they are (SurtPrefixed), as domains (OnDomains: path dropped,
// "www," dropped, subdomains open) or as hosts (OnHosts: path dropped).
type surtConv uint8

const (
	convNone surtConv = iota
	convDomain
	convHost
)

func (c surtConv) apply(prefixes []string) []string {
	switch c {
	case convDomain:
		return convertAll(prefixes, toDomain)
	case convHost:
		return convertAll(prefixes, toHost)
	}
	return prefixes
}

// surtRule is SurtPrefixedDecideRule and its OnDomains/OnHosts and Not…
// variants. Its prefixes are the union of an inline list, a watched file
// and, with seedsAsSurtPrefixes, the crawl's seeds.
type surtRule struct {
	predicate
	invert       bool
	conv         surtConv
	alsoCheckVia bool
	inline       *PrefixSet
	file         *watchedSet // nil without surtsSourceFile
	seeds        *Seeds      // nil unless seedsAsSurtPrefixes
}

func (r *surtRule) decide(_ context.Context, c *Candidate, _ *Params, _ *evalState) Result {
	var view *seedView
	if r.seeds != nil {
		view = r.seeds.load()
	}
	m := r.matches(c.SURT, view)
	if !m && c.Via != "" && (r.alsoCheckVia || r.plusOne(view)) {
		v := c.viaSURTForm()
		m = r.alsoCheckVia && r.matches(v, view) || r.plusOne(view) && view.via.ContainsPrefixOf(v)
	}
	return r.answer(m != r.invert)
}

// plusOne reports whether plus-one seeds exist for this rule: only the
// plain seed-prefix form admits their outlinks.
func (r *surtRule) plusOne(view *seedView) bool {
	return view != nil && r.conv == convNone && view.via.Len() > 0
}

func (r *surtRule) matches(s string, view *seedView) bool {
	if r.inline.ContainsPrefixOf(s) || (r.file != nil && r.file.load().ContainsPrefixOf(s)) {
		return true
	}
	if view == nil {
		return false
	}
	switch r.conv {
	case convDomain:
		return view.domains.ContainsPrefixOf(s)
	case convHost:
		return view.hosts.ContainsPrefixOf(s)
	}
	return view.prefixes.ContainsPrefixOf(s)
}

// listRegexRule is MatchesListRegexDecideRule and its Not form: the URI
// must fully match any (listLogicalOr, default) or all of the patterns. An
// empty list never matches, so the Not form then always does, as in
// Heritrix.
type listRegexRule struct {
	predicate
	invert bool
	or     bool
	res    []pattern
}

func (r listRegexRule) decide(_ context.Context, c *Candidate, _ *Params, _ *evalState) Result {
	return r.answer(r.matches(c.URL) != r.invert)
}

func (r listRegexRule) matches(s string) bool {
	if len(r.res) == 0 {
		return false
	}
	for _, re := range r.res {
		if re.match(s) == r.or {
			return r.or // OR: first match wins; AND: first miss loses
		}
	}
	return !r.or
}

// regexRule is MatchesRegexDecideRule, NotMatchesRegexDecideRule and
// HopsPathMatchesRegexDecideRule (which tests the hop path, not the URI).
type regexRule struct {
	predicate
	invert  bool
	hopPath bool
	re      pattern
}

func (r regexRule) decide(_ context.Context, c *Candidate, _ *Params, _ *evalState) Result {
	s := c.URL
	if r.hopPath {
		s = c.HopPath
	}
	return r.answer(r.re.match(s) != r.invert)
}

// schemeSet builds the lookup set of SchemeNotInSetDecideRule.
func schemeSet(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[strings.ToLower(s)] = true
	}
	return m
}
