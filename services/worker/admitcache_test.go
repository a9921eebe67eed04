package worker

import (
	"testing"
	"time"
)

// The admission cache answers for a key between ttl/2 and ttl after it was
// added, tells launch timestamps apart, and holds at most about max keys.
func TestAdmitCache(t *testing.T) {
	c := newAdmitCache(time.Minute, 1000)
	k := c.key("http://example.org/", "")
	if c.seen(k) {
		t.Fatal("unseen key reported seen")
	}
	c.add([]uint64{k})
	if !c.seen(k) {
		t.Fatal("added key not seen")
	}
	if c.seen(c.key("http://example.org/", "20240101000000")) {
		t.Fatal("a new launch timestamp must be judged afresh")
	}
	now := c.rotated
	c.rotate(now.Add(31 * time.Second)) // first rotation: the key is in the old generation
	if !c.seen(k) {
		t.Fatal("key lost after one rotation")
	}
	c.rotated = now.Add(31 * time.Second)
	c.rotate(now.Add(62 * time.Second)) // second rotation: gone
	if _, ok := c.cur[k]; ok {
		t.Fatal("key survived two rotations")
	}
	if _, ok := c.old[k]; ok {
		t.Fatal("key survived two rotations")
	}
	big := newAdmitCache(time.Hour, 100)
	for i := range 1000 {
		big.add([]uint64{uint64(i)})
	}
	if n := len(big.cur) + len(big.old); n > 100 {
		t.Fatalf("cache holds %d keys, bound 100", n)
	}
}
