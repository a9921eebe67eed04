package scope

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trawler-crawl/trawler/pkg/geolocate"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

// ExclusionRuleName names the excluded-SURTs check in decisions. It counts
// as the rule after the profile's last one: "REJECT by rule #11
// ExcludedSurtsDecideRule" in a profile with ten rules.
const ExclusionRuleName = "ExcludedSurtsDecideRule"

// Options are an engine's dependencies. Zero fields take the defaults.
type Options struct {
	// Logger receives reload and load messages (default: discard).
	Logger *slog.Logger
	// Registerer exports the engine's metrics (default: none).
	Registerer prometheus.Registerer
	// Seeds is the shared seed set the seedsAsSurtPrefixes rules read
	// (default: a new process-local set).
	Seeds *Seeds
	// BaseDir resolves relative file paths of the scope section (the
	// profile's directory; default: the working directory).
	BaseDir string
	// LogDir is where scope.log is written when scope.logToFile is set;
	// required then.
	LogDir string
	// Resolver resolves hosts for ExternalGeoLocationDecideRule (default:
	// the system resolver). Tests pass the synthetic web's.
	Resolver geolocate.Resolver
	// Exclusions is the crawl's Redis-kept list of excluded prefixes
	// (operators' control commands), merged with scope.excludedSurtsFile
	// and refreshed by Reload (default: none).
	Exclusions *Exclusions
	// Geo tunes the per-host country cache.
	Geo geolocate.Options
	// PollInterval overrides scope.sourceCheckInterval (tests).
	PollInterval time.Duration
}

// Engine is a scope: the profile's decide rules, in order, and the
// excluded-SURTs check. It is immutable after New and safe for concurrent
// use; the prefix sets it reads are swapped atomically by Run and by the
// seed set.
type Engine struct {
	rules    []entry
	excluded *watchedSet // nil without scope.excludedSurtsFile
	shared   *Exclusions // nil without Options.Exclusions
	watched  []*watchedSet
	seeds    *Seeds
	defaults Params
	poll     time.Duration
	log      *DecisionLog // nil unless scope.logToFile
	logger   *slog.Logger
	metrics  *metrics
	closers  []io.Closer
}

// entry is one rule with what decisions and explanations show of it.
type entry struct {
	num      int
	name     string
	decision string
	comment  string
	r        rule
}

// New builds the engine for a scope section. Files are loaded now: a
// missing file, a bad line or an unknown rule is an error naming it.
func New(cfg profile.Scope, opts Options) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Seeds == nil {
		opts.Seeds = NewSeeds(nil, "")
	}
	e := &Engine{seeds: opts.Seeds, shared: opts.Exclusions, defaults: ParamsFrom(cfg), logger: opts.Logger,
		poll: time.Duration(cfg.SourceCheckInterval) * time.Second}
	if opts.PollInterval > 0 {
		e.poll = opts.PollInterval
	}
	b := builder{e: e, opts: opts, dbs: map[string]*geolocate.Locator{}}
	if err := b.build(cfg); err != nil {
		_ = e.Close()
		return nil, err
	}
	return e, nil
}

// Decide runs the rules over the candidate: the last rule that answers
// ACCEPT or REJECT decides, then the excluded-SURTs check may turn the
// result into REJECT. A predicated rule is skipped when the decision so
// far is already its answer, as in Heritrix, which also fixes which rule
// is reported as deciding.
func (e *Engine) Decide(ctx context.Context, c *Candidate) Decision {
	d := e.eval(ctx, c, nil)
	e.metrics.decided(d)
	if e.log != nil {
		e.log.Record(c, d)
	}
	return d
}

// Step is one rule's part in an explained decision.
type Step struct {
	Number   int    // 1-based, in profile order
	Rule     string // Heritrix class name
	Decision string // the answer the rule gives when it matches
	Comment  string
	Result   Result // its answer for this URI (PASS when skipped)
	Skipped  bool   // not run: it could not change the decision so far
}

