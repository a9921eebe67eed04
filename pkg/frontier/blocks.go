package frontier

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// Cold blocks (docs/frontier.md, Memory). A host queue's items beyond its
// head are packed, blockItems at a time, into one list element: a block,
// zstd-compressed by the Go side, since Redis's Lua has no compression.
// A queue is then [plain items][blocks][plain items]: the head, where
// claims pop and retries return; the cold middle; the tail, where
// admissions push. An admission that leaves compactAt plain items at a
// tail reports the queue (admit.lua), and the admitting worker packs
// them (Frontier.compact); a claim that takes the last plain item before
// a block reports the block (claim.lua), and the claiming worker unpacks
// it (Frontier.unpackHeads) before the host's next claim; a claim that
// meets a block at a head (its unpacking failed or lost a race) leaves
// the host for that call. Both rewrite the list with
// splice.lua, which checks that the elements read are still where they
// were, so workers racing on one queue cannot lose or double an item.
// Nothing counted changes: a block holds items exactly as the list did.
const (
	// blockMark starts a block; a plain item starts with its uk, which is
	// base64url.
	blockMark = 0
	// blockItems is a full block: zstd keeps about 20 bytes of a typical
	// item of 110 at 32, 26 at 16 (scale benchmark items).
	blockItems = 32
	// compactAt plain items at a tail are packed (admit.lua checks the
	// element compactAt from the end), so a queue of fewer items is never
	// packed.
	compactAt = 8
	// hotHead is how many items a queue packed for the first time keeps
	// plain at its head, so that its first claim does not wait for an
	// unpacking: the claim that takes the last plain item of a head
	// reports the block behind it.
	hotHead = 1
	// unpackItems is how many items an unpacked head block gives back
	// plain (the block keeps the rest, split), so a claim meets a block once in
	// unpackItems claims of a host, and a draining queue keeps few items
	// plain.
	unpackItems = 8
	// compactWindow bounds what one compaction reads from a tail: a long
	// plain queue (written before blocks, or put back by ResumeSource)
	// is packed a window at a time.
	compactWindow = 4 * blockItems
	// blockMaxBytes bounds an unpacked block, against a corrupt one.
	blockMaxBytes = 16 << 20
)

// blockCodec packs and unpacks blocks; both sides are safe for
// concurrent use.
type blockCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

func newBlockCodec() (*blockCodec, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithLowerEncoderMem(true))
	if err != nil {
		return nil, fmt.Errorf("queue block encoder: %w", err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(blockMaxBytes))
	if err != nil {
		return nil, fmt.Errorf("queue block decoder: %w", err)
	}
	return &blockCodec{enc: enc, dec: dec}, nil
}

func isBlock(s string) bool { return len(s) > 0 && s[0] == blockMark }

// pack makes one block of items: the mark, the item count (uvarint), how
// many of them were taken out already (uvarint, 0 here), then a zstd
// frame of the items, each preceded by its length (uvarint).
func (c *blockCodec) pack(items []string) string {
	var raw []byte
	for _, it := range items {
		raw = binary.AppendUvarint(raw, uint64(len(it)))
		raw = append(raw, it...)
	}
	out := blockHeader(uint64(len(items)), 0)
	return string(c.enc.EncodeAll(raw, out))
}

func blockHeader(n, skip uint64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint([]byte{blockMark}, n), skip)
}

// parseBlock reads a block's header: the items in its frame, how many of
// them are taken out (they are plain in front of it, or gone), and where
// the frame starts.
func parseBlock(s string) (n, skip uint64, frame int, err error) {
	if !isBlock(s) {
		return 0, 0, 0, errors.New("queue block: no block mark")
	}
	hdr := []byte(s[1:min(len(s), 21)])
	n, k := binary.Uvarint(hdr)
	if k <= 0 || n == 0 || n > blockMaxBytes {
		return 0, 0, 0, fmt.Errorf("queue block: bad item count (%d bytes)", len(s))
	}
	skip, k2 := binary.Uvarint(hdr[k:])
	if k2 <= 0 || skip >= n {
		return 0, 0, 0, fmt.Errorf("queue block of %d items: bad count of items taken out (%d bytes)", n, len(s))
	}
	return n, skip, 1 + k + k2, nil
}

// blockLen is how many items a block holds, by its header (0 if
// unreadable).
func blockLen(s string) int {
	n, skip, _, err := parseBlock(s)
	if err != nil {
		return 0
	}
	return int(n - skip)
}

// unpack returns a block's items.
func (c *blockCodec) unpack(s string) ([]string, error) {
	n, skip, frame, err := parseBlock(s)
	if err != nil {
		return nil, err
	}
	raw, err := c.dec.DecodeAll([]byte(s[frame:]), nil)
	if err != nil {
		return nil, fmt.Errorf("queue block of %d items: %w", n, err)
	}
	items := make([]string, 0, n)
	all := string(raw)
	for off := 0; off < len(raw); {
		l, k := binary.Uvarint(raw[off:])
		if k <= 0 || uint64(len(raw)-off-k) < l {
			return nil, fmt.Errorf("queue block of %d items: item %d cut at byte %d", n, len(items), off)
		}
		off += k
		items = append(items, all[off:off+int(l)])
		off += int(l)
	}
	if uint64(len(items)) != n {
		return nil, fmt.Errorf("queue block: %d items, header says %d", len(items), n)
	}
	return items[skip:], nil
}

// split takes the first k items out of a block: they come back plain,
// with the rest as the same frame under a header that counts them taken
// out ("" when none is left). Nothing is compressed again: a head block
// gives its items unpackItems at a time, decoded each time, where
// packing the rest again cost about twice the decoding.
func (c *blockCodec) split(s string, k int) (head []string, rest string, err error) {
	items, err := c.unpack(s)
	if err != nil {
		return nil, "", err
	}
	if k >= len(items) {
		return items, "", nil
	}
	n, skip, frame, _ := parseBlock(s) // unpack read it
	return items[:k:k], string(blockHeader(n, skip+uint64(k))) + s[frame:], nil
}

// packAll packs items into full blocks, the last one partial.
func (c *blockCodec) packAll(items []string) []string {
	var out []string
	for len(items) > 0 {
		n := min(len(items), blockItems)
		out = append(out, c.pack(items[:n]))
		items = items[n:]
	}
	return out
}

// unpackAll replaces the blocks among elems by their items, in place. A
// block that cannot be unpacked is left out and reported in err (the
// caller goes on with the rest).
func (c *blockCodec) unpackAll(elems []string) ([]string, error) {
	var out []string
	var errs []error
	for _, e := range elems {
		if !isBlock(e) {
			out = append(out, e)
			continue
		}
		items, err := c.unpack(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, items...)
	}
	return out, errors.Join(errs...)
}
