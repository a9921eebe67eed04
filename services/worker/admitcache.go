package worker

import (
	"hash/maphash"
	"sync"
	"time"
)

// admitCache remembers outlinks this worker recently put to the frontier
// (and the frontier answered), so the same navigation links found on page
// after page skip the candidate chain: scope judgement, the
// recently-crawled lookup and the admit script would only say again
// "already queued" or "seen". It is a cache, not crawl state: losing it
// costs only that work. Only outlinks are cached, never launches or
// re-journaled links, and the key includes the inherited launch timestamp,
// so a relaunch is judged afresh. Entries last between ttl/2 and ttl (two
// generations of hashes), so a URL that is due again within its
// recrawlInterval is put to the frontier again at most ttl later.
type admitCache struct {
	mu       sync.Mutex
	seed     maphash.Seed
	cur, old map[uint64]struct{}
	rotated  time.Time
	ttl      time.Duration
	max      int
}

const (
	admitCacheTTL = 2 * time.Minute
	admitCacheMax = 200_000
)

func newAdmitCache(ttl time.Duration, max int) *admitCache {
	return &admitCache{seed: maphash.MakeSeed(), cur: map[uint64]struct{}{}, old: map[uint64]struct{}{},
		rotated: time.Now(), ttl: ttl, max: max}
}

func (c *admitCache) key(url, launchTimestamp string) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(url)
	h.WriteByte(0)
	h.WriteString(launchTimestamp)
	return h.Sum64()
}

// seen reports whether the key was added recently.
func (c *admitCache) seen(k uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rotate(time.Now())
	_, ok := c.cur[k]
	if !ok {
		_, ok = c.old[k]
	}
	return ok
}

func (c *admitCache) add(keys []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rotate(time.Now())
	for _, k := range keys {
		c.cur[k] = struct{}{}
	}
}

// rotate starts a new generation when the current one is half the TTL old
// or half the size bound.
func (c *admitCache) rotate(now time.Time) {
	if now.Sub(c.rotated) < c.ttl/2 && len(c.cur) < c.max/2 {
		return
	}
	c.old, c.cur, c.rotated = c.cur, make(map[uint64]struct{}, len(c.cur)), now
}
