package spool

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestSection reads a section of buffers in memory and on disk through
// both read paths, after the parent dropped a surplus with Truncate, and
// checks what a section refuses.
func TestSection(t *testing.T) {
	data := pattern(7, 10_000)
	for _, c := range []struct {
		name      string
		threshold int64
		off, n    int64
	}{
		{"memory", 1 << 20, 300, 9000},
		{"memory-empty", 1 << 20, 10_000 - 500, 0},
		{"file", 1000, 300, 9000},
		{"file-whole", 1000, 0, 9500},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			b := New(c.threshold, dir)
			t.Cleanup(func() { _ = b.Close() })
			if _, err := b.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := b.Truncate(9500); err != nil { // a read-ahead surplus
				t.Fatal(err)
			}
			s, err := b.Section(c.off, c.n)
			if err != nil {
				t.Fatal(err)
			}
			want := data[c.off : c.off+c.n]
			if s.Size() != c.n || s.InMemory() != b.InMemory() {
				t.Fatalf("Size %d InMemory %v, want %d %v", s.Size(), s.InMemory(), c.n, b.InMemory())
			}
			got, err := io.ReadAll(s.NewReader())
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("NewReader: %d bytes (%v), want %d", len(got), err, len(want))
			}
			p := make([]byte, 100)
			k, err := s.ReadAt(p, c.n-50)
			if c.n >= 50 && (k != 50 || !errors.Is(err, io.EOF) || !bytes.Equal(p[:k], want[c.n-50:])) {
				t.Fatalf("ReadAt the last 50: %d (%v)", k, err)
			}
			if _, err := s.Write([]byte("x")); err == nil {
				t.Fatal("a section took a write")
			}
			if err := s.Truncate(0); err == nil {
				t.Fatal("a section took a truncate")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadAll(s.NewReader()); !errors.Is(err, ErrClosed) {
				t.Fatalf("read of a closed section: %v", err)
			}
			if got, err := io.ReadAll(b.NewReader()); err != nil || !bytes.Equal(got, data[:9500]) {
				t.Fatalf("closing the section changed its buffer: %d bytes (%v)", len(got), err)
			}
		})
	}
}

func TestSectionOfClosedBuffer(t *testing.T) {
	b := New(1000, t.TempDir())
	if _, err := b.Write(pattern(1, 5000)); err != nil {
		t.Fatal(err)
	}
	s, err := b.Section(10, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(s.NewReader()); !errors.Is(err, ErrClosed) {
		t.Fatalf("NewReader after the buffer closed: %v", err)
	}
	if _, err := s.ReadAt(make([]byte, 10), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("ReadAt after the buffer closed: %v", err)
	}
}

func TestSectionOutOfRange(t *testing.T) {
	b := New(1<<20, t.TempDir())
	t.Cleanup(func() { _ = b.Close() })
	if _, err := b.Write(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]int64{{-1, 10}, {0, 101}, {50, 51}, {10, -1}} {
		if _, err := b.Section(r[0], r[1]); err == nil {
			t.Errorf("Section(%d, %d) of 100 bytes: no error", r[0], r[1])
		}
	}
}
