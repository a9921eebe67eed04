// Package lru is a bounded map whose entries expire, evicting the least
// recently used entry past its bound: the in-process caches in front of
// shared state (robots rules, DNS answers). It is safe for concurrent use.
package lru

import (
	"container/list"
	"sync"
	"time"
)

// Cache maps K to V. The zero value is not usable; call New.
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recently used; values are *entry[K, V]
	items map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key     K
	val     V
	expires time.Time // zero: never
}

// New returns a cache holding at most bound entries (at least one).
func New[K comparable, V any](bound int) *Cache[K, V] {
	return &Cache[K, V]{max: max(bound, 1), order: list.New(), items: map[K]*list.Element{}}
}

// Get returns the value of k unless it is absent or expired at now; an
// expired entry is dropped.
func (c *Cache[K, V]) Get(k K, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	el, ok := c.items[k]
	if !ok {
		return zero, false
	}
	e := el.Value.(*entry[K, V])
	if !e.expires.IsZero() && !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.items, k)
		return zero, false
	}
	c.order.MoveToFront(el)
	return e.val, true
}

// Put stores v under k until expires (the zero time: no expiry), evicting
// the least recently used entries past the bound.
func (c *Cache[K, V]) Put(k K, v V, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &entry[K, V]{key: k, val: v, expires: expires}
	if el, ok := c.items[k]; ok {
		el.Value = e
		c.order.MoveToFront(el)
		return
	}
	c.items[k] = c.order.PushFront(e)
	for c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*entry[K, V]).key)
	}
}

// Len counts the entries, expired ones included.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
