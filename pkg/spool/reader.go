package spool

import (
	"errors"
	"fmt"
	"io"
)

// errMoved is a read of bytes that are no longer where the reader was
// made: the Buffer was written or truncated after it, which its
// concurrency contract forbids.
var errMoved = errors.New("spool: buffer changed under a reader")

// memReader reads a run of a Buffer's memory. It finds the bytes anew
// under the Buffer's read lock at every call, so a reader that outlives
// Close fails with ErrClosed instead of reading memory the pool has
// given to another Buffer.
type memReader struct {
	b          *Buffer // whose memory it is (a section's parent)
	base, size int64   // the run of b.mem read
	pos        int64
}

// locked calls f with the reader's run under b's read lock.
func (r *memReader) locked(f func(run []byte) error) error {
	r.b.mu.RLock()
	defer r.b.mu.RUnlock()
	if r.b.closed {
		return ErrClosed
	}
	if int64(len(r.b.mem)) < r.base+r.size {
		return errMoved
	}
	return f(r.b.mem[r.base : r.base+r.size])
}

func (r *memReader) Read(p []byte) (n int, err error) {
	if r.pos >= r.size {
		return 0, io.EOF
	}
	err = r.locked(func(run []byte) error {
		n = copy(p, run[r.pos:])
		return nil
	})
	r.pos += int64(n)
	return n, err
}

func (r *memReader) ReadAt(p []byte, off int64) (n int, err error) {
	if off < 0 {
		return 0, fmt.Errorf("spool: read at negative offset %d", off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	err = r.locked(func(run []byte) error {
		n = copy(p, run[off:])
		return nil
	})
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// WriteTo writes the rest in one call, as bytes.Reader does: io.Copy into
// a compressor or a digest then takes no intermediate buffer.
func (r *memReader) WriteTo(w io.Writer) (n int64, err error) {
	if r.pos >= r.size {
		return 0, nil
	}
	err = r.locked(func(run []byte) error {
		rest := run[r.pos:]
		m, werr := w.Write(rest)
		n = int64(m)
		if werr == nil && m != len(rest) {
			werr = io.ErrShortWrite
		}
		return werr
	})
	r.pos += n
	return n, err
}

func (r *memReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, fmt.Errorf("spool: seek: invalid whence %d", whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("spool: seek to negative position %d", offset)
	}
	r.pos = offset
	return offset, nil
}

// Len is how many bytes are left to read.
func (r *memReader) Len() int { return int(max(r.size-r.pos, 0)) }

// Size is the length of the run read.
func (r *memReader) Size() int64 { return r.size }
