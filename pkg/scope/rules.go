package scope

import (
	"context"
	"strings"
)

// rule is one decide rule. Implementations are immutable; hot data they
// read (prefix sets) is behind atomic pointers.
type rule interface {
	// only is the single non-PASS answer a predicated rule can give. The
	// engine skips the rule when the decision so far already is that
	// answer, since it could not change it (Heritrix's onlyDecision). Pass
	// means the rule always runs.
	only() Result
	// decide answers for the candidate.
	decide(ctx context.Context, c *Candidate, p *Params, st *evalState) Result
}

// evalState carries what rules add to one decision.
type evalState struct {
	annotations []string
}

// predicate is the shared part of Heritrix's PredicatedDecideRule: when the
// test holds the rule answers its configured decision, otherwise PASS.
type predicate struct {
	decision  Result
	alwaysRun bool // never skipped (lookupEveryUri)
}

func (p predicate) only() Result {
	if p.alwaysRun {
		return Pass
	}
	return p.decision
}

func (p predicate) answer(holds bool) Result {
	if holds {
		return p.decision
	}
	return Pass
}

// fixedRule always gives one answer: AcceptDecideRule, RejectDecideRule.
type fixedRule struct{ result Result }

func (r fixedRule) only() Result { return Pass }
func (r fixedRule) decide(context.Context, *Candidate, *Params, *evalState) Result {
	return r.result
}

// seedAcceptRule accepts seeds (SeedAcceptDecideRule).
type seedAcceptRule struct{}

func (seedAcceptRule) only() Result { return Pass }
func (seedAcceptRule) decide(_ context.Context, c *Candidate, _ *Params, _ *evalState) Result {
	if c.IsSeed {
		return Accept
	}
	return Pass
}

// prerequisiteRule accepts URIs whose last hop is P, such as robots.txt
// and DNS lookups needed before an in-scope URI
// (PrerequisiteAcceptDecideRule).
type prerequisiteRule struct{}

func (prerequisiteRule) only() Result { return Pass }
func (prerequisiteRule) decide(_ context.Context, c *Candidate, _ *Params, _ *evalState) Result {
	if strings.HasSuffix(c.HopPath, "P") {
		return Accept
	}
	return Pass
}

// tooManyHopsRule matches URIs more than maxHops hops from their seed
// (TooManyHopsDecideRule). maxHops -1 disables it (the noMaxHops sheet).
type tooManyHopsRule struct{ predicate }

func (r tooManyHopsRule) decide(_ context.Context, c *Candidate, p *Params, _ *evalState) Result {
	return r.answer(p.MaxHops >= 0 && len(c.HopPath) > p.MaxHops)
}

// tooManySegmentsRule matches URIs whose path has more than maxPathDepth
// slashes (TooManyPathSegmentsDecideRule).
type tooManySegmentsRule struct{ predicate }

func (r tooManySegmentsRule) decide(_ context.Context, c *Candidate, p *Params, _ *evalState) Result {
	path, ok := c.pathname()
	if !ok {
		return Pass
	}
	return r.answer(strings.Count(path, "/") > p.MaxPathDepth)
}

// transclusionRule matches URIs reached from a navigable page through at
// most maxTransHops trailing non-link hops (embeds, redirects,
// speculative embeds), of which at most maxSpeculativeHops are
// speculative (TransclusionDecideRule). Redirects (R) do not count
// against maxTransHops, as in Heritrix.
type transclusionRule struct{ predicate }

func (r transclusionRule) decide(_ context.Context, c *Candidate, p *Params, _ *evalState) Result {
	return r.answer(isTransclusion(c.HopPath, p.MaxTransHops, p.MaxSpeculativeHops))
}

func isTransclusion(hops string, maxTrans, maxSpec int) bool {
	all, nonRedirect, spec := 0, 0, 0
	for i := len(hops) - 1; i >= 0; i-- {
		h := hops[i]
		if h == 'L' || h == 'S' || h == 'M' { // navigation ends the trailing run
			break
		}
		all++
		if h != 'R' {
			nonRedirect++
		}
		if h == 'X' {
			spec++
		}
	}
	return all > 0 && spec <= maxSpec && nonRedirect <= maxTrans
}

// pathologicalRule rejects URIs in which some run of path segments repeats
// more than maxRepetitions times in a row, e.g. /a/b/b/b/ with 2
// (PathologicalPathDecideRule; Heritrix's regex .*?/(.*?/)\1{n,}.*
// evaluated without backtracking regexes). It always answers REJECT.
type pathologicalRule struct{}

func (pathologicalRule) only() Result { return Pass }
func (pathologicalRule) decide(_ context.Context, c *Candidate, p *Params, _ *evalState) Result {
	if p.MaxRepetitions > 0 && repeatsSegments(c.URL, p.MaxRepetitions) {
		return Reject
	}
	return Pass
}

// repeatsSegments reports whether, after some "/", a string g ending in "/"
// occurs rep+1 times in a row.
func repeatsSegments(s string, rep int) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '/' {
			continue
		}
		start := i + 1
		for j := start; j < len(s); j++ {
			if s[j] != '/' {
				continue
			}
			g := s[start : j+1]
			if len(s)-(j+1) < rep*len(g) {
				break // longer groups cannot repeat either
			}
			if repeatsAt(s[j+1:], g, rep) {
				return true
			}
		}
	}
	return false
}

func repeatsAt(rest, g string, rep int) bool {
	for k := 0; k < rep; k++ {
		if !strings.HasPrefix(rest, g) {
			return false
		}
		rest = rest[len(g):]
	}
	return true
}

// schemeRule matches URIs whose scheme is not in the set
// (SchemeNotInSetDecideRule).
type schemeRule struct {
	predicate
	schemes map[string]bool
}

func (r schemeRule) decide(_ context.Context, c *Candidate, _ *Params, _ *evalState) Result {
	scheme, ok := c.scheme()
	if !ok {
		return Pass
	}
	return r.answer(!r.schemes[scheme])
}
