package frontier

import (
	"context"
	"time"

	"github.com/trawler-crawl/trawler/internal/coalesce"
)

// Batcher coalesces concurrent Admit and Complete calls into shared script
// calls (group commit): while one call is running, others queue; the next
// call carries everything queued. Under load a worker's threads thus share
// one round trip per batch instead of one each, and an idle caller pays no
// added latency. It starts no goroutines.
type Batcher struct {
	f        *Frontier
	admit    coalesce.Group[Candidate, AdmitResult]
	complete coalesce.Group[Outcome, bool]
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
	b.admit = coalesce.Group[Candidate, AdmitResult]{Run: f.Admit, MaxBatch: maxBatch, Timeout: batchTimeout}
	b.complete = coalesce.Group[Outcome, bool]{Run: f.Complete, MaxBatch: maxBatch, Timeout: batchTimeout}
	return b
}

// Admit is Frontier.Admit, coalesced with concurrent calls.
func (b *Batcher) Admit(ctx context.Context, cs []Candidate) ([]AdmitResult, error) {
	return b.admit.Do(ctx, cs)
}

// Complete is Frontier.Complete, coalesced with concurrent calls.
func (b *Batcher) Complete(ctx context.Context, outs []Outcome) ([]bool, error) {
	return b.complete.Do(ctx, outs)
}
