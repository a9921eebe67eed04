package warcwriter

import (
	"context"
	"os"
	"path/filepath"
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
