// Package explain answers "why was this URL (not) crawled, and when will it
// be?" for one URL, end to end: the sheets that apply, the scope rule that
// decides, the exclusions that match, whether the recently-crawled DB and
// the recrawl interval hold it back, the robots.txt verdict from the shared
// cache, the host's queue and quota state in the frontier, whether the URL
// itself is queued (where, due when) or in flight (under which lease, since
// when), and its capture
// history in the CDX index. It reads the same Redis state the workers
// write, so it explains the live crawl, and serves both the admin API (JSON)
// and `trawler ctl explain` (text).
package explain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/robots"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/sheets"
	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/uri"
)

// ErrBadURL marks a URL that cannot be explained (not http or https, or
// unparsable); the API answers it with 400.
var ErrBadURL = errors.New("bad URL")

// Config is what an Explainer reads.
type Config struct {
	// Profile is the crawl profile the workers run.
	Profile profile.Profile
	// Redis holds the frontier, seeds, sheets, robots cache and the
	// recently-crawled DB.
	Redis redis.UniversalClient
	// Frontier is the crawl stream's frontier (its name and key prefix
	// also locate the seeds and launch-attached sheets).
	Frontier *frontier.Frontier
	// Crawl and Stream name the recently-crawled history (Stream empty for
	// a crawl without streams, dc).
	Crawl, Stream string
	// BaseDir resolves the profile's relative scope files, as the worker's
	// data directory does for its scope engine.
	BaseDir string
	// RobotsPrefix is the robots cache's key prefix; empty: the worker's,
	// "trawler:<frontier name>:robots:".
	RobotsPrefix string
	// Version fills the User-Agent robots.txt rules are matched against.
	Version string
	// History reads captures from the CDX index; nil: no history.
	History History
	// Logger receives warnings; nil discards them.
	Logger *slog.Logger
}

// Explainer explains URLs against the live crawl state. It is safe for
// concurrent use.
type Explainer struct {
	cfg      Config
	engine   *scope.Engine
	seeds    *scope.Seeds
	shared   *scope.Exclusions
	sheets   *sheets.Sheets
	recent   *recentdb.DB
	robots   *robots.Cache
	excluded []string
	ua       string
}

// New builds an Explainer with its own scope engine and sheets over the
// crawl's Redis state (the worker's are internal to it).
func New(ctx context.Context, cfg Config) (*Explainer, error) {
	if cfg.Redis == nil || cfg.Frontier == nil {
		return nil, errors.New("explain: Redis and Frontier are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RobotsPrefix == "" {
		cfg.RobotsPrefix = "trawler:" + cfg.Frontier.Name() + ":robots:"
	}
	prefix := cfg.Frontier.Prefix()
	seeds := scope.NewSeeds(cfg.Redis, prefix)
	shared := scope.NewExclusions(cfg.Redis, prefix)
	eng, err := scope.New(cfg.Profile.Scope, scope.Options{Logger: cfg.Logger, Seeds: seeds, Exclusions: shared,
		BaseDir: cfg.BaseDir})
	if err != nil {
		return nil, fmt.Errorf("explain scope: %w", err)
	}
	sh, err := sheets.New(ctx, cfg.Profile, sheets.Options{Logger: cfg.Logger, Redis: cfg.Redis, KeyPrefix: prefix})
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("explain sheets: %w", err)
	}
	rdb, err := recentdb.New(cfg.Redis, recentdb.Options{Crawl: cfg.Crawl, Stream: cfg.Stream, Logger: cfg.Logger})
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("explain recently-crawled DB: %w", err)
	}
	rc, err := robots.NewCache(cfg.Redis, cfg.RobotsPrefix, robots.CacheOptions{
		Validity: time.Duration(cfg.Profile.Robots.ValidityDurationSeconds) * time.Second, MaxLocal: 16, Logger: cfg.Logger,
	})
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("explain robots cache: %w", err)
	}
	excl, err := loadExcluded(cfg.Profile.Scope.ExcludedSurtsFile, cfg.BaseDir)
	if err != nil {
		cfg.Logger.Warn("explain: excluded SURTs file unreadable; exclusions are reported by rule only", "err", err)
	}
	return &Explainer{cfg: cfg, engine: eng, seeds: seeds, shared: shared, sheets: sh, recent: rdb, robots: rc, excluded: excl,
		ua: cfg.Profile.UserAgent(cfg.Version)}, nil
}

// Close releases the scope engine.
func (e *Explainer) Close() error { return e.engine.Close() }

