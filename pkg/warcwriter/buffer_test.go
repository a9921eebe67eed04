package warcwriter

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestRecordsBufferInMemory checks where record blocks are buffered. A
// response the caller can rewind (the fetcher's spool) is written from its
// source, never copied into gowarc's buffer, whatever its size; one that
// can only be read once goes through gowarc's buffer, which holds blocks
// up to its memory limit (sized gives it exactly their size) and spills
// larger ones. A spill directory that cannot hold files makes only those
// fail.
func TestRecordsBufferInMemory(t *testing.T) {
	noDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(noDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w, _ := newTestWriter(t, testConfig(t.TempDir()), WithBufferDir(noDir))
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		size     int
		readOnce bool
		spill    bool
	}{
		{"tiny", 1, false, false},
		{"page", 10_000, false, false},
		{"over-the-limit-held", gowarcMemBytes + 1, false, false},
		{"tiny-read-once", 1, true, false},
		{"just-under-the-limit", gowarcMemBytes - 200, true, false},
		{"over-the-limit", gowarcMemBytes + 1, true, true},
	} {
		f := newFetch("http://example.com/"+c.name, newFakeClock().Now(), body(uint64(c.size), c.size), false)
		f.c.Metadata = &Metadata{Via: "http://example.com/", HopsFromSeed: "L"}
		if c.readOnce {
			f.c.Response = struct{ io.Reader }{f.c.Response}
		}
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
	// The fetch this test builds is about 10 KB; the page is written from
	// it, not buffered again.
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("a 10 KB capture allocated %d bytes", per)
	if per > 32<<10 {
		t.Errorf("a 10 KB capture allocated %d bytes, want at most %d", per, 32<<10)
	}
}
