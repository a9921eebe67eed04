// Package sheets applies Heritrix-style sheets: named maps of setting
// overrides attached to SURT prefixes, so that one crawl can treat sites
// differently (ARCHITECTURE.md section 9). Sheets come from the profile
// (sheets.definitions, sheets.include of a shipped set such as "ukwa") and
// attach to prefixes from the profile (sheets.associations) or from launch
// messages (`sheets` names and `targetSheet` inline overrides, attached to
// the URL's implied SURT prefix). Launch-attached associations persist in
// Redis so that every worker applies them.
//
// Order, as in Heritrix's SheetOverlaysManager: every association whose
// prefix is a prefix of the URI's SURT applies, shorter prefixes first, so
// the longest (most specific) prefix applies last and wins. At one prefix
// the profile's sheets come first, then the launch message's named sheets,
// then its targetSheet.
//
// For returns the effective settings for a SURT: a radix-tree walk to the
// deepest matching prefix, whose node holds the finished profile. Effective
// profiles are built when associations change and cached by the
// combination of sheets applied, so identical combinations share one.
//
// Differences from UKWA's KafkaUrlReceiver, chosen deliberately: a launch
// attaches to the URL's implied prefix (the scope a seed opens), not its
// exact SURT; a message with no sheets and no targetSheet changes nothing
// (the message format cannot tell an empty list from an absent one), and
// Detach clears; launch-attached sheets add to the profile's at the same
// prefix instead of replacing them; a launch replaces everything launches
// attached at its prefix, where UKWA merges targetSheet keys into the
// previous ones.
//
// The scope sheets: resourceScope sets scope.maxHops (UKWA's value) for
// URIs under the seed; plus1Scope and subdomainsScope keep UKWA's bean paths,
// which have no per-URI effect (Applied.Ignored says so) because pkg/scope
// fixes a seed's scope from these sheet names when the seed is added. They
// must still exist, or launches naming them would be dropped.
package sheets

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/profile"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// Origins of an applied sheet.
const (
	OriginProfile = "profile"
	OriginLaunch  = "launch"
)

// TargetSheetName names a launch message's inline overrides in Effective
// and Applied.
const TargetSheetName = "targetSheet"

// Effective is the settings one URI is crawled with. It is shared between
// URIs and callers must not modify it.
type Effective struct {
	// Profile is the base profile with the sheets applied; its Sheets
	// section is empty.
	Profile profile.Profile
	// Sheets names the sheets applied, in order (the last wins).
	Sheets []string
	key    string // cache key: the combination of sheets applied
}

// Applied explains one sheet matched for a URI.
type Applied struct {
	Prefix string
	Sheet  string
	Origin string // OriginProfile or OriginLaunch
	// Skipped says why the sheet was not applied (unknown sheet, or the
	// settings it leads to are invalid); "" when it was applied.
	Skipped string
	// Ignored lists settings of the sheet that have no effect, with why.
	Ignored []string
}

// Options configure a Sheets.
type Options struct {
	// Logger receives warnings about sheets that cannot apply; nil
	// discards them.
	Logger *slog.Logger
	// Redis holds launch-attached associations; nil keeps only the
	// profile's (as `trawler profile check` does).
	Redis redis.UniversalClient
	// KeyPrefix starts every Redis key, with its hash tag, e.g. the
	// frontier's Prefix() "{fc-npld}:".
	KeyPrefix string
	// MinRefreshInterval is the least time between two checks of the Redis
	// version counter by Refresh (default 1s): a launch attached by another
	// worker is seen within about this long.
	MinRefreshInterval time.Duration
	// Now replaces time.Now, for tests.
	Now func() time.Time
}

// Sheets resolves per-URI settings. It is safe for concurrent use: For and
// Explain read an immutable snapshot swapped atomically on change.
type Sheets struct {
	opts    Options
	log     *slog.Logger
	catalog map[string]*entry
	base    *Effective
	profile []binding // the profile's associations, normalised

	snap atomic.Pointer[snapshot]

	mu        sync.Mutex // serialises Refresh and rebuilds
	lastCheck time.Time
	cache     map[string]cached     // guarded by mu
	parsed    map[string]storedRefs // guarded by mu: Redis entries by prefix
}

