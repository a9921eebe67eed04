package scope

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/surt"
)

// SimpleDecision is the outcome of SurtPrefixes.Decide.
//
// Deprecated: the worker moves to Engine and Decision.
type SimpleDecision struct {
	Accept bool
	// Rule is e.g. "ACCEPT by rule #1 SurtPrefixedDecideRule".
	Rule string
}

// SurtPrefixes is the first, fixed scope (seed prefixes, a hop limit, an
// http/https check) whose prefix set lives in Redis. It stays until the
// worker is rewired to Engine, which replaces it.
//
// Deprecated: use Engine with Seeds.
type SurtPrefixes struct {
	rdb     redis.UniversalClient
	key     string
	verKey  string
	maxHops int

	mu       sync.RWMutex
	version  int64
	prefixes map[string]struct{}
}

// NewSurtPrefixes keeps its set under keyPrefix (the frontier's prefix, so
// the keys share its hash tag).
func NewSurtPrefixes(rdb redis.UniversalClient, keyPrefix string, maxHops int) *SurtPrefixes {
	return &SurtPrefixes{rdb: rdb, key: keyPrefix + "scope:surts", verKey: keyPrefix + "scope:version", maxHops: maxHops, version: -1}
}

// AddSeed adds the seed's implied SURT prefix to the shared set.
func (s *SurtPrefixes) AddSeed(ctx context.Context, seedURL string) error {
	p := surt.ImpliedPrefix(seedURL)
	if p == "" {
		return fmt.Errorf("scope: no SURT prefix for seed %q", seedURL)
	}
	pipe := s.rdb.TxPipeline()
	added := pipe.SAdd(ctx, s.key, p)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("scope add seed %s: %w", seedURL, err)
	}
	if added.Val() == 1 {
		if err := s.rdb.Incr(ctx, s.verKey).Err(); err != nil {
			return fmt.Errorf("scope bump version: %w", err)
		}
	}
	return s.Refresh(ctx)
}

// Refresh reloads the prefix set if another worker changed it. Call it once
// per batch of decisions, not per URI.
func (s *SurtPrefixes) Refresh(ctx context.Context) error {
	v, err := s.rdb.Get(ctx, s.verKey).Result()
	if err != nil && err != redis.Nil {
		return fmt.Errorf("scope version: %w", err)
	}
	ver, _ := strconv.ParseInt(v, 10, 64)
	s.mu.RLock()
	same := ver == s.version
	s.mu.RUnlock()
	if same {
		return nil
	}
	members, err := s.rdb.SMembers(ctx, s.key).Result()
	if err != nil {
		return fmt.Errorf("scope load prefixes: %w", err)
	}
	set := make(map[string]struct{}, len(members))
	for _, m := range members {
		set[m] = struct{}{}
	}
	s.mu.Lock()
	s.prefixes, s.version = set, ver
	s.mu.Unlock()
	return nil
}

// Decide checks one URI given its hop path from the seed.
func (s *SurtPrefixes) Decide(rawURL, hopPath string, isSeed bool) SimpleDecision {
	if isSeed {
		return SimpleDecision{Accept: true, Rule: "ACCEPT by rule #0 SeedAcceptDecideRule"}
	}
	if !strings.HasPrefix(rawURL, "http://") && !strings.HasPrefix(rawURL, "https://") {
		return SimpleDecision{Rule: "REJECT by rule #3 SchemeNotInSetDecideRule"}
	}
	if s.maxHops > 0 && len(hopPath) > s.maxHops {
		return SimpleDecision{Rule: "REJECT by rule #2 TooManyHopsDecideRule"}
	}
	if s.matches(surt.Heritrix(rawURL)) {
		return SimpleDecision{Accept: true, Rule: "ACCEPT by rule #1 SurtPrefixedDecideRule"}
	}
	return SimpleDecision{Rule: "REJECT by rule #0 RejectDecideRule"}
}

// matches reports whether any prefix in the set is a prefix of su, by
// looking up every leading substring: no allocation, and cost bounded by the
// URI's length rather than the number of seeds.
func (s *SurtPrefixes) matches(su string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i := len(su); i > 0; i-- {
		if _, ok := s.prefixes[su[:i]]; ok {
			return true
		}
	}
	return false
}
