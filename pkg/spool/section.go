package spool

import (
	"errors"
	"fmt"
	"io"
)

// errSection is returned by writes to a section, which is read-only.
var errSection = errors.New("spool: a section is read-only")

// Section returns a read-only Buffer of the n bytes of b from offset off,
// sharing b's memory or file instead of holding a copy. The fetcher uses
// it for a payload that is a run of the raw response as it came off the
// wire (no chunked framing), so the page is spooled once, not twice.
//
// The section reads b as it is when read, so b must be done with writing
// (a Truncate that keeps [off, off+n) is fine). Closing the section only
// closes it; closing b makes the section's reads fail with ErrClosed.
func (b *Buffer) Section(off, n int64) (*Buffer, error) {
	if size := b.Size(); off < 0 || n < 0 || off+n > size {
		return nil, fmt.Errorf("spool: section [%d,%d) outside [0,%d)", off, off+n, size)
	}
	return &Buffer{parent: b, off: off, size: n}, nil
}

// sectionRead returns what a reader of section b needs: its bytes in
// memory, or the parent's file and where in it they start.
func (b *Buffer) sectionRead() (mem []byte, r io.ReaderAt, base int64, err error) {
	b.mu.RLock()
	closed := b.closed
	b.mu.RUnlock()
	if closed {
		return nil, nil, 0, ErrClosed
	}
	pmem, file, psize, err := b.parent.prepareRead()
	if err != nil {
		return nil, nil, 0, err
	}
	if b.off+b.size > psize {
		return nil, nil, 0, fmt.Errorf("spool: section [%d,%d) past its buffer's %d bytes", b.off, b.off+b.size, psize)
	}
	if file == nil {
		return pmem[b.off : b.off+b.size : b.off+b.size], nil, 0, nil
	}
	return nil, closedCheck{b.parent, file}, b.off, nil
}

// sectionReadAt is ReadAt of a section.
func (b *Buffer) sectionReadAt(p []byte, off int64) (int, error) {
	mem, r, base, err := b.sectionRead()
	if err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, fmt.Errorf("spool: read at negative offset %d", off)
	}
	if off >= b.size {
		return 0, io.EOF
	}
	want := p
	if rest := b.size - off; int64(len(want)) > rest {
		want = want[:rest]
	}
	var n int
	if r == nil {
		n = copy(want, mem[off:])
	} else if n, err = r.ReadAt(want, base+off); err != nil && !errors.Is(err, io.EOF) {
		return n, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
