package costcache

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// gatedRead is a read that returns when the test says.
type gatedRead struct {
	reads   atomic.Int32
	release chan string
	fail    chan error
}

func (g *gatedRead) read(ctx context.Context) (string, error) {
	g.reads.Add(1)
	select {
	case v := <-g.release:
		return v, nil
	case err := <-g.fail:
		return "", err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// waitReads polls until n reads have started.
func (g *gatedRead) waitReads(t *testing.T, n int32) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); g.reads.Load() < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d reads started, want %d", g.reads.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Callers at once share one read; a value is kept for ten times its
// read's duration but at least 2 s; a read longer than the wait leaves
// the caller with the last value and goes on for the next caller; a
// failed read is the error of the caller that waited for it, and the
// next caller reads again; Expire makes the next caller read.
func TestCache(t *testing.T) {
	g := &gatedRead{release: make(chan string), fail: make(chan error)}
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC).UnixNano())
	advance := func(d time.Duration) { clock.Add(int64(d)) }
	// A long wait, so that no caller gives up on a read the test is about
	// to release however slow the machine; the slow read below shortens it.
	c := New(g.read, Options{Wait: time.Minute, Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	ctx := context.Background()
	get := func() chan string {
		out := make(chan string, 1)
		go func() {
			v, _, err := c.Get(ctx)
			if err != nil {
				v = "error: " + err.Error() + ", last " + v
			}
			out <- v
		}()
		return out
	}

	// Three callers, one read of 100 ms.
	var wg sync.WaitGroup
	got := make([]string, 3)
	for i := range got {
		wg.Go(func() {
			v, at, err := c.Get(ctx)
			if err != nil || at.IsZero() {
				t.Errorf("Get = %q at %v, %v", v, at, err)
			}
			got[i] = v
		})
	}
	g.waitReads(t, 1)
	advance(100 * time.Millisecond)
	g.release <- "first"
	wg.Wait()
	if got[0] != "first" || got[1] != "first" || got[2] != "first" || g.reads.Load() != 1 {
		t.Fatalf("got %q after %d reads; want one read for three callers", got, g.reads.Load())
	}

	// Kept 2 s from the read's start (ten times 100 ms is less).
	advance(1800 * time.Millisecond)
	if v, _, err := c.Get(ctx); v != "first" || err != nil || g.reads.Load() != 1 {
		t.Fatalf("1.9 s on: %q, %v, %d reads", v, err, g.reads.Load())
	}

	// Stale: a read that outlasts the wait leaves the last value.
	advance(200 * time.Millisecond)
	c.o.Wait = 100 * time.Millisecond // no Get is running
	began := time.Now()
	if v, _, err := c.Get(ctx); v != "first" || err != nil || time.Since(began) < c.o.Wait {
		t.Fatalf("slow read: %q, %v after %s", v, err, time.Since(began))
	}
	c.o.Wait = time.Minute
	// It goes on; the next caller shares it and gets its value.
	out := get()
	g.release <- "second"
	if v := <-out; v != "second" || g.reads.Load() != 2 {
		t.Fatalf("after the slow read: %q, %d reads", v, g.reads.Load())
	}

	// A failed read: the waiting caller's error; the next caller reads.
	advance(time.Hour)
	out = get()
	g.fail <- errors.New("redis down")
	if v := <-out; v != "error: redis down, last second" {
		t.Fatalf("failed read: %q", v)
	}
	out = get()
	g.waitReads(t, 4)
	advance(time.Second) // a read of 1 s
	g.release <- "third"
	if v := <-out; v != "third" {
		t.Fatalf("after a failed read: %q", v)
	}

	// Kept ten times the 1 s it took, from its start.
	advance(8500 * time.Millisecond)
	if v, _, _ := c.Get(ctx); v != "third" || g.reads.Load() != 4 {
		t.Fatalf("9.5 s after a 1 s read: %q, %d reads", v, g.reads.Load())
	}
	// Expire: the next caller reads.
	c.Expire()
	out = get()
	g.release <- "fourth"
	if v := <-out; v != "fourth" || g.reads.Load() != 5 {
		t.Fatalf("after Expire: %q, %d reads", v, g.reads.Load())
	}
	// At most MaxAge (5 min), however long the read took.
	c2 := New(func(context.Context) (int, error) { advance(time.Hour); return 1, nil },
		Options{Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	if _, _, err := c2.Get(ctx); err != nil {
		t.Fatal(err)
	}
	c2.mu.Lock()
	keep := c2.until.Sub(c2.at)
	c2.mu.Unlock()
	if keep != 5*time.Minute {
		t.Errorf("a one-hour read is kept %s, want the 5 min MaxAge", keep)
	}
}