// loadExcluded reads the excluded-SURTs file so a report can name the
// prefix that excludes a URL; the scope engine only says that one does.
func loadExcluded(path, base string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	if !filepath.IsAbs(path) && base != "" {
		path = filepath.Join(base, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("excluded SURTs: %w", err)
	}
	defer f.Close()
	return scope.ParsePrefixes(f, path)
}

// Where an exclusion comes from (Exclusion.Source).
const (
	SourceFile    = "scope.excludedSurtsFile"
	SourceControl = "control exclusions (Redis)"
)

// Request is one URL to explain, with how it was reached: an empty hop
// path and via mean a seed, as in `trawler profile check --url`.
type Request struct {
	URL, Via, Hops string
}

// Explain gathers the report for r.URL. Parts whose state cannot be read
// are listed in Report.Errors rather than failing the whole report; only a
// bad URL (ErrBadURL) or a cancelled context is an error.
func (e *Explainer) Explain(ctx context.Context, r Request) (*Report, error) {
	raw := strings.TrimSpace(r.URL)
	if !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://") {
		return nil, fmt.Errorf("%w %q: want an http or https URL", ErrBadURL, r.URL)
	}
	norm, err := uri.Normalize(raw)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadURL, r.URL, err)
	}
	cand, err := scope.NewCandidate(norm)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadURL, r.URL, err)
	}
	host, err := hostkey.Authority(norm)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadURL, r.URL, err)
	}
	rep := &Report{URL: raw, Normalized: norm, SURT: surt.Heritrix(norm), Host: host, Via: r.Via, Hops: r.Hops,
		At: time.Now().UTC()}
	// Launches and operators may have attached sheets, added seeds or
	// changed exclusions since New.
	if err := e.seeds.Refresh(ctx); err != nil {
		rep.addErr("seeds", err)
	}
	if err := e.shared.Refresh(ctx); err != nil {
		rep.addErr("exclusions", err)
	}
	if err := e.sheets.Refresh(ctx); err != nil {
		rep.addErr("sheets", err)
	}
	eff := e.sheets.For(rep.SURT)
	for _, a := range e.sheets.Explain(rep.SURT) {
		rep.Sheets = append(rep.Sheets, Sheet{Prefix: a.Prefix, Name: a.Sheet, Origin: a.Origin, Skipped: a.Skipped, Ignored: a.Ignored})
	}
	e.explainScope(ctx, rep, cand, eff.Profile, r)
	e.explainRecrawl(ctx, rep, eff.Profile)
	e.explainRobots(ctx, rep, eff.Profile)
	e.explainHost(ctx, rep, eff.Profile)
	if st, err := e.cfg.Frontier.URIState(ctx, norm); err != nil {
		rep.addErr("uri", err)
	} else {
		rep.URI = &st
	}
	if e.cfg.History != nil {
		caps, err := e.cfg.History.Captures(ctx, norm, 20)
		if err != nil {
			rep.addErr("cdx", err)
		}
		rep.Captures = caps
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.Verdict = verdict(rep)
	return rep, nil
}

func (e *Explainer) explainScope(ctx context.Context, rep *Report, c *scope.Candidate, p profile.Profile, r Request) {
	params := scope.ParamsFrom(p.Scope)
	c.Via, c.HopPath, c.IsSeed, c.Params = r.Via, r.Hops, r.Hops == "" && r.Via == "", &params
	d, steps := e.engine.Explain(ctx, c)
	rep.Scope = Scope{Decision: d.String(), Accepted: d.Accepted(), Rule: d.Rule, RuleName: d.RuleName,
		Annotations: d.Annotations, Seed: c.IsSeed}
	for _, st := range steps {
		rep.Scope.Steps = append(rep.Scope.Steps, Step{Number: st.Number, Rule: st.Rule, Decision: st.Decision,
			Result: st.Result.String(), Skipped: st.Skipped, Comment: st.Comment})
	}
	for _, pre := range e.excluded {
		if strings.HasPrefix(rep.SURT, pre) {
			rep.Exclusions = append(rep.Exclusions, Exclusion{Prefix: pre, Source: SourceFile})
		}
	}
	for _, pre := range e.shared.Members() {
		if strings.HasPrefix(rep.SURT, pre) {
			rep.Exclusions = append(rep.Exclusions, Exclusion{Prefix: pre, Source: SourceControl})
		}
	}
	if len(rep.Exclusions) == 0 && e.engine.Excluded(rep.SURT) {
		// The file changed since it was read here: the engine's copy is the
		// one that matters.
		rep.Exclusions = append(rep.Exclusions, Exclusion{Source: SourceFile})
	}
	sort.Slice(rep.Exclusions, func(i, j int) bool { return len(rep.Exclusions[i].Prefix) > len(rep.Exclusions[j].Prefix) })
}

