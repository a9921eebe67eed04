package spool

import (
	"math/bits"
	"sync"
)

// Pooled memory comes in powers of two from minPooled to maxPooled bytes.
// A request above maxPooled is allocated and left to the garbage
// collector as before.
const (
	minPooledShift = 12 // 4 KiB
	poolClasses    = 9  // up to 1 MiB, the fetcher's default threshold
	maxPooled      = 1 << (minPooledShift + poolClasses - 1)
)

// Pool recycles the memory of closed Buffers for new ones. A crawl spools
// every response: without it each page's buffer is fresh memory, which
// the runtime zeroes and the kernel faults in page by page (a fifth of a
// fetch's CPU on the Python documentation, more than copying the bytes).
// A pooled Buffer's capacity is its request rounded up to a class, so at
// most twice what it asked for (Buffer's own bound on its memory doubles
// with it). A Pool is safe for concurrent use; its zero value is
// usable, and so is a nil *Pool (it pools nothing).
type Pool struct {
	classes [poolClasses]sync.Pool // class i holds *[]byte of cap minPooled<<i
}

// NewPool returns an empty Pool.
func NewPool() *Pool { return &Pool{} }

// New returns an empty Buffer like the package's New whose memory comes
// from p and goes back to it when the Buffer is closed.
func (p *Pool) New(threshold int64, dir string) *Buffer {
	b := New(threshold, dir)
	b.pool = p
	return b
}

// class returns the smallest class holding n bytes, or -1 if none does.
func class(n int) int {
	if n > maxPooled {
		return -1
	}
	if n <= 1<<minPooledShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minPooledShift
}

// get returns an empty slice with room for at least n bytes.
func (p *Pool) get(n int) []byte {
	c := class(n)
	if p == nil || c < 0 {
		return make([]byte, 0, n)
	}
	if v, ok := p.classes[c].Get().(*[]byte); ok {
		return (*v)[:0]
	}
	return make([]byte, 0, 1<<(minPooledShift+c))
}

// put gives b's memory back. Only slices of a class's exact capacity are
// kept (the ones get made); others are left to the garbage collector.
func (p *Pool) put(b []byte) {
	if p == nil || cap(b) < 1<<minPooledShift {
		return
	}
	c := class(cap(b))
	if c < 0 || cap(b) != 1<<(minPooledShift+c) {
		return
	}
	b = b[:0]
	p.classes[c].Put(&b)
}
