package scope

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/surt"
)

// SeedScope says how much of the web a seed admits through the rules that
// take seeds as SURT prefixes. The launcher expresses it with the sheets
// UKWA uses (ARCHITECTURE.md 9).
//
// The scope is fixed when the seed is added, not looked up per candidate
// through sheets: a sheet attached to the seed's SURT only applies to URIs
// under that SURT, but plus-one and subdomain scopes are precisely about
// URIs outside it (another host, another subdomain), so a per-candidate
// switch could never reach them.
type SeedScope uint8

// Seed scopes, from the launcher's sheets.
const (
	// SeedScopeRoot admits the seed's implied SURT prefix (Heritrix):
	// http://www.example.org/news/today -> http://(org,example,www,)/news/,
	// and a host-only seed http://example.org -> http://(org,example, with
	// its subdomains.
	SeedScopeRoot SeedScope = iota
	// SeedScopeResource (sheet resourceScope) admits only the seed's own
	// SURT (and URLs extending it, such as added query strings); its
	// embeds come in through TransclusionDecideRule.
	SeedScopeResource
	// SeedScopePlus1 (sheet plus1Scope) admits the implied prefix and also
	// any URI whose via is under it: everything the in-scope pages link to
	// or embed, one hop out, as UKWA's alsoCheckVia sheet intends.
	SeedScopePlus1
	// SeedScopeSubdomains (sheet subdomainsScope) admits the seed's whole
	// domain: the host prefix without "www,", opened so subdomains match:
	// http://www.example.co.uk/ -> http://(uk,co,example, (OnDomains form).
	SeedScopeSubdomains
)

func (s SeedScope) String() string {
	switch s {
	case SeedScopeResource:
		return "resource"
	case SeedScopePlus1:
		return "plus1"
	case SeedScopeSubdomains:
		return "subdomains"
	}
	return "root"
}

// SeedScopeFromSheets maps a launch message's sheet names to a seed scope.
// The launcher sends at most one of them; if several are present the
// widest wins (subdomains, then plus-one, then resource).
func SeedScopeFromSheets(sheets []string) SeedScope {
	has := func(name string) bool {
		for _, s := range sheets {
			if s == name {
				return true
			}
		}
		return false
	}
	switch {
	case has("subdomainsScope"):
		return SeedScopeSubdomains
	case has("plus1Scope"):
		return SeedScopePlus1
	case has("resourceScope"):
		return SeedScopeResource
	}
	return SeedScopeRoot
}

// SeedRedirectMaxHops bounds seedsRedirectNewSeeds: the target of a
// seed's redirect becomes a seed while its hop path (all redirects) is
// shorter than this, as Heritrix's CandidatesProcessor bounds it
// (SEEDS_REDIRECT_NEW_SEEDS_MAX_HOPS), so a redirect loop or an endless
// chain of redirects cannot keep adding seeds.
const SeedRedirectMaxHops = 5

// Seed entries as stored: a kind letter, a space, the prefix.
const (
	entryPrefix = "s " // a prefix the seed admits
	entryVia    = "v " // a prefix whose pages' outlinks are admitted (plus-one)
)

// SeedEntries returns the entries a seed adds to the shared set.
func SeedEntries(seedURL string, scope SeedScope) ([]string, error) {
	p, err := impliedPrefix(seedURL)
	if err != nil {
		return nil, fmt.Errorf("seed %q: %w", seedURL, err)
	}
	switch scope {
	case SeedScopeResource:
		return []string{entryPrefix + surt.Heritrix(seedURL)}, nil
	case SeedScopePlus1:
		return []string{entryPrefix + p, entryVia + p}, nil
	case SeedScopeSubdomains:
		return []string{entryPrefix + toDomain(p)}, nil
	}
	return []string{entryPrefix + p}, nil
}

// Seeds is the crawl's set of seed-implied SURT prefixes. With Redis it is
// shared: Add appends to a Redis log that every worker replays with
// Refresh, so a seed launched through any worker widens every worker's
// scope. Without Redis it is local to the process (tools, tests).
//
// Readers never block: each refresh publishes a new immutable view.
type Seeds struct {
	rdb            redis.UniversalClient
	add            *redis.Script
	setKey, logKey string

	mu      sync.Mutex // serialises writers of view and applied
	applied int64      // log entries already in view
	wantDom bool
	wantHst bool
	view    atomic.Pointer[seedView]
}

// seedView is one immutable state of the seed set, with the derived sets
// the OnDomains and OnHosts rules need (built only when a rule asks).
type seedView struct {
	prefixes, via, domains, hosts *PrefixSet
}

// addSeedLua adds entries to the dedup set and, for those that are new, to
// the replay log, atomically so the two never disagree.
const addSeedLua = `
local n = 0
for _, e in ipairs(ARGV) do
  if redis.call('SADD', KEYS[1], e) == 1 then
    redis.call('RPUSH', KEYS[2], e)
    n = n + 1
  end
end
return n`

