// Package coalesce merges concurrent batch calls into shared ones (group
// commit): while one call runs, others queue, and the next call carries
// everything queued. Under load many goroutines thus share one round trip
// to Redis instead of making one each, and an idle caller pays no added
// latency. It starts no goroutines.
package coalesce

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Group coalesces calls of Run. The zero value is not usable: set Run.
type Group[In, Out any] struct {
	// Run does one batch and returns one result per input, in order.
	Run func(context.Context, []In) ([]Out, error)
	// MaxBatch caps the inputs of one Run (a single larger call still runs
	// alone); 0 means no cap.
	MaxBatch int
	// Timeout bounds one Run, which runs without the leader's
	// cancellation because other callers' work rides on it; 0 means 30 s.
	Timeout time.Duration

	mu      sync.Mutex
	busy    bool
	pending []*request[In, Out]
}

type request[In, Out any] struct {
	in   []In
	out  []Out
	err  error
	done chan struct{}
	lead chan struct{}
}

// Do runs in, alone or with other callers' inputs, and returns its own
// results. The first caller to find the group idle leads: it runs every
// queued request in one call, then hands leadership to the oldest request
// still waiting, so no caller serves others for long.
func (g *Group[In, Out]) Do(ctx context.Context, in []In) ([]Out, error) {
	if len(in) == 0 {
		return nil, nil
	}
	r := &request[In, Out]{in: in, done: make(chan struct{}), lead: make(chan struct{})}
	g.mu.Lock()
	g.pending = append(g.pending, r)
	if g.busy {
		g.mu.Unlock()
		select {
		case <-r.done:
			return r.out, r.err
		case <-r.lead:
		}
	} else {
		g.busy = true
		g.mu.Unlock()
	}
	g.lead(ctx)
	<-r.done
	return r.out, r.err
}

// lead runs one batch from the head of the queue (which holds the
// leader's own request) and passes leadership on.
func (g *Group[In, Out]) lead(ctx context.Context) {
	g.mu.Lock()
	n, size := 0, 0
	for n < len(g.pending) && (n == 0 || g.MaxBatch <= 0 || size+len(g.pending[n].in) <= g.MaxBatch) {
		size += len(g.pending[n].in)
		n++
	}
	batch := g.pending[:n:n]
	g.pending = g.pending[n:]
	g.mu.Unlock()

	all := make([]In, 0, size)
	for _, r := range batch {
		all = append(all, r.in...)
	}
	timeout := g.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	out, err := g.Run(rctx, all)
	cancel()
	if err == nil && len(out) != len(all) {
		err = fmt.Errorf("coalesce: run returned %d results for %d inputs", len(out), len(all))
	}
	off := 0
	for _, r := range batch {
		if err == nil {
			r.out = out[off : off+len(r.in)]
		}
		r.err = err
		off += len(r.in)
		close(r.done)
	}

	g.mu.Lock()
	if len(g.pending) > 0 {
		close(g.pending[0].lead)
	} else {
		g.busy = false
	}
	g.mu.Unlock()
}
