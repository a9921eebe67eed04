package warcwriter

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestRecordsBufferInMemory checks that records whose blocks fit gowarc's
// memory limit never touch its spill directory, up to the limit itself
// (sized gives such records a buffer of exactly their size), and that
// larger ones still spill: a spill directory that cannot hold files makes
// only those fail.
func TestRecordsBufferInMemory(t *testing.T) {
	noDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(noDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w, _ := newTestWriter(t, testConfig(t.TempDir()), WithBufferDir(noDir))
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		size  int
		spill bool
	}{
		{"tiny", 1, false},
		{"page", 10_000, false},
		{"just-under-the-limit", gowarcMemBytes - 200, false},
		{"over-the-limit", gowarcMemBytes + 1, true},
	} {
		f := newFetch("http://example.com/"+c.name, newFakeClock().Now(), body(uint64(c.size), c.size), false)
		f.c.Metadata = &Metadata{Via: "http://example.com/", HopsFromSeed: "L"}
		_, err := w.WriteCapture(ctx, f.c)
		if (err != nil) != c.spill {
			t.Errorf("%s (%d bytes): err = %v, want a spill error: %v", c.name, c.size, err, c.spill)
		}
	}
}

// TestCaptureAllocations bounds what writing a 10 KB page allocates. A
// copy buffer per record (32 KiB each, three records) is what the bound
// catches: it was most of what a crawl allocated.
func TestCaptureAllocations(t *testing.T) {
	w, _ := newTestWriter(t, testConfig(t.TempDir()))
	ctx := context.Background()
	page := body(7, 10_000)
	write := func() {
		f := newFetch("http://example.com/page", newFakeClock().Now(), page, false)
		f.c.Metadata = &Metadata{Via: "http://example.com/", HopsFromSeed: "L",
			Outlinks: []Outlink{{URL: "http://example.com/a", Hop: "L", Context: "a/@href"}}}
		if _, err := w.WriteCapture(ctx, f.c); err != nil {
			t.Fatal(err)
		}
	}
	write() // opens the file and warms the pools
	const n = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		write()
	}
	runtime.ReadMemStats(&after)
	// About 10 KB of the page is buffered for gowarc, and the fetch this
	// test builds is another 10 KB.
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("a 10 KB capture allocated %d bytes", per)
	if per > 64<<10 {
		t.Errorf("a 10 KB capture allocated %d bytes, want at most %d", per, 64<<10)
	}
}
