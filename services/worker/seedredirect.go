package worker

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/sheets"
)

// Seeds that redirect (Heritrix's CandidatesProcessor.seedsRedirectNewSeeds,
// profile scope.seedsRedirectNewSeeds). A seed http://example.co.uk/ that
// answers 301 to https://www.example.co.uk/ has moved: its scope (the SURT
// prefixes the seed opens) covers nothing of the new site, so without this
// only the landing page would be captured. The redirect target therefore
// becomes a seed of the same launch: same sheets, source tag, launch
// timestamp and scope type, so every worker widens its scope and applies
// the sheets through Redis, and the inscope journal records it as a seed
// for a rebuild. As in Heritrix the target keeps its hop path ("R", "RR"
// ...) and via, and chains stop at scope.SeedRedirectMaxHops.
//
// Heritrix forces the promoted seed, so the seed version is crawled even
// when the URI is already queued or was crawled as an ordinary page (a
// moved site's robots.txt usually redirects to the same place, and gets
// there first): its outlinks were then judged without the new scope.
// Trawler forces it only when it widened the scope (some entry no seed
// had added): the seed version replaces a queued copy or crawls the page
// again. A redirect loop among seeds adds nothing the second time round,
// so the seen filter ends it at once, where Heritrix refetches until the
// hop bound.

// promoteRedirects marks the redirect targets among the outlinks of parent
// as seeds, when parent is a seed whose effective settings (eff) keep
// seedsRedirectNewSeeds on. Only http(s) targets qualify: nothing else can
// be a seed. The candidate chain still judges them (admit).
func promoteRedirects(parent messages.Launch, eff *sheets.Effective, children []messages.Launch) {
	if !parent.IsSeed || eff == nil || !eff.Profile.Scope.SeedsRedirectNewSeeds {
		return
	}
	for i := range children {
		c := &children[i]
		if c.Hop != string(messages.HopRedirect) || len(c.HopPath()) >= scope.SeedRedirectMaxHops || !isHTTP(c.URL) {
			continue
		}
		// The seed's heritable data whole (launch timestamp and refresh
		// depth included, whatever it lists as heritable): the target
		// stands in for the seed. Annotations stay as children inherit
		// them, so a relaunch's resetQuotas is not repeated on it.
		h := parent.ParentURLMetadata.HeritableData
		h.Annotations = c.ParentURLMetadata.HeritableData.Annotations
		c.ParentURLMetadata.HeritableData = h
		c.IsSeed = true
		c.Sheets = slices.Clone(parent.Sheets)
		c.TargetSheet = parent.TargetSheet
		c.RecrawlInterval = parent.RecrawlInterval
	}
}

// isHTTP says u is an http or https URL.
func isHTTP(u string) bool {
	scheme, _, ok := strings.Cut(u, "://")
	return ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}

// addRedirectSeed records an accepted redirect target of a seed as a seed
// for every worker (its scope and its launch's sheets, in Redis, unless a
// launch of its own attached sheets there already), before
// it is queued, and returns its settings with those sheets applied and
// whether it widened the scope (then it is forced). A candidate the scope
// rejected never gets here, so an excluded or out-of-scope target widens
// nothing.
func (w *Worker) addRedirectSeed(ctx context.Context, l messages.Launch) (*sheets.Effective, bool, error) {
	if _, err := w.chain.sheets.AttachLaunchIfUnset(ctx, l); err != nil {
		return nil, false, fmt.Errorf("seed redirect %s: %w", l.URL, err)
	}
	wider, err := w.chain.seeds.AddNew(ctx, l.URL, scope.SeedScopeFromSheets(l.Sheets))
	if err != nil {
		return nil, false, fmt.Errorf("seed redirect %s: %w", l.URL, err)
	}
	if wider {
		w.log.Info("seed redirect becomes a seed", "url", l.URL, "via", l.ParentURL, "source", l.Source())
	}
	return w.chain.settings(l.URL), wider, nil
}

// SeedRedirectHops is the bound on the hop path of a seed's redirect
// target that became a seed (scope.SeedRedirectMaxHops), or 0 when the
// profile turns seedsRedirectNewSeeds off, for the seeds report.
func (w *Worker) SeedRedirectHops() int {
	if !w.prof.Scope.SeedsRedirectNewSeeds {
		return 0
	}
	return scope.SeedRedirectMaxHops
}