// Explain decides like Decide (without logging or counting) and reports
// every rule's answer, for "why was this URL (not) crawled?".
func (e *Engine) Explain(ctx context.Context, c *Candidate) (Decision, []Step) {
	steps := make([]Step, 0, len(e.rules)+1)
	d := e.eval(ctx, c, &steps)
	return d, steps
}

func (e *Engine) eval(ctx context.Context, c *Candidate, trace *[]Step) Decision {
	p := c.Params
	if p == nil {
		p = &e.defaults
	}
	var st evalState
	result, decisive := Pass, -1
	for i := range e.rules {
		en := &e.rules[i]
		r := Pass
		skip := en.r.only() != Pass && en.r.only() == result
		if !skip {
			r = en.r.decide(ctx, c, p, &st)
		}
		if r != Pass {
			result, decisive = r, i
		}
		if trace != nil {
			*trace = append(*trace, Step{Number: en.num, Rule: en.name, Decision: en.decision,
				Comment: en.comment, Result: r, Skipped: skip})
		}
	}
	d := Decision{Result: result, Annotations: st.annotations}
	if decisive >= 0 {
		d.Rule, d.RuleName = e.rules[decisive].num, e.rules[decisive].name
	}
	if e.excluded != nil || e.shared.Len() > 0 {
		excl := result != Reject && e.Excluded(c.SURT)
		if excl {
			d.Result, d.Rule, d.RuleName = Reject, len(e.rules)+1, ExclusionRuleName
		}
		if trace != nil {
			step := Step{Number: len(e.rules) + 1, Rule: ExclusionRuleName, Decision: profile.Reject,
				Comment: "scope.excludedSurtsFile", Skipped: result == Reject}
			if excl {
				step.Result = Reject
			}
			*trace = append(*trace, step)
		}
	}
	return d
}

// Excluded reports whether a SURT (https folded, as Candidate.SURT) is
// under a prefix of the excluded-SURTs file or of the shared Exclusions.
// The worker calls it again just before fetching, so a URI queued before
// a site was blocked is not fetched after.
func (e *Engine) Excluded(surt string) bool {
	return e.excluded != nil && e.excluded.load().ContainsPrefixOf(surt) || e.shared.Contains(surt)
}

// Seeds is the seed set the engine reads.
func (e *Engine) Seeds() *Seeds { return e.seeds }

// Run polls the watched SURT files and the shared seed set every
// scope.sourceCheckInterval until ctx ends. Without Run, files are read
// once, at New.
func (e *Engine) Run(ctx context.Context) error {
	t := time.NewTicker(e.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			e.Reload(ctx)
		}
	}
}

// Reload checks every watched file once and refreshes the seed set. Run
// calls it on each tick.
func (e *Engine) Reload(ctx context.Context) {
	for _, w := range e.watched {
		if out := w.check(e.logger); out != reloadUnchanged {
			e.metrics.reloads.WithLabelValues(w.path, string(out)).Inc()
			e.metrics.prefixes.WithLabelValues(w.path).Set(float64(w.load().Len()))
		}
	}
	if err := e.seeds.Refresh(ctx); err != nil && ctx.Err() == nil {
		e.logger.Warn("scope: seed refresh failed", "err", err)
	}
	if e.shared != nil {
		if err := e.shared.Refresh(ctx); err != nil && ctx.Err() == nil {
			e.logger.Warn("scope: exclusions refresh failed", "err", err)
		}
	}
}

// Close releases the GeoIP databases and flushes the scope log.
func (e *Engine) Close() error {
	var errs []error
	for _, c := range e.closers {
		errs = append(errs, c.Close())
	}
	e.closers = nil
	return errors.Join(errs...)
}

// resolve makes a profile path absolute against the base directory.
func resolve(base, path string) string {
	if path == "" || filepath.IsAbs(path) || base == "" {
		return path
	}
	return filepath.Join(base, path)
}

// ruleError names a rule in a build error the way profile errors do.
func ruleError(r profile.Rule, num int, err error) error {
	if r.Line > 0 {
		return fmt.Errorf("line %d: scope.rules #%d (%s): %w", r.Line, num, r.Name, err)
	}
	return fmt.Errorf("scope.rules #%d (%s): %w", num, r.Name, err)
}
