package scope

import (
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/profile"
)

// pattern is a whole-string regex with a literal prefilter. Go's regexp
// costs about a microsecond per pattern on a typical URL, and UKWA's
// exclusion list alone has 21 patterns; most are of the form
// ^.+literal.+$, and a URL that lacks the literal cannot match. So the
// literals every match must contain are extracted once, and a cheap
// substring search rules most URLs out before the regex runs.
type pattern struct {
	re   *regexp.Regexp
	lits []string // each must occur in any matching string
}

func compilePattern(p string) (pattern, error) {
	re, err := profile.FullMatch(p)
	if err != nil {
		return pattern{}, err
	}
	return pattern{re: re, lits: requiredLiterals(p)}, nil
}

func (p pattern) match(s string) bool {
	for _, l := range p.lits {
		if !strings.Contains(s, l) {
			return false
		}
	}
	return p.re.MatchString(s)
}

// requiredLiterals returns the case-sensitive literals that are mandatory
// parts of the pattern: direct elements of its top-level concatenation
// (looking through groups), not inside alternations, repetitions or
// optional parts. The result only ever narrows what cannot match; an
// unparsable pattern gives none.
func requiredLiterals(p string) []string {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return nil
	}
	var out []string
	var walk func(n *syntax.Regexp)
	walk = func(n *syntax.Regexp) {
		switch n.Op {
		case syntax.OpConcat:
			for _, sub := range n.Sub {
				walk(sub)
			}
		case syntax.OpCapture:
			walk(n.Sub[0])
		case syntax.OpLiteral:
			if n.Flags&syntax.FoldCase == 0 && len(n.Rune) >= 2 {
				out = append(out, string(n.Rune))
			}
		}
	}
	walk(re.Simplify())
	return out
}
