package warcwriter

import (
	"crypto/sha1" //nolint:gosec // SHA-1 is what WARC digests use
	"encoding/base32"
	"fmt"
	"io"
	"strconv"

	"github.com/nlnwa/gowarc"
)

// heldBlock is a record block this package keeps in its source (the
// fetcher's spool, a request's bytes, a metadata text) and has digested
// itself. Written through gowarc's builder, every block was first copied
// into a buffer of gowarc's, sized for it, and then digested again on its
// way to the file; on a crawl of 100 KB pages, dropping the two took
// a fifth to a quarter off the WARC stage's CPU.
type heldBlock struct {
	src    io.ReadSeeker
	start  int64
	size   int64
	digest string
}

// RawBytes returns the block, from its first byte, each time it is asked.
func (b *heldBlock) RawBytes() (io.Reader, error) {
	if _, err := b.src.Seek(b.start, io.SeekStart); err != nil {
		return nil, fmt.Errorf("rewind block: %w", err)
	}
	if w, ok := b.src.(wholeReader); ok && int64(w.Len()) == b.size {
		return b.src, nil // its WriteTo hands the compressor one slice
	}
	return io.LimitReader(b.src, b.size), nil
}

func (b *heldBlock) BlockDigest() string { return b.digest }
func (b *heldBlock) Size() int64         { return b.size }
func (b *heldBlock) IsCached() bool      { return true }
func (b *heldBlock) Cache() error        { return nil }

// Close leaves the source to its owner (the capture's caller).
func (b *heldBlock) Close() error { return nil }

// unbuffered adds to opts the smallest in-memory buffer gowarc allows, for
// a record built with buildHeld, which writes nothing into it: gowarc
// otherwise allocates 16 KiB for every record up front.
func unbuffered(opts []gowarc.WarcRecordOption) []gowarc.WarcRecordOption {
	return append(opts, gowarc.WithBufferMaxMemBytes(1))
}

// heldRecord is a gowarc record whose block is a heldBlock.
type heldRecord struct {
	gowarc.WarcRecord
	block *heldBlock
}

func (r *heldRecord) Block() gowarc.Block { return r.block }

// buildHeld finishes rb, to which no block was written, as a record whose
// block is the size bytes of src from its current offset. It reads them
// once for WARC-Block-Digest (and Content-Length), which it adds in the
// order gowarc would have. sizeField names size in an error.
func buildHeld(rb gowarc.WarcRecordBuilder, src io.ReadSeeker, size int64, sizeField string) (gowarc.WarcRecord, error) {
	start, err := src.Seek(0, io.SeekCurrent)
	if err != nil {
		_ = rb.Close()
		return nil, fmt.Errorf("block offset: %w", err)
	}
	h := sha1.New() //nolint:gosec // SHA-1 is what WARC digests use
	n, err := copyExactly(h, src, size)
	if err != nil {
		_ = rb.Close()
		return nil, err
	}
	if n != size {
		_ = rb.Close()
		return nil, fmt.Errorf("%w: has %d bytes, %s says %d: %w", ErrInvalidInput, n, sizeField, size, io.ErrUnexpectedEOF)
	}
	block := &heldBlock{src: src, start: start, size: size,
		digest: "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil))}
	rb.AddWarcHeader(gowarc.WarcBlockDigest, block.digest)
	rb.AddWarcHeader(gowarc.ContentLength, strconv.FormatInt(size, 10))
	rec, err := build(rb)
	if err != nil {
		return nil, err
	}
	return &heldRecord{WarcRecord: rec, block: block}, nil
}

// copyExactly copies at most n bytes of r into w. A reader holding exactly
// those bytes in memory writes them in one call: a block's digest takes
// one slice, and gowarc's buffer is sized once instead of doubling its way
// up, copying as it goes.
func copyExactly(w io.Writer, r io.Reader, n int64) (int64, error) {
	if wr, ok := r.(wholeReader); ok && int64(wr.Len()) == n {
		return wr.WriteTo(w)
	}
	return io.Copy(w, io.LimitReader(r, n))
}
