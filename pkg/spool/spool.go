// Package spool provides a write-once byte buffer that stays in memory while
// it is small and moves to a temporary file once it grows past a threshold.
//
// The fetcher records every response into a Buffer, so a 2 GB download holds
// no more than the threshold in memory (growing the in-memory slice up to
// the threshold allocates at most twice that in total, plus a 32 KiB
// write-behind buffer once on disk); the WARC writer, digesters and link
// extractors then read it back through independent readers.
//
// A Buffer has two phases. While writing, only one goroutine may call Write
// (and Truncate). Once writing is done, any number of goroutines may read it
// concurrently through NewReader or ReadAt. Close removes the temporary file.
package spool

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// ErrClosed is returned by reads and writes on a closed Buffer.
var ErrClosed = errors.New("spool: buffer closed")

// fileBufSize is the write-behind buffer used once the data lives in a file,
// so the many small writes of a network copy do not each become a syscall.
const fileBufSize = 32 << 10

// Buffer is an io.Writer that keeps up to threshold bytes in memory and
// spills everything to a temporary file beyond that. See the package comment
// for its concurrency contract.
type Buffer struct {
	threshold int64
	dir       string

	// mu guards the fields below. Writers take it exclusively; readers take
	// it shared, which keeps concurrent reads safe and lets a stray read
	// racing a write see a consistent (if stale) state instead of corrupting
	// it.
	mu     sync.RWMutex
	mem    []byte
	file   *os.File
	fbuf   *bufio.Writer
	size   int64
	err    error // sticky write error
	closed bool

	// parent, when set, makes this Buffer a read-only section of the
	// parent's bytes from off (Section); size is the section's length.
	parent *Buffer
	off    int64

	// pool, when set, gives mem and takes it back on Close (Pool.New).
	pool *Pool
}

// New returns an empty Buffer that holds up to threshold bytes in memory and
// spills to a temporary file created in dir ("" means os.TempDir()). A
// threshold of zero or less sends every byte to the file.
func New(threshold int64, dir string) *Buffer {
	if threshold < 0 {
		threshold = 0
	}
	return &Buffer{threshold: threshold, dir: dir}
}

// Write appends p. It fails only if the temporary file cannot be created or
// written; the error is then sticky.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, ErrClosed
	}
	if b.parent != nil {
		return 0, errSection
	}
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if b.file == nil && b.size+int64(len(p)) <= b.threshold {
		b.growMem(len(p))
		b.mem = append(b.mem, p...)
		b.size += int64(len(p))
		return len(p), nil
	}
	if b.file == nil {
		if err := b.spill(); err != nil {
			b.err = err
			return 0, err
		}
	}
	n, err := b.fbuf.Write(p)
	b.size += int64(n)
	if err != nil {
		b.err = fmt.Errorf("spool: write %s: %w", b.file.Name(), err)
		return n, b.err
	}
	return n, nil
}

// Grow makes room in memory for n more bytes when they will fit under the
// threshold, so a writer that knows the size (a Content-Length) fills one
// allocation instead of doubling its way there. It is only a hint.
func (b *Buffer) Grow(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || b.parent != nil || b.err != nil || b.file != nil || n <= 0 || b.size+n > b.threshold {
		return
	}
	b.growMem(int(n))
}

// growMem makes room for n more bytes without letting capacity run past the
// threshold, which append's doubling would otherwise do.
func (b *Buffer) growMem(n int) {
	need := len(b.mem) + n
	if need <= cap(b.mem) {
		return
	}
	newCap := max(2*cap(b.mem), need, 512)
	newCap = int(min(int64(newCap), b.threshold))
	grown := append(b.pool.get(newCap), b.mem...)
	b.pool.put(b.mem)
	b.mem = grown
}

// spill moves the in-memory bytes to a new temporary file.
func (b *Buffer) spill() error {
	f, err := os.CreateTemp(b.dir, filePrefix+"*")
	if err != nil {
		return fmt.Errorf("spool: create temp file in %q: %w", b.dir, err)
	}
	if _, err := f.Write(b.mem); err != nil {
		name := f.Name()
		_ = f.Close()
		_ = os.Remove(name)
		return fmt.Errorf("spool: write %s: %w", name, err)
	}
	b.file = f
	b.fbuf = bufio.NewWriterSize(f, fileBufSize)
	b.pool.put(b.mem)
	b.mem = nil
	return nil
}

// Size returns the number of bytes written (after any Truncate).
func (b *Buffer) Size() int64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.size
}