// NewSeeds keeps the shared set under keyPrefix (the frontier's prefix, so
// the keys share its hash tag). rdb may be nil for a process-local set.
func NewSeeds(rdb redis.UniversalClient, keyPrefix string) *Seeds {
	s := &Seeds{rdb: rdb, add: redis.NewScript(addSeedLua), setKey: keyPrefix + "scope:seeds", logKey: keyPrefix + "scope:seedlog"}
	s.view.Store(&seedView{})
	return s
}

// Add records a seed and makes its prefixes visible to this process at
// once; other workers see them on their next Refresh.
func (s *Seeds) Add(ctx context.Context, seedURL string, scope SeedScope) error {
	_, err := s.AddNew(ctx, seedURL, scope)
	return err
}

// AddNew is Add, also saying whether the seed widened the shared set (an
// entry no seed had added before). Without Redis it says true.
func (s *Seeds) AddNew(ctx context.Context, seedURL string, scope SeedScope) (bool, error) {
	entries, err := SeedEntries(seedURL, scope)
	if err != nil {
		return false, fmt.Errorf("scope add seed: %w", err)
	}
	if s.rdb == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.apply(entries)
		return true, nil
	}
	args := make([]any, len(entries))
	for i, e := range entries {
		args[i] = e
	}
	n, err := s.add.Run(ctx, s.rdb, []string{s.setKey, s.logKey}, args...).Int64()
	if err != nil {
		return false, fmt.Errorf("scope add seed %s: %w", seedURL, err)
	}
	return n > 0, s.Refresh(ctx)
}

// refreshBatch bounds one LRANGE reply while replaying a long log.
const refreshBatch = 50_000

// Refresh applies entries other workers added since the last call. It costs
// one LLEN when nothing changed, so callers may run it per batch of
// decisions.
func (s *Seeds) Refresh(ctx context.Context) error {
	if s.rdb == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.rdb.LLen(ctx, s.logKey).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("scope seeds length: %w", err)
	}
	if n < s.applied {
		// The log is shorter than what was applied: Redis lost it and it is
		// being rebuilt. Replay from the start; prefixes never shrink, so
		// re-adding known ones is harmless.
		s.applied = 0
	}
	for s.applied < n {
		end := min(s.applied+refreshBatch, n) - 1
		entries, err := s.rdb.LRange(ctx, s.logKey, s.applied, end).Result()
		if err != nil {
			return fmt.Errorf("scope seeds replay: %w", err)
		}
		if len(entries) == 0 {
			break
		}
		s.apply(entries)
		s.applied += int64(len(entries))
	}
	return nil
}

// Reload replays the whole shared log, as after a rebuild that wrote it
// anew: a log that grew back past what this process had applied would
// otherwise be read only from that point. Prefixes never shrink, so the
// entries already known cost nothing.
func (s *Seeds) Reload(ctx context.Context) error {
	s.mu.Lock()
	s.applied = 0
	s.mu.Unlock()
	return s.Refresh(ctx)
}

// apply publishes a view with entries added. Callers hold mu.
func (s *Seeds) apply(entries []string) {
	cur := s.view.Load()
	var pre, via []string
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e, entryPrefix):
			pre = append(pre, e[len(entryPrefix):])
		case strings.HasPrefix(e, entryVia):
			via = append(via, e[len(entryVia):])
		}
	}
	next := &seedView{prefixes: cur.prefixes.With(pre), via: cur.via.With(via), domains: cur.domains, hosts: cur.hosts}
	if s.wantDom {
		next.domains = cur.domains.With(convertAll(pre, toDomain))
	}
	if s.wantHst {
		next.hosts = cur.hosts.With(convertAll(pre, toHost))
	}
	s.view.Store(next)
}

// enable starts maintaining the derived domain or host view.
func (s *Seeds) enable(domains, hosts bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := *s.view.Load()
	if domains && !s.wantDom {
		s.wantDom = true
		cur.domains = NewPrefixSet(convertAll(cur.prefixes.Members(), toDomain))
	}
	if hosts && !s.wantHst {
		s.wantHst = true
		cur.hosts = NewPrefixSet(convertAll(cur.prefixes.Members(), toHost))
	}
	s.view.Store(&cur)
}

// Len is the number of distinct seed prefixes known to this process.
func (s *Seeds) Len() int { return s.view.Load().prefixes.Len() }

// Prefixes lists the seed prefixes known to this process (the "s "
// entries, whatever their scope), for tools and checks.
func (s *Seeds) Prefixes() []string { return s.view.Load().prefixes.Members() }

func (s *Seeds) load() *seedView { return s.view.Load() }

func convertAll(list []string, f func(string) string) []string {
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = f(p)
	}
	return out
}
