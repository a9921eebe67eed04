package warcwriter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrentCaptures writes from many goroutines into a few parallel,
// rotating files and checks that every capture is present exactly once,
// whole, in the file and at the offset its Location names.
func TestConcurrentCaptures(t *testing.T) {
	const goroutines, perGoroutine = 12, 20
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.Parallel = 3
	cfg.MaxFileSize = 40_000
	w, closed := newTestWriter(t, cfg)

	var mu sync.Mutex
	locs := map[string]Location{}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				url := fmt.Sprintf("http://example.com/%d/%d", g, i)
				f := newFetch(url, fetchDate, body(uint64(g*1000+i), 200+i*20), false)
				f.c.Metadata = &Metadata{Via: "http://example.com/", Outlinks: []Outlink{{URL: url + "/next", Hop: "L"}}}
				loc, err := w.WriteCapture(context.Background(), f.c)
				if err != nil {
					t.Errorf("%s: %v", url, err)
					return
				}
				mu.Lock()
				locs[url] = loc
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ix := indexDir(t, dir)
	if len(locs) != goroutines*perGoroutine || len(ix.responses) != len(locs) {
		t.Fatalf("%d locations, %d distinct responses in files; want %d", len(locs), len(ix.responses), goroutines*perGoroutine)
	}
	for url, loc := range locs {
		if ix.responses[url] != 1 || ix.where[url] != loc.Filename || ix.offset[url] != loc.Offset {
			t.Errorf("%s: %d responses, in %s at %d; location %+v", url, ix.responses[url], ix.where[url], ix.offset[url], loc)
		}
	}
	if len(ix.files) < cfg.Parallel+1 {
		t.Errorf("%d files; want rotation across %d parallel files", len(ix.files), cfg.Parallel)
	}
	checkSerials(t, warcFiles(t, dir), false)
	if len(closed.all()) != len(ix.files) {
		t.Errorf("%d OnClose notices for %d files", len(closed.all()), len(ix.files))
	}
}

// TestCloseStopsWriters checks that writes after Close fail with ErrClosed
// and that Close is idempotent.
func TestCloseStopsWriters(t *testing.T) {
	w, _ := newTestWriter(t, testConfig(t.TempDir()))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f := newFetch("http://example.com/", fetchDate, []byte("x"), false)
	if _, err := w.WriteCapture(context.Background(), f.c); !errors.Is(err, ErrClosed) {
		t.Errorf("WriteCapture after Close: %v, want ErrClosed", err)
	}
	if _, err := w.WriteDNS(context.Background(), "example.com", fetchDate, "", []byte("a")); !errors.Is(err, ErrClosed) {
		t.Errorf("WriteDNS after Close: %v, want ErrClosed", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestContextWhileWaiting checks that a write waiting for a busy file gives
// up when its context ends, and that a cancelled context writes nothing.
func TestContextWhileWaiting(t *testing.T) {
	dir := t.TempDir()
	w, _ := newTestWriter(t, testConfig(dir))
	held, err := w.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	f := newFetch("http://example.com/", fetchDate, []byte("x"), false)
	if _, err := w.WriteCapture(ctx, f.c); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WriteCapture on busy writer: %v, want DeadlineExceeded", err)
	}
	w.release(held)

	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	f = newFetch("http://example.com/", fetchDate, []byte("x"), false)
	if _, err := w.WriteCapture(cancelled, f.c); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteCapture with cancelled context: %v, want Canceled", err)
	}
	if names := warcFiles(t, dir); len(names) != 0 {
		t.Errorf("files = %v, want none", names)
	}
}