// InMemory reports whether the data is still held in memory.
func (b *Buffer) InMemory() bool {
	if b.parent != nil {
		return b.parent.InMemory()
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.file == nil
}

// Truncate discards everything after the first size bytes. It only shrinks;
// a size larger than Size is an error. The fetcher uses it to drop bytes a
// read-ahead pulled off the socket past the end of a response.
func (b *Buffer) Truncate(size int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	if b.parent != nil {
		return errSection
	}
	if size < 0 || size > b.size {
		return fmt.Errorf("spool: truncate to %d outside [0,%d]", size, b.size)
	}
	if b.file == nil {
		b.mem = b.mem[:size]
		b.size = size
		return nil
	}
	if err := b.flushLocked(); err != nil {
		return err
	}
	if err := b.file.Truncate(size); err != nil {
		return fmt.Errorf("spool: truncate %s: %w", b.file.Name(), err)
	}
	b.size = size
	return nil
}

// flushLocked pushes buffered file writes to the file. Caller holds mu.
func (b *Buffer) flushLocked() error {
	if b.fbuf == nil || b.fbuf.Buffered() == 0 {
		return b.err
	}
	if err := b.fbuf.Flush(); err != nil {
		b.err = fmt.Errorf("spool: flush %s: %w", b.file.Name(), err)
	}
	return b.err
}

// prepareRead flushes pending writes and returns what a reader needs.
func (b *Buffer) prepareRead() (file *os.File, size int64, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, 0, ErrClosed
	}
	if err := b.flushLocked(); err != nil {
		return nil, 0, err
	}
	return b.file, b.size, nil
}

// view is what a reader of the Buffer needs: the Buffer whose memory
// holds its bytes and where in it they start, or a file and where in it
// they start; and how many there are.
type view struct {
	owner *Buffer // nil when the bytes are in file
	file  io.ReaderAt
	base  int64
	size  int64
}

// view returns b's bytes as they are now (a section's, its parent's run).
func (b *Buffer) view() (view, error) {
	if b.parent != nil {
		return b.sectionView()
	}
	file, size, err := b.prepareRead()
	if err != nil {
		return view{}, err
	}
	if file == nil {
		return view{owner: b, size: size}, nil
	}
	return view{file: closedCheck{b, file}, size: size}, nil
}

// NewReader returns a reader over the bytes written so far, positioned at
// the start. Each reader has its own offset, so several may be used at once
// once writing is done. A reader of a closed Buffer fails with ErrClosed.
// A reader of bytes in memory also has WriteTo, Len and Size, as
// bytes.Reader does.
func (b *Buffer) NewReader() io.ReadSeeker {
	v, err := b.view()
	switch {
	case err != nil:
		return errReader{err}
	case v.owner != nil:
		return &memReader{b: v.owner, base: v.base, size: v.size}
	}
	return io.NewSectionReader(v.file, v.base, v.size)
}

// ReadAt implements io.ReaderAt over the bytes written so far. It is safe
// for concurrent use once writing is done.
func (b *Buffer) ReadAt(p []byte, off int64) (int, error) {
	v, err := b.view()
	if err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fmt.Errorf("spool: read at negative offset %d", off)
	}
	if off >= v.size {
		return 0, io.EOF
	}
	want := p
	if rest := v.size - off; int64(len(want)) > rest {
		want = want[:rest]
	}
	var n int
	if v.owner != nil {
		r := memReader{b: v.owner, base: v.base, size: v.size}
		if n, err = r.ReadAt(want, off); err != nil && !errors.Is(err, io.EOF) {
			return n, err
		}
	} else if n, err = v.file.ReadAt(want, v.base+off); err != nil && !errors.Is(err, io.EOF) {
		return n, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Close releases the memory and removes the temporary file. It is safe to
// call more than once.
func (b *Buffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	// Readers take the lock and see closed before they touch mem, so no
	// reader is left holding memory the pool hands to another Buffer.
	b.pool.put(b.mem)
	b.mem = nil
	if b.file == nil {
		return nil
	}
	name := b.file.Name()
	errClose := b.file.Close()
	errRemove := os.Remove(name)
	b.file, b.fbuf = nil, nil
	if errClose != nil {
		return fmt.Errorf("spool: close %s: %w", name, errClose)
	}
	if errRemove != nil {
		return fmt.Errorf("spool: remove %s: %w", name, errRemove)
	}
	return nil
}

// closedCheck reads the file under the shared lock so a read racing Close
// reports ErrClosed rather than touching a closed descriptor.
type closedCheck struct {
	b *Buffer
	f *os.File
}

func (c closedCheck) ReadAt(p []byte, off int64) (int, error) {
	c.b.mu.RLock()
	defer c.b.mu.RUnlock()
	if c.b.closed {
		return 0, ErrClosed
	}
	return c.f.ReadAt(p, off)
}

// errReader is a ReadSeeker that always fails, for readers of a closed or
// broken Buffer.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error)       { return 0, e.err }
func (e errReader) Seek(int64, int) (int64, error) { return 0, e.err }
