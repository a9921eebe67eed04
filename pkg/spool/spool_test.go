package spool

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pattern returns n deterministic pseudo-random bytes.
func pattern(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(r.Uint32())
	}
	return p
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "trawler-spool-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestWriteReadAcrossThreshold(t *testing.T) {
	cases := []struct {
		name      string
		threshold int64
		chunks    []int
		inMemory  bool
	}{
		{"empty", 16, nil, true},
		{"below", 16, []int{5, 5}, true},
		{"exactly threshold", 16, []int{8, 8}, true},
		{"one past", 16, []int{8, 9}, false},
		{"single big write", 16, []int{1000}, false},
		{"zero threshold", 0, []int{1}, false},
		{"many small", 100, []int{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}, false},
		{"past file buffer", 10, []int{3, fileBufSize*2 + 17, 5}, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			b := New(tc.threshold, dir)
			t.Cleanup(func() { _ = b.Close() })
			var want []byte
			for j, n := range tc.chunks {
				p := pattern(uint64(i*100+j), n)
				w, err := b.Write(p)
				if err != nil || w != n {
					t.Fatalf("Write(%d) = %d, %v", n, w, err)
				}
				want = append(want, p...)
			}
			if got := b.Size(); got != int64(len(want)) {
				t.Fatalf("Size = %d, want %d", got, len(want))
			}
			if got := b.InMemory(); got != tc.inMemory {
				t.Fatalf("InMemory = %v, want %v", got, tc.inMemory)
			}
			if files := tempFiles(t, dir); (len(files) == 1) == tc.inMemory {
				t.Fatalf("temp files %v with inMemory=%v", files, tc.inMemory)
			}
			got, err := io.ReadAll(b.NewReader())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("read back %d bytes differing from the %d written", len(got), len(want))
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if files := tempFiles(t, dir); len(files) != 0 {
				t.Fatalf("Close left %v", files)
			}
		})
	}
}

func TestReadAtAndSeek(t *testing.T) {
	for _, threshold := range []int64{1 << 20, 10} {
		b := New(threshold, t.TempDir())
		t.Cleanup(func() { _ = b.Close() })
		data := pattern(7, 300)
		if _, err := b.Write(data); err != nil {
			t.Fatal(err)
		}
		p := make([]byte, 50)
		n, err := b.ReadAt(p, 100)
		if n != 50 || err != nil || !bytes.Equal(p, data[100:150]) {
			t.Fatalf("threshold %d: ReadAt mid = %d, %v", threshold, n, err)
		}
		n, err = b.ReadAt(p, 280)
		if n != 20 || !errors.Is(err, io.EOF) || !bytes.Equal(p[:n], data[280:]) {
			t.Fatalf("threshold %d: ReadAt tail = %d, %v", threshold, n, err)
		}
		if n, err = b.ReadAt(p, 300); n != 0 || !errors.Is(err, io.EOF) {
			t.Fatalf("threshold %d: ReadAt end = %d, %v", threshold, n, err)
		}
		if _, err = b.ReadAt(p, -1); err == nil {
			t.Fatalf("threshold %d: ReadAt(-1) succeeded", threshold)
		}
		r := b.NewReader()
		if _, err := r.Seek(250, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(r)
		if !bytes.Equal(rest, data[250:]) {
			t.Fatalf("threshold %d: seek+read mismatch", threshold)
		}
	}
}

func TestConcurrentReaders(t *testing.T) {
	b := New(64, t.TempDir())
	t.Cleanup(func() { _ = b.Close() })
	data := pattern(11, 200_000)
	if _, err := b.Write(data); err != nil {
		t.Fatal(err)
	}
	want := sha1.Sum(data)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			r := b.NewReader()
			if i%2 == 1 {
				r = io.NewSectionReader(b, 0, b.Size())
			}
			h := sha1.New()
			buf := make([]byte, 1+i*997)
			if _, err := io.CopyBuffer(h, struct{ io.Reader }{r}, buf); err != nil {
				errs <- err
				return
			}
			if !bytes.Equal(h.Sum(nil), want[:]) {
				errs <- errors.New("digest mismatch")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestTruncate(t *testing.T) {
	for _, threshold := range []int64{1 << 20, 8} {
		b := New(threshold, t.TempDir())
		t.Cleanup(func() { _ = b.Close() })
		data := pattern(3, 100)
		if _, err := b.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := b.Truncate(101); err == nil {
			t.Fatal("Truncate past size succeeded")
		}
		if err := b.Truncate(-1); err == nil {
			t.Fatal("Truncate(-1) succeeded")
		}
		if err := b.Truncate(40); err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(b.NewReader())
		if b.Size() != 40 || !bytes.Equal(got, data[:40]) {
			t.Fatalf("threshold %d: after truncate size %d, %d bytes read", threshold, b.Size(), len(got))
		}
	}
}

func TestClosed(t *testing.T) {
	dir := t.TempDir()
	b := New(4, dir)
	if _, err := b.Write([]byte("hello world")); err != nil {
		t.Fatal(err)
	}
	r := b.NewReader()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := b.Write([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close = %v", err)
	}
	if _, err := io.ReadAll(r); !errors.Is(err, ErrClosed) {
		t.Fatalf("old reader after Close = %v", err)
	}
	if _, err := io.ReadAll(b.NewReader()); !errors.Is(err, ErrClosed) {
		t.Fatalf("new reader after Close = %v", err)
	}
	if _, err := b.ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("ReadAt after Close = %v", err)
	}
	if err := b.Truncate(0); !errors.Is(err, ErrClosed) {
		t.Fatalf("Truncate after Close = %v", err)
	}
}

func TestBadDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "does-not-exist")
	b := New(4, missing)
	t.Cleanup(func() { _ = b.Close() })
	if _, err := b.Write([]byte("abc")); err != nil {
		t.Fatalf("in-memory write failed: %v", err)
	}
	_, err := b.Write([]byte("defgh"))
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("spill into missing dir = %v, want not-exist error", err)
	}
	if _, err2 := b.Write([]byte("x")); err2 == nil {
		t.Fatal("error was not sticky")
	}
}

