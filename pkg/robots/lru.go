package robots

import (
	"container/list"
	"sync"
	"time"
)

// lru is a bounded, expiring map from origin to parsed Rules, least recently
// used first out. It is safe for concurrent use.
type lru struct {
	mu    sync.Mutex
	max   int
	order *list.List // front: most recently used; values are *lruEntry
	items map[string]*list.Element
}

type lruEntry struct {
	origin  string
	rules   *Rules
	expires time.Time
	forever bool
}

func newLRU(maxEntries int) *lru {
	return &lru{max: maxEntries, order: list.New(), items: map[string]*list.Element{}}
}

// get returns the unexpired rules of origin, dropping an expired entry.
func (l *lru) get(origin string, now time.Time) (*Rules, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el, ok := l.items[origin]
	if !ok {
		return nil, false
	}
	e := el.Value.(*lruEntry)
	if !e.forever && !now.Before(e.expires) {
		l.order.Remove(el)
		delete(l.items, origin)
		return nil, false
	}
	l.order.MoveToFront(el)
	return e.rules, true
}

// put stores or replaces origin's rules, evicting the least recently used
// entry past the bound.
func (l *lru) put(origin string, r *Rules, expires time.Time, forever bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := &lruEntry{origin: origin, rules: r, expires: expires, forever: forever}
	if el, ok := l.items[origin]; ok {
		el.Value = e
		l.order.MoveToFront(el)
		return
	}
	l.items[origin] = l.order.PushFront(e)
	for l.order.Len() > l.max {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		delete(l.items, oldest.Value.(*lruEntry).origin)
	}
}

// len returns the number of entries, expired ones included.
func (l *lru) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}
