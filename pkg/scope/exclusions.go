package scope

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Exclusions is the crawl's list of excluded SURT prefixes kept in Redis,
// added and removed by operators through the control topic (pkg/control).
// It is merged with the profile's excluded-SURTs file: a URI under a
// prefix of either is rejected by the exclusion check (rule N+1,
// ExcludedSurtsDecideRule) and again at fetch time (Engine.Excluded).
// Keeping it in Redis means every worker, including one started after the
// command, sees the same list; each reads it on Refresh, which costs one
// GET of a version counter when nothing changed.
type Exclusions struct {
	rdb      redis.UniversalClient
	key, ver string

	mu   sync.Mutex // serialises Refresh; guards last
	last int64      // version of set, -1 before the first read
	set  atomic.Pointer[PrefixSet]
}

// ExclusionsKey is the Redis set of excluded prefixes under a frontier's
// key prefix (so it shares the frontier's hash tag, like the seed set).
func ExclusionsKey(keyPrefix string) string { return keyPrefix + "scope:exclusions" }

// NewExclusions reads and writes the list under keyPrefix (the frontier's
// prefix). Nothing is read until Refresh.
func NewExclusions(rdb redis.UniversalClient, keyPrefix string) *Exclusions {
	k := ExclusionsKey(keyPrefix)
	x := &Exclusions{rdb: rdb, key: k, ver: k + ":v", last: -1}
	x.set.Store(NewPrefixSet(nil))
	return x
}

// Add adds SURT prefixes (normalised as the exclusion file's lines are,
// see PrefixFromLine) and returns how many were new.
func (x *Exclusions) Add(ctx context.Context, prefixes []string) (int64, error) {
	return x.change(ctx, prefixes, true)
}

// Remove removes SURT prefixes and returns how many were present. A
// prefix that is also in the profile's file stays excluded.
func (x *Exclusions) Remove(ctx context.Context, prefixes []string) (int64, error) {
	return x.change(ctx, prefixes, false)
}

func (x *Exclusions) change(ctx context.Context, prefixes []string, add bool) (int64, error) {
	if len(prefixes) == 0 {
		return 0, nil
	}
	members := make([]any, len(prefixes))
	for i, p := range prefixes {
		members[i] = p
	}
	var n *redis.IntCmd
	_, err := x.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if add {
			n = p.SAdd(ctx, x.key, members...)
		} else {
			n = p.SRem(ctx, x.key, members...)
		}
		// The version tells every worker's Refresh to read the set again.
		p.Incr(ctx, x.ver)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("scope exclusions %s: %w", x.key, err)
	}
	if err := x.Refresh(ctx); err != nil {
		return n.Val(), err
	}
	return n.Val(), nil
}

// Refresh reads the list again when its version changed.
func (x *Exclusions) Refresh(ctx context.Context) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	v, err := x.rdb.Get(ctx, x.ver).Int64()
	if errors.Is(err, redis.Nil) {
		v, err = 0, nil
	}
	if err != nil {
		return fmt.Errorf("scope exclusions version: %w", err)
	}
	if v == x.last {
		return nil
	}
	members, err := x.rdb.SMembers(ctx, x.key).Result()
	if err != nil {
		return fmt.Errorf("scope exclusions %s: %w", x.key, err)
	}
	x.set.Store(NewPrefixSet(members))
	x.last = v
	return nil
}

// Contains reports whether a SURT is under one of the prefixes.
func (x *Exclusions) Contains(surt string) bool {
	return x != nil && x.set.Load().ContainsPrefixOf(surt)
}

// Members returns the prefixes as last read, sorted.
func (x *Exclusions) Members() []string { return x.set.Load().Members() }

// Len is the number of prefixes as last read (0 for a nil list).
func (x *Exclusions) Len() int {
	if x == nil {
		return 0
	}
	return x.set.Load().Len()
}
