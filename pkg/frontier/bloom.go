package frontier

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/bits-and-blooms/bloom/v3"
)

// bloomFilter is the geometry of one shard's Bloom filter; its bits live
// in Redis bitmaps of chunk bits each (P bloom:<n>), set and tested inside
// the admit script.
type bloomFilter struct {
	m, k, chunk uint64
}

// newBloomFilter sizes each shard's filter for its share of the expected
// URIs, with bits-and-blooms' estimate.
func newBloomFilter(expected int64, fp float64, shards int, chunk uint64) bloomFilter {
	n := uint(math.Ceil(float64(expected) / float64(shards)))
	m, k := bloom.EstimateParameters(n, fp)
	return bloomFilter{m: uint64(m), k: uint64(k), chunk: chunk}
}

// locations are the bit positions of key, bits-and-blooms' hashing.
func (b bloomFilter) locations(key string) []uint64 {
	locs := bloom.Locations([]byte(key), uint(b.k))
	for i := range locs {
		locs[i] %= b.m
	}
	return locs
}

// falsePositiveRate estimates the chance that a URI not in the filter
// finds all its bits set once n URIs are in it.
func (b bloomFilter) falsePositiveRate(n int64) float64 {
	if n <= 0 || b.m == 0 {
		return 0
	}
	k := float64(b.k)
	return math.Pow(1-math.Exp(-k*float64(n)/float64(b.m)), k)
}

// BloomBytes is the Redis memory a Bloom filter sized for n URIs at
// false-positive rate fp takes (its bitmaps; Redis adds little to them).
func BloomBytes(n int64, fp float64) int64 {
	m, _ := bloom.EstimateParameters(uint(n), fp)
	return int64((m + 7) / 8)
}

// checkBloom makes sure the filter in Redis was built with this geometry:
// bits set with another m or k would answer nonsense. The first frontier
// to use a shard records its geometry. A filter recorded with another
// chunk size (filters built before defaultChunkBits) is used as it was
// built: the chunk only says which key holds a bit.
func (f *Frontier) checkBloom(ctx context.Context) error {
	f.bloomMu.Lock()
	defer f.bloomMu.Unlock()
	if f.bloomChecked {
		return nil
	}
	chunk := uint64(0) // the chunk the shards were built with
	for _, p := range f.prefixes {
		key := p + "bloom:params"
		want := f.bloom.params(f.bloom.chunk)
		if chunk != 0 {
			want = f.bloom.params(chunk)
		}
		if err := f.rdb.SetNX(ctx, key, want, 0).Err(); err != nil {
			return fmt.Errorf("bloom params %s: %w", key, err)
		}
		got, err := f.rdb.Get(ctx, key).Result()
		if err != nil {
			return fmt.Errorf("bloom params %s: %w", key, err)
		}
		var m, k, c uint64
		if _, err := fmt.Sscanf(got, "m=%d k=%d chunk=%d", &m, &k, &c); err != nil || m != f.bloom.m || k != f.bloom.k || c == 0 || c > maxChunkBits {
			return fmt.Errorf("bloom filter %s was built with %s but the profile now sizes it %s; keep bloomExpectedUris and bloomFalsePositiveRate fixed for a crawl", key, got, want)
		}
		if chunk != 0 && c != chunk {
			return fmt.Errorf("bloom filter %s was built with %s, other shards with chunk=%d", key, got, chunk)
		}
		chunk = c
	}
	if chunk != f.bloom.chunk {
		f.log.Info("bloom filter keeps the chunk size it was built with", "frontier", f.name, "chunk_bits", chunk, "default_bits", f.bloom.chunk)
		f.bloom.chunk = chunk
	}
	f.bloomChecked = true
	return nil
}

// params is the geometry recorded in bloom:params.
func (b bloomFilter) params(chunk uint64) string {
	return fmt.Sprintf("m=%d k=%d chunk=%d", b.m, b.k, chunk)
}

func formatLocs(locs []uint64, args []any) []any {
	for _, l := range locs {
		args = append(args, strconv.FormatUint(l, 10))
	}
	return args
}
