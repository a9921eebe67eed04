package dns

import (
	"container/list"
	"time"
)

// lru is a bounded map of answers by host, evicting the least recently used
// entry. It is not safe for concurrent use; the Resolver's mutex guards it.
type lru struct {
	max     int
	order   *list.List // front: most recently used; values are *Answer
	entries map[string]*list.Element
}

func newLRU(limit int) *lru {
	return &lru{max: limit, order: list.New(), entries: make(map[string]*list.Element)}
}

// get returns the unexpired answer for host, or nil. Expired entries are
// dropped on sight.
func (c *lru) get(host string, now time.Time) *Answer {
	el, ok := c.entries[host]
	if !ok {
		return nil
	}
	ans := el.Value.(*Answer)
	if !now.Before(ans.Expires) {
		c.order.Remove(el)
		delete(c.entries, host)
		return nil
	}
	c.order.MoveToFront(el)
	return ans
}

// put stores ans under host, evicting the least recently used entries past
// the bound.
func (c *lru) put(host string, ans *Answer) {
	if el, ok := c.entries[host]; ok {
		el.Value = ans
		c.order.MoveToFront(el)
		return
	}
	c.entries[host] = c.order.PushFront(ans)
	for c.order.Len() > c.max {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*Answer).Host)
	}
}

// len returns the number of entries, expired or not.
func (c *lru) len() int { return c.order.Len() }
