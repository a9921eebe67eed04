package frontier

import (
	"context"
	"sync"
	"time"
)

// Batcher coalesces concurrent Admit and Complete calls into shared script
// calls (group commit): while one call is running, others queue; the next
// call carries everything queued. Under load a worker's threads thus share
// one round trip per batch instead of one each, and an idle caller pays no
// added latency. It starts no goroutines.
type Batcher struct {
	f        *Frontier
	admit    group[Candidate, AdmitResult]
	complete group[Outcome, bool]
}

// batchTimeout bounds one coalesced call. It runs without the leader's
// cancellation: other callers' work rides on it.
const batchTimeout = 30 * time.Second

// maxBatch caps the items in one script call so a call never blocks Redis
// for long.
const maxBatch = 2000

// NewBatcher returns a Batcher over f.
func NewBatcher(f *Frontier) *Batcher {
	b := &Batcher{f: f}
	b.admit.run = f.Admit
	b.complete.run = f.Complete
	return b
}

// Admit is Frontier.Admit, coalesced with concurrent calls.
func (b *Batcher) Admit(ctx context.Context, cs []Candidate) ([]AdmitResult, error) {
	return b.admit.do(ctx, cs)
}

// Complete is Frontier.Complete, coalesced with concurrent calls.
func (b *Batcher) Complete(ctx context.Context, outs []Outcome) ([]bool, error) {
	return b.complete.do(ctx, outs)
}

// group is one coalesced operation. The first caller to find it idle leads:
// it runs every queued request in one call, then hands leadership to the
// oldest request still waiting, so no caller serves others for long.
type group[In, Out any] struct {
	run func(context.Context, []In) ([]Out, error)

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

func (g *group[In, Out]) do(ctx context.Context, in []In) ([]Out, error) {
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
func (g *group[In, Out]) lead(ctx context.Context) {
	g.mu.Lock()
	n, size := 0, 0
	for n < len(g.pending) && (n == 0 || size+len(g.pending[n].in) <= maxBatch) {
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
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), batchTimeout)
	out, err := g.run(rctx, all)
	cancel()
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
