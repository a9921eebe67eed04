package worker

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/fetch"
	"github.com/trawler-crawl/trawler/pkg/frontier"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/scope"
	"github.com/trawler-crawl/trawler/pkg/sheets"
)

// chain is the worker's view of scope and per-URI settings: the decide-rule
// engine, the crawl's seed set and the sheets, the last two shared through
// Redis so that a seed or sheet launched through any worker applies on all.
type chain struct {
	engine *scope.Engine
	seeds  *scope.Seeds
	// excl is the scope's list of operators' exclusions, which the
	// control applier changes (so an acknowledged exclusion is in force
	// here at once).
	excl   *scope.Exclusions
	sheets *sheets.Sheets
	log    *slog.Logger

	mu      sync.Mutex
	checked time.Time
}

func newChain(ctx context.Context, rdb redis.UniversalClient, prefix string, p profile.Profile, baseDir string,
	resolver fetch.Resolver, log *slog.Logger, reg prometheus.Registerer) (*chain, error) {
	seeds := scope.NewSeeds(rdb, prefix)
	excl := scope.NewExclusions(rdb, prefix) // operators' control commands (pkg/control)
	eng, err := scope.New(p.Scope, scope.Options{
		Logger: log, Registerer: reg, Seeds: seeds, BaseDir: baseDir, LogDir: baseDir, Resolver: netipResolver{resolver},
		Exclusions: excl,
	})
	if err != nil {
		return nil, fmt.Errorf("worker scope: %w", err)
	}
	sh, err := sheets.New(ctx, p, sheets.Options{Logger: log, Redis: rdb, KeyPrefix: prefix})
	if err != nil {
		eng.Close()
		return nil, fmt.Errorf("worker sheets: %w", err)
	}
	return &chain{engine: eng, seeds: seeds, excl: excl, sheets: sh, log: log}, nil
}

// attach records what a launch message adds for every worker: its sheets
// at its SURT prefix and, for a seed, its scope.
func (c *chain) attach(ctx context.Context, l messages.Launch) (dropped int, err error) {
	d, err := c.sheets.AttachLaunch(ctx, l)
	if err != nil {
		return 0, err
	}
	for _, name := range d.Sheets {
		c.log.Warn("unknown sheet in launch message dropped", "url", l.URL, "sheet", name)
	}
	for _, s := range d.Settings {
		c.log.Warn("targetSheet setting dropped", "url", l.URL, "setting", s)
	}
	if l.IsSeed {
		if err := c.seeds.Add(ctx, l.URL, scope.SeedScopeFromSheets(l.Sheets)); err != nil {
			return 0, err
		}
	}
	return len(d.Sheets) + len(d.Settings), nil
}

// refresh reloads seeds and sheets other workers added. It is throttled to
// once a second unless force is set (before judging the outlinks of a seed
// or of a prerequisite, so a new seed's scope is never judged with a set
// that lacks it).
func (c *chain) refresh(ctx context.Context, force bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !force && time.Since(c.checked) < time.Second {
		return
	}
	if err := c.seeds.Refresh(ctx); err != nil {
		c.log.Warn("scope seeds refresh", "err", err)
		return
	}
	if err := c.sheets.Refresh(ctx); err != nil {
		c.log.Warn("sheets refresh", "err", err)
		return
	}
	c.checked = time.Now()
}

// judge decides a URI's scope under its effective settings.
func (c *chain) judge(ctx context.Context, l messages.Launch) (scope.Decision, *sheets.Effective, error) {
	cand, err := scope.NewCandidate(l.URL)
	if err != nil {
		return scope.Decision{}, nil, err
	}
	eff := c.sheets.For(cand.SURT)
	params := scope.ParamsFrom(eff.Profile.Scope)
	via := l.ParentURL
	if via == l.URL {
		via = ""
	}
	cand.Via, cand.HopPath, cand.IsSeed, cand.SourceTag, cand.Params = via, l.HopPath(), l.IsSeed, l.Source(), &params
	return c.engine.Decide(ctx, cand), eff, nil
}

// settings are the effective settings of one URI.
func (c *chain) settings(url string) *sheets.Effective { return c.sheets.ForURL(url) }

// policy is the frontier policy of one URI's effective settings.
func (c *chain) policy(eff *sheets.Effective) frontier.Policy { return frontier.PolicyOf(eff.Profile) }

func (c *chain) close() error { return c.engine.Close() }

// netipResolver gives the scope's GeoIP rule the worker's resolver, so both
// see the same addresses (the synthetic web's in tests).
type netipResolver struct{ r fetch.Resolver }

func (n netipResolver) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	addrs, err := n.r.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			out = append(out, ip.Unmap())
		}
	}
	return out, nil
}
