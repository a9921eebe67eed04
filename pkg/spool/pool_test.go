package spool

import (
	"bytes"
	"crypto/sha1" //nolint:gosec // a checksum in a test
	"errors"
	"io"
	"sync"
	"testing"
)

func TestPoolClass(t *testing.T) {
	for _, tc := range []struct{ n, want int }{
		{0, 0}, {1, 0}, {4096, 0}, {4097, 1}, {8192, 1}, {100_000, 5},
		{1 << 20, 8}, {1<<20 + 1, -1},
	} {
		if got := class(tc.n); got != tc.want {
			t.Errorf("class(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// TestPoolReuses: a closed Buffer's memory is the next one's, and the
// next one reads only its own bytes.
func TestPoolReuses(t *testing.T) {
	p := NewPool()
	a := p.New(1<<20, t.TempDir())
	a.Grow(100_000)
	if _, err := a.Write(pattern(1, 100_000)); err != nil {
		t.Fatal(err)
	}
	first := &a.mem[:1][0]
	if cap(a.mem) != 128<<10 {
		t.Fatalf("pooled capacity %d, want the 128 KiB class", cap(a.mem))
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// sync.Pool may drop what it holds at any time (a GC between Put and
	// Get, a quarter of all Puts under -race), so reuse is only expected,
	// not promised: try a few times, each with the last one's memory.
	reused := false
	for range 10 {
		b := p.New(1<<20, t.TempDir())
		want := pattern(2, 90_000)
		b.Grow(int64(len(want)))
		if _, err := b.Write(want); err != nil {
			t.Fatal(err)
		}
		reused = reused || &b.mem[:1][0] == first
		first = &b.mem[:1][0]
		got, err := io.ReadAll(b.NewReader())
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %d bytes, %v; want the %d written", len(got), err, len(want))
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if reused {
			break
		}
	}
	if !reused {
		t.Error("a closed Buffer's memory was never given to the next one")
	}
}

// TestReaderOutlivingClose: readers made before Close fail with ErrClosed
// afterwards, through every method, even once the memory belongs to
// another Buffer; none of them reads that Buffer's bytes.
func TestReaderOutlivingClose(t *testing.T) {
	p := NewPool()
	secret := bytes.Repeat([]byte("B"), 50_000)
	for _, tc := range []struct {
		name string
		read func(r io.ReadSeeker) ([]byte, error)
	}{
		{"Read", func(r io.ReadSeeker) ([]byte, error) { return io.ReadAll(struct{ io.Reader }{r}) }},
		{"WriteTo", func(r io.ReadSeeker) ([]byte, error) {
			var out bytes.Buffer
			_, err := r.(io.WriterTo).WriteTo(&out)
			return out.Bytes(), err
		}},
		{"ReadAt", func(r io.ReadSeeker) ([]byte, error) {
			buf := make([]byte, 100)
			n, err := r.(io.ReaderAt).ReadAt(buf, 10)
			return buf[:n], err
		}},
	} {
		for _, section := range []bool{false, true} {
			a := p.New(1<<20, t.TempDir())
			if _, err := a.Write(bytes.Repeat([]byte("A"), 50_000)); err != nil {
				t.Fatal(err)
			}
			src := a
			if section {
				s, err := a.Section(100, 40_000)
				if err != nil {
					t.Fatal(err)
				}
				src = s
			}
			r := src.NewReader()
			if _, err := r.Read(make([]byte, 10)); err != nil {
				t.Fatal(err)
			}
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			b := p.New(1<<20, t.TempDir())
			if _, err := b.Write(secret); err != nil {
				t.Fatal(err)
			}
			got, err := tc.read(r)
			if !errors.Is(err, ErrClosed) || bytes.Contains(got, []byte("B")) {
				t.Errorf("%s (section %v) after Close: %d bytes, %v; want ErrClosed and none of another buffer's", tc.name, section, len(got), err)
			}
			_ = b.Close()
		}
	}
}

// TestPoolConcurrent runs fetch-shaped lives concurrently on one pool:
// write, read by several readers at once, close. Under -race this is
// the check that recycled memory is never shared between two lives.
func TestPoolConcurrent(t *testing.T) {
	p := NewPool()
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				data := pattern(uint64(g*1000+i), 1000+(g*7919+i*104729)%300_000)
				b := p.New(256<<10, dir) // some spill to a file
				if _, err := b.Write(data); err != nil {
					errs <- err
					return
				}
				want := sha1.Sum(data) //nolint:gosec // a checksum in a test
				var rg sync.WaitGroup
				for range 2 {
					rg.Go(func() {
						h := sha1.New() //nolint:gosec // a checksum in a test
						if _, err := io.Copy(h, b.NewReader()); err != nil || !bytes.Equal(h.Sum(nil), want[:]) {
							errs <- errors.New("a reader saw other bytes than its buffer's")
						}
					})
				}
				rg.Wait()
				if err := b.Close(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