// New builds the sheets of base: its catalog (included sets and its own
// definitions) and associations. Every sheet must apply on its own to base
// (a sheet whose values contradict the profile, such as a minDelayMs above
// its maxDelayMs, is an error naming the sheet). With opts.Redis set, the
// launch-attached associations are loaded too.
func New(ctx context.Context, base profile.Profile, opts Options) (*Sheets, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MinRefreshInterval <= 0 {
		opts.MinRefreshInterval = time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	sheets, err := base.Sheets.Catalog()
	if err != nil {
		return nil, fmt.Errorf("sheets: %w", err)
	}
	catalog := make(map[string]*entry, len(sheets))
	for name, sh := range sheets {
		catalog[name] = newEntry(sh)
	}
	stripped := base
	stripped.Sheets = profile.Sheets{}
	s := &Sheets{opts: opts, log: opts.Logger, catalog: catalog,
		base: &Effective{Profile: stripped}, cache: map[string]cached{}, parsed: map[string]storedRefs{}}
	if err := s.checkCatalog(); err != nil {
		return nil, err
	}
	if s.profile, err = profileBindings(base.Sheets.Associations(), catalog); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if opts.Redis == nil {
		s.rebuild(nil, 0)
		return s, nil
	}
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// checkCatalog applies every sheet alone to the base profile.
func (s *Sheets) checkCatalog() error {
	for _, name := range s.Names() {
		sh := s.catalog[name].sheet
		if _, err := s.base.Profile.WithSettings(sh.Settings); err != nil {
			return fmt.Errorf("sheet %s (%s, line %d) does not apply to this profile: %w", name, sh.Origin, sh.Line, err)
		}
	}
	return nil
}

// For returns the effective settings for a URI given its Heritrix-form
// SURT (surt.Heritrix). The cost is one radix-tree walk.
func (s *Sheets) For(surtForm string) *Effective {
	snap := s.snap.Load()
	if n := snap.root.deepest(surtForm); n != nil {
		return n.eff
	}
	return s.base
}

// ForURL is For on the SURT of rawURL. Callers that already have the SURT
// should use For: computing a SURT costs more than the lookup.
func (s *Sheets) ForURL(rawURL string) *Effective {
	return s.For(surt.Heritrix(rawURL))
}

// Explain lists every sheet that matches a SURT, in the order applied, with
// the prefix that matched: the operator's answer to "why these settings?".
func (s *Sheets) Explain(surtForm string) []Applied {
	var out []Applied
	for _, n := range s.snap.Load().root.path(surtForm) {
		out = append(out, n.applied...)
	}
	return out
}

// Base returns the profile's settings without any sheet.
func (s *Sheets) Base() *Effective { return s.base }

// Names lists the sheets that can be applied by name, sorted.
func (s *Sheets) Names() []string {
	names := make([]string, 0, len(s.catalog))
	for n := range s.catalog {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Has reports whether a sheet of that name exists.
func (s *Sheets) Has(name string) bool {
	_, ok := s.catalog[name]
	return ok
}

// Prefix normalises a SURT prefix as written in a profile or given by an
// operator: "+" is dropped; a SURT form ("http://(uk,co,", "(uk,co,") is
// lowercased with https folded to http; anything else is read as a URL
// (or host) and gives its implied prefix ("www.example.org/a/b" ->
// "http://(org,example,www,)/a/", "uk" -> "http://(uk,").
func Prefix(s string) (string, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "+")
	if s == "" {
		return "", fmt.Errorf("empty SURT prefix")
	}
	if strings.HasPrefix(s, "(") {
		s = "http://" + s
	}
	if strings.Contains(s, "://(") {
		s = strings.ToLower(s)
		if rest, ok := strings.CutPrefix(s, "https://"); ok {
			s = "http://" + rest
		}
		return s, nil
	}
	p := surt.ImpliedPrefix(s)
	if !strings.HasPrefix(p, "http://(") {
		return "", fmt.Errorf("%q is neither a SURT prefix nor an http(s) URL", s)
	}
	return p, nil
}
