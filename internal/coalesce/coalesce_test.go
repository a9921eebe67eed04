package coalesce

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/internal/testwait"
)

// Callers get their own results, in order, and share calls.
func TestGroupSharesCalls(t *testing.T) {
	var calls, maxSeen atomic.Int64
	release := make(chan struct{})
	g := &Group[int, int]{MaxBatch: 50, Run: func(_ context.Context, in []int) ([]int, error) {
		if calls.Add(1) == 1 {
			<-release // hold the first call so the others queue behind it
		}
		if n := int64(len(in)); n > maxSeen.Load() {
			maxSeen.Store(n)
		}
		out := make([]int, len(in))
		for i, v := range in {
			out[i] = v * 2
		}
		return out, nil
	}}
	const callers = 40
	var wg sync.WaitGroup
	var started sync.WaitGroup
	started.Add(callers)
	for c := range callers {
		wg.Go(func() {
			in := []int{c * 10, c*10 + 1, c*10 + 2}
			started.Done()
			out, err := g.Do(context.Background(), in)
			if err != nil {
				t.Error(err)
				return
			}
			for i, v := range in {
				if out[i] != 2*v {
					t.Errorf("caller %d: result %d is %d, want %d", c, i, out[i], 2*v)
				}
			}
		})
	}
	started.Wait()
	// Release the first call once every other caller is queued behind it.
	testwait.Until(t, 10*time.Second, "callers queued", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.pending) == callers-1
	})
	close(release)
	wg.Wait()
	// The first call ran alone; the 39 queued behind it ride in batches of
	// at most 16 callers (MaxBatch 50, 3 inputs each): 3 more calls.
	if n := calls.Load(); n != 4 {
		t.Errorf("%d calls for %d callers, want 4", n, callers)
	}
	if maxSeen.Load() > 50 {
		t.Errorf("a call carried %d inputs, over MaxBatch 50", maxSeen.Load())
	}
}

func TestGroupErrors(t *testing.T) {
	boom := errors.New("redis gone")
	g := &Group[int, int]{Run: func(context.Context, []int) ([]int, error) { return nil, boom }}
	if _, err := g.Do(context.Background(), []int{1}); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the run's error", err)
	}
	short := &Group[int, int]{Run: func(_ context.Context, in []int) ([]int, error) { return in[1:], nil }}
	if _, err := short.Do(context.Background(), []int{1, 2}); err == nil {
		t.Fatal("a run returning too few results was accepted")
	}
	if out, err := g.Do(context.Background(), nil); out != nil || err != nil {
		t.Fatalf("empty input: %v, %v", out, err)
	}
	// The group is usable after failures.
	ok := &Group[int, int]{Run: func(_ context.Context, in []int) ([]int, error) { return in, nil }}
	for range 3 {
		if out, err := ok.Do(context.Background(), []int{7}); err != nil || out[0] != 7 {
			t.Fatalf("%v, %v", out, err)
		}
	}
}
