package spool

import (
	"errors"
	"fmt"
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

// sectionView is view of a section: the run of its parent's bytes.
func (b *Buffer) sectionView() (view, error) {
	b.mu.RLock()
	closed := b.closed
	b.mu.RUnlock()
	if closed {
		return view{}, ErrClosed
	}
	p, err := b.parent.view()
	if err != nil {
		return view{}, err
	}
	if b.off+b.size > p.size {
		return view{}, fmt.Errorf("spool: section [%d,%d) past its buffer's %d bytes", b.off, b.off+b.size, p.size)
	}
	if p.owner != nil {
		return view{owner: p.owner, base: p.base + b.off, size: b.size}, nil
	}
	return view{file: p.file, base: p.base + b.off, size: b.size}, nil
}