func (e *Explainer) explainRecrawl(ctx context.Context, rep *Report, p profile.Profile) {
	rc := Recrawl{SeenFilter: p.Frontier.SeenFilter, IntervalSeconds: p.Frontier.RecrawlIntervalSeconds}
	defer func() { rep.Recrawl = rc }()
	entries, err := e.recent.Lookup(ctx, []string{rep.Normalized})
	if err != nil {
		rep.addErr("recently-crawled DB", err)
		return
	}
	ent := entries[0]
	rep.Recent = recentOf(ent)
	last := ent.LastCrawled()
	if last.IsZero() {
		rc.Reason = "never crawled (or only failed): admitted when found"
		return
	}
	rc.LastCrawled = last.UTC()
	switch {
	case p.Frontier.SeenFilter == profile.SeenBloom:
		rc.HeldBack, rc.Reason = true, "bloom seen filter: a URI is admitted once per crawl"
	case rc.IntervalSeconds == 0:
		rc.HeldBack, rc.Reason = true, "recrawlInterval 0: only a new launch makes it due again"
	default:
		due := last.Add(time.Duration(rc.IntervalSeconds) * time.Second).UTC()
		rc.DueAt = &due
		if rep.At.Before(due) {
			rc.HeldBack, rc.Reason = true, fmt.Sprintf("crawled %s ago; recrawlInterval %ds holds it back until %s (or a newer launch)",
				rep.At.Sub(last).Round(time.Second), rc.IntervalSeconds, due.Format(time.RFC3339))
		} else {
			rc.Reason = "recrawl interval has passed: admitted when found"
		}
	}
}

func (e *Explainer) explainRobots(ctx context.Context, rep *Report, p profile.Profile) {
	rb := Robots{Policy: p.Robots.Policy, UserAgent: e.ua}
	defer func() { rep.Robots = rb }()
	if p.Robots.Policy == profile.RobotsIgnore {
		rb.Verdict = "not consulted: robots policy ignore"
		return
	}
	origin, err := robots.Origin(rep.Normalized)
	if err != nil {
		rep.addErr("robots", err)
		return
	}
	rules, ok, err := e.robots.Get(ctx, origin)
	switch {
	case err != nil:
		rep.addErr("robots", err)
		return
	case !ok:
		rb.Verdict = "not cached: robots.txt is fetched before the host's first URI"
		return
	}
	rb.Cached = true
	allowed := rules.Allowed(e.ua, pathAndQuery(rep.Normalized))
	rb.Allowed = &allowed
	switch {
	case allowed:
		rb.Verdict = "allowed"
	case p.Robots.Policy == profile.RobotsCalculateOnly:
		rb.Verdict = "disallowed by robots.txt: fetched anyway and annotated robotExcluded"
	default:
		rb.Verdict = "disallowed by robots.txt: not fetched (-9998)"
	}
}

func pathAndQuery(u string) string {
	rest := u[strings.Index(u, "//")+2:]
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[i:]
	}
	return "/"
}

func (e *Explainer) explainHost(ctx context.Context, rep *Report, p profile.Profile) {
	info, err := e.cfg.Frontier.Host(ctx, rep.Host)
	if err != nil {
		// An unknown host is an error there (unexported); here it is an
		// answer.
		if ctx.Err() == nil && strings.HasSuffix(err.Error(), ": unknown host") {
			rep.Frontier = HostState{Known: false}
			return
		}
		rep.Frontier = HostState{Known: false, Note: err.Error()}
		return
	}
	hs := HostState{Known: true, Queued: info.Queued, InFlight: info.InFlight, Paused: info.Paused, Ready: info.Ready,
		ParallelQueues: info.ParallelQueues, Server: usageOf(info.Server), HostName: usageOf(info.HostName)}
	if !info.NextFetch.IsZero() && info.NextFetch.After(rep.At) {
		t := info.NextFetch.UTC()
		hs.NextFetch = &t
	}
	if !info.BackOffUntil.IsZero() && info.BackOffUntil.After(rep.At) {
		t := info.BackOffUntil.UTC()
		hs.BackOffUntil, hs.BackOffStatus, hs.BackOffReason = &t, info.BackOffStatus, info.BackOffReason
	}
	// Source usage is kept per launch target, which a URL alone does not
	// name; the server and host quotas are checked here.
	if q, over := frontier.PolicyOf(p).OverQuota(frontier.Usages{Server: info.Server, Host: info.HostName,
		Source: frontier.Usage{}}); over {
		hs.QuotaReached = q
	}
	rep.Frontier = hs
}
