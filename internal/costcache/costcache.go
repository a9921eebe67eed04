// Package costcache keeps a value whose read costs in proportion to the
// crawl's size, such as a scan of every host in the frontier: a second
// for a small crawl, a minute for a domain crawl's ten million hosts. One
// read at a time serves every caller; a value is kept for a multiple of
// what its read took, so reads take a bounded share of the store's time
// however large the crawl; and a caller waits for a read only so long,
// then gets the last value with its time while the read goes on for the
// callers after it.
package costcache

import (
	"context"
	"sync"
	"time"
)

// Options tune a Cache; zero fields take the defaults.
type Options struct {
	// Factor: a value is kept for Factor times its read's duration
	// (default 10), but at least MinAge (default 2 s) and at most MaxAge
	// (default 5 min) from the read's start.
	Factor         int
	MinAge, MaxAge time.Duration
	// Wait is how long Get waits for a read (default 2 s).
	Wait time.Duration
	// Timeout bounds one read, which no caller need wait for (default
	// 10 min).
	Timeout time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Cache holds the last value read by its read function. Use New.
type Cache[T any] struct {
	read func(context.Context) (T, error)
	o    Options

	mu      sync.Mutex
	val     T
	at      time.Time // start of the read val came from; zero: none yet
	until   time.Time // when val goes stale
	err     error     // of the last read
	reading chan struct{}
}

// New returns a Cache over read.
func New[T any](read func(context.Context) (T, error), o Options) *Cache[T] {
	if o.Factor <= 0 {
		o.Factor = 10
	}
	if o.MinAge <= 0 {
		o.MinAge = 2 * time.Second
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 5 * time.Minute
	}
	if o.Wait <= 0 {
		o.Wait = 2 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Cache[T]{read: read, o: o}
}

// Get returns the value, reading it first when it is stale: it waits for
// that read at most Wait (or until ctx ends), then returns the last value
// (the zero T and a zero time before the first read has ended) and the
// time its read started. The error is that of the read it waited for,
// returned with the last value; the next Get reads again.
func (c *Cache[T]) Get(ctx context.Context) (T, time.Time, error) {
	c.mu.Lock()
	if !c.at.IsZero() && c.o.Now().Before(c.until) {
		defer c.mu.Unlock()
		return c.val, c.at, nil
	}
	done := c.reading
	if done == nil {
		done = make(chan struct{})
		c.reading = done
		go c.refresh(done)
	}
	c.mu.Unlock()
	timer := time.NewTimer(c.o.Wait)
	defer timer.Stop()
	waited := false
	select {
	case <-done:
		waited = true
	case <-timer.C:
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if waited && c.err != nil {
		return c.val, c.at, c.err
	}
	return c.val, c.at, nil
}

// Expire makes the value stale: the next Get reads again.
func (c *Cache[T]) Expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.until = time.Time{}
}

// refresh reads once and closes done.
func (c *Cache[T]) refresh(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), c.o.Timeout)
	defer cancel()
	start := c.o.Now()
	v, err := c.read(ctx)
	took := c.o.Now().Sub(start)
	c.mu.Lock()
	c.err = err
	if err == nil {
		keep := min(max(time.Duration(c.o.Factor)*took, c.o.MinAge), c.o.MaxAge)
		c.val, c.at, c.until = v, start, start.Add(keep)
	}
	c.reading = nil
	c.mu.Unlock()
	close(done)
}
