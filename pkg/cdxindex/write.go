package cdxindex

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// Put adds lines to collection, creating the collection if needed, in one
// batch that is durable (fsynced) when Put returns. It is idempotent: a
// capture already present (same URL key, timestamp, filename and offset) is
// rewritten, not duplicated. A line that cannot be indexed fails the whole
// call with an error wrapping ErrBadLine and naming the line's position;
// nothing is written then.
func (ix *Index) Put(ctx context.Context, collection string, lines []cdx.Line) error {
	caps, err := convertLines(collection, lines)
	if err != nil {
		return err
	}
	return ix.write(ctx, collection, caps, opPut)
}

// Delete removes lines from collection (matched by URL key, timestamp,
// filename and offset, the other fields are ignored) in one durable batch.
// Lines that are not in the index are ignored, as OutbackCDX does. Deleting
// from a collection that does not exist is a no-op.
func (ix *Index) Delete(ctx context.Context, collection string, lines []cdx.Line) error {
	caps, err := convertLines(collection, lines)
	if err != nil {
		return err
	}
	return ix.write(ctx, collection, caps, opDelete)
}

func convertLines(collection string, lines []cdx.Line) ([]capture, error) {
	if err := ValidateCollection(collection); err != nil {
		return nil, err
	}
	caps := make([]capture, len(lines))
	for i, l := range lines {
		c, err := fromLine(l)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d of %d (%s %s): %w", ErrBadLine, i+1, len(lines), l.Original, l.Timestamp, err)
		}
		caps[i] = c
	}
	return caps, nil
}

type writeOp string

const (
	opPut    writeOp = "put"
	opDelete writeOp = "delete"
)

// write applies caps to collection in one synced batch, keeping the entry
// count exact: it is serialised with other writers and checks each key's
// existence before counting it.
func (ix *Index) write(ctx context.Context, collection string, caps []capture, op writeOp) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cdx %s %s: %w", op, collection, err)
	}
	if err := ix.acquire(); err != nil {
		return err
	}
	defer ix.closeMu.RUnlock()
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()

	start := time.Now()
	count, exists := ix.Count(collection)
	if exists && len(caps) == 0 || op == opDelete && !exists {
		return nil
	}
	b := ix.db.NewBatch()
	defer b.Close()
	delta, err := ix.fillBatch(b, collection, caps, op)
	if err != nil {
		return fmt.Errorf("cdx %s %s: %w", op, collection, err)
	}
	if delta != 0 || !exists {
		if err := b.Set(metaKey(collection), binary.AppendVarint(nil, count+delta), nil); err != nil {
			return fmt.Errorf("cdx %s %s: %w", op, collection, err)
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("cdx %s %s: commit %d lines: %w", op, collection, len(caps), err)
	}
	ix.setCount(collection, count+delta)
	ix.metrics.writeLatency.WithLabelValues(string(op)).Observe(time.Since(start).Seconds())
	result := "added"
	if op == opDelete {
		result = "deleted"
	}
	ix.metrics.lines.WithLabelValues(collection, result).Add(float64(len(caps)))
	return nil
}

// fillBatch adds caps to b and returns the change in the entry count.
// Existence is checked with one iterator over the keys in sorted order:
// far cheaper than a Get per key, which builds an iterator each time, and
// SeekPrefixGE still consults the bloom filters.
func (ix *Index) fillBatch(b *pebble.Batch, collection string, caps []capture, op writeOp) (int64, error) {
	cp := collectionPrefix(collection)
	keys := make([][]byte, len(caps))
	order := make([]int, len(caps))
	for i := range caps {
		keys[i] = appendKey(nil, cp, &caps[i])
		order[i] = i
	}
	// Stable, so that of two writes of one key the later wins, as in the
	// batch itself.
	slices.SortStableFunc(order, func(x, y int) int { return bytes.Compare(keys[x], keys[y]) })
	it, err := ix.db.NewIter(nil)
	if err != nil {
		return 0, fmt.Errorf("open iterator: %w", err)
	}
	defer it.Close()
	var delta int64
	var val []byte
	for n, i := range order {
		var present bool
		if n > 0 && bytes.Equal(keys[order[n-1]], keys[i]) {
			present = op == opPut // the previous write of this key decides
		} else if present, err = exists(it, keys[i]); err != nil {
			return 0, err
		}
		switch {
		case op == opPut:
			val = appendValue(val[:0], &caps[i])
			err = b.Set(keys[i], val, nil)
			if !present {
				delta++
			}
		case present:
			err = b.Delete(keys[i], nil)
			delta--
		}
		if err != nil {
			return 0, err
		}
	}
	return delta, nil
}

// exists reports whether key is in the database.
func exists(it *pebble.Iterator, key []byte) (bool, error) {
	if it.SeekPrefixGE(key) && bytes.Equal(it.Key(), key) {
		return true, nil
	}
	if err := it.Error(); err != nil {
		return false, fmt.Errorf("read %q: %w", key, err)
	}
	return false, nil
}

func (ix *Index) setCount(collection string, n int64) {
	ix.countMu.Lock()
	ix.counts[collection] = n
	ix.countMu.Unlock()
	ix.metrics.entries.WithLabelValues(collection).Set(float64(n))
}
