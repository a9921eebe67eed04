package lru

import (
	"sync"
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New[string, int](2)
	c.Put("a", 1, now.Add(time.Minute))
	c.Put("b", 2, time.Time{}) // never expires
	if v, ok := c.Get("a", now); !ok || v != 1 {
		t.Fatalf("a = %d, %v", v, ok)
	}
	c.Put("c", 3, time.Time{}) // evicts b, the least recently used
	if _, ok := c.Get("b", now); ok {
		t.Fatal("b survived eviction")
	}
	if _, ok := c.Get("a", now.Add(time.Minute)); ok {
		t.Fatal("a is served at its expiry")
	}
	if c.Len() != 1 {
		t.Fatalf("len %d after dropping the expired entry, want 1", c.Len())
	}
	if v, ok := c.Get("c", now.Add(1000*time.Hour)); !ok || v != 3 {
		t.Fatal("an entry without expiry expired")
	}
	c.Put("c", 4, time.Time{})
	if v, _ := c.Get("c", now); v != 4 || c.Len() != 1 {
		t.Fatalf("replacing: c = %d, len %d", v, c.Len())
	}
	if New[int, int](0).max != 1 {
		t.Fatal("a bound below one is not raised")
	}
}

func TestCacheConcurrent(t *testing.T) {
	c := New[int, int](100)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				c.Put(g*1000+i, i, time.Time{})
				c.Get(i, time.Now())
			}
		})
	}
	wg.Wait()
	if c.Len() != 100 {
		t.Fatalf("len %d, bound 100", c.Len())
	}
}