// TestMemoryBounded writes 2 GiB (512 MiB under -race) and checks that
// everything allocated on the way is bounded by the threshold, not the data
// size: growing the in-memory slice to the threshold costs at most twice the
// threshold in total, then the file's write-behind buffer.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 GiB to disk")
	}
	const threshold = 1 << 20
	const total = boundedTotal
	b := New(threshold, t.TempDir())
	t.Cleanup(func() { _ = b.Close() })
	chunk := pattern(5, 256<<10)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for written := 0; written < total; written += len(chunk) {
		if _, err := b.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	if limit := uint64(2*threshold + fileBufSize + 256<<10); allocated > limit {
		t.Fatalf("writing %d bytes allocated %d bytes, limit %d", total, allocated, limit)
	}
	if b.Size() != total {
		t.Fatalf("Size = %d", b.Size())
	}
	r := b.NewReader()
	got := make([]byte, len(chunk))
	for read := 0; read < total; read += len(chunk) {
		if _, err := io.ReadFull(r, got); err != nil {
			t.Fatalf("read back at %d: %v", read, err)
		}
		if !bytes.Equal(got, chunk) {
			t.Fatalf("read back differs at %d", read)
		}
	}
	if n, err := r.Read(got); n != 0 || err != io.EOF {
		t.Fatalf("data past the end: %d, %v", n, err)
	}
}

// Grow reserves memory for a known size without changing the contents, and
// is ignored when the bytes would not fit under the threshold.
func TestGrowHint(t *testing.T) {
	b := New(1<<20, t.TempDir())
	t.Cleanup(func() { _ = b.Close() })
	_, _ = b.Write([]byte("head"))
	b.Grow(100_000)
	if cap(b.mem) < 100_004 {
		t.Fatalf("cap %d after Grow(100000)", cap(b.mem))
	}
	_, _ = b.Write(make([]byte, 100_000))
	if b.Size() != 100_004 || !b.InMemory() {
		t.Fatalf("size %d in memory %v", b.Size(), b.InMemory())
	}
	big := New(1000, t.TempDir())
	t.Cleanup(func() { _ = big.Close() })
	big.Grow(5000)
	if cap(big.mem) != 0 {
		t.Fatalf("Grow past the threshold reserved %d bytes", cap(big.mem))
	}
}
