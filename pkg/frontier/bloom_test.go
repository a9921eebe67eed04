package frontier

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/internal/metricstest"
	"github.com/trawler-crawl/trawler/pkg/embedded/embeddedtest"
	"github.com/trawler-crawl/trawler/pkg/profile"
)

func bloomOptions(n int64, fp float64, chunk uint64) Options {
	return Options{SeenFilter: profile.SeenBloom, BloomExpectedURIs: n, BloomFalsePositiveRate: fp, BloomChunkBits: chunk}
}

// The Bloom filter remembers every URI ever admitted, across finishing;
// forceFetch still gets through; its bits spread over several keys when
// the filter is larger than one chunk.
func TestBloomSeenFilter(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), bloomOptions(2000, 0.01, 4096))
		ctx := context.Background()
		var cs []Candidate
		for i := range 2000 {
			cs = append(cs, cand(fmt.Sprintf("h%d", i%50), fmt.Sprintf("/page/%d", i), "L", false))
		}
		res, err := f.Admit(ctx, cs)
		if err != nil {
			t.Fatal(err)
		}
		fp := 0
		for _, r := range res {
			if r.Verdict == Seen {
				fp++
			}
		}
		if fp > 60 { // 1% expected of 2000, plus slack
			t.Fatalf("%d false positives among 2000 new URIs", fp)
		}
		again := admit(t, f, cs[0], cs[1])
		mustEqual(t, "re-offered while queued", sprint(again), sprint([]Verdict{Queued, Queued}))
		for {
			got := claim(t, f, 100)
			if len(got) == 0 {
				break
			}
			finish(t, f, got...)
		}
		mustEqual(t, "after finishing", admit(t, f, cs[0])[0], Seen)
		forced := cs[0]
		forced.Launch.ForceFetch = true
		mustEqual(t, "forced", admit(t, f, forced)[0], Admitted)
		keys, _ := rdb.Keys(ctx, "{t}:bloom:*").Result()
		chunks := 0
		for _, k := range keys {
			if !strings.HasSuffix(k, ":params") {
				chunks++
			}
		}
		m, _ := f.bloom.m, f.bloom.k
		if want := int((m + 4095) / 4096); chunks != want {
			t.Fatalf("%d bitmap keys for %d bits in 4096-bit chunks, want %d", chunks, m, want)
		}
		// The URI index holds only queued and leased URIs in Bloom mode.
		buckets, _ := rdb.Keys(ctx, "{t}:x:*").Result()
		idx := readIndex(t, rdb, "{t}:", buckets)
		for uk, st := range idx {
			if strings.HasPrefix(st, "-") {
				t.Errorf("finished URI %s left in the index: %s", uk, st)
			}
		}
		if st := stats(t, f); int64(len(idx)) != st.Queued+st.InFlight {
			t.Fatalf("index holds %d URIs, %d queued and %d in flight", len(idx), st.Queued, st.InFlight)
		}

		other := newTestFrontier(t, rdb, newClock(), bloomOptions(4000, 0.01, 4096))
		if _, err := other.Admit(ctx, cs[:1]); err == nil || !strings.Contains(err.Error(), "sizes it") {
			t.Fatalf("resized filter: err %v", err)
		}
	})
}

func TestBloomBytes(t *testing.T) {
	// 10^9 URIs at 1 in 10,000: about 2.4 GB (docs/frontier.md).
	if b := BloomBytes(1e9, 1e-4); b < 2.3e9 || b > 2.5e9 {
		t.Fatalf("BloomBytes(1e9, 1e-4) = %d", b)
	}
	if _, err := New(nil, "x", bloomOptions(0, 0.1, 0)); err == nil {
		t.Fatal("zero expected URIs must fail")
	}
	if _, err := New(nil, "x", bloomOptions(10, 0.1, 1<<33)); err == nil {
		t.Fatal("chunk past 2^32 bits must fail")
	}
}

// The Bloom filter's estimated false-positive rate at its current size
// (issue 36) rises as URIs are added, reaches about the profile's rate at
// the expected count, counts each URI once (a URI offered again adds
// nothing) and is exported as trawler_frontier_bloom_false_positive_ratio;
// a frontier without a Bloom filter exports no such series.
func TestBloomFalsePositiveRate(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{Shards: 2, SeenFilter: profile.SeenBloom,
			BloomExpectedURIs: 2000, BloomFalsePositiveRate: 0.01})
		reg := prometheus.NewRegistry()
		reg.MustRegister(NewCollector(f))
		var prev float64
		added := int64(0)
		for round := range 4 {
			var cs []Candidate
			for i := range 500 {
				cs = append(cs, cand(fmt.Sprintf("h%d", i%50), fmt.Sprintf("/r%d/%d", round, i), "L", false))
			}
			for _, v := range admit(t, f, cs...) {
				if v != Seen {
					added++
				}
			}
			admit(t, f, cs[:100]...) // offered again: already in
			st := stats(t, f)
			if st.BloomURIs != added {
				t.Fatalf("round %d: the filter counts %d URIs, %d were new to it", round, st.BloomURIs, added)
			}
			if st.BloomFalsePositiveRate <= prev {
				t.Fatalf("round %d (%d URIs): rate %g, not above %g", round, added, st.BloomFalsePositiveRate, prev)
			}
			if got := metricstest.Value(t, reg, "trawler_frontier_bloom_false_positive_ratio"); got != st.BloomFalsePositiveRate {
				t.Fatalf("round %d: metric %g, Stats %g", round, got, st.BloomFalsePositiveRate)
			}
			prev = st.BloomFalsePositiveRate
			t.Logf("%d URIs: estimated false-positive rate %.3g", added, prev)
		}
		if prev < 0.005 || prev > 0.02 {
			t.Errorf("at the expected 2000 URIs the rate is %g, want about the profile's 0.01", prev)
		}

		plain := newTestFrontier(t, rdb, newClock(), Options{})
		reg2 := prometheus.NewRegistry()
		reg2.MustRegister(NewCollector(plain))
		mfs, err := reg2.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if strings.HasPrefix(mf.GetName(), "trawler_frontier_bloom_") {
				t.Errorf("%s exported without a Bloom filter", mf.GetName())
			}
		}
	})
}

// A filter built with another chunk size (before defaultChunkBits) is
// used as built: a frontier opened with the default finds the bits its
// URIs set where they were set. Other geometry, a damaged record and
// shards that disagree are refused.
func TestBloomKeepsBuiltChunk(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		old := newTestFrontier(t, rdb, newClock(), bloomOptions(2000, 0.01, 4096))
		var cs []Candidate
		for i := range 300 {
			cs = append(cs, cand(fmt.Sprintf("h%d", i%30), fmt.Sprintf("/k/%d", i), "L", false))
		}
		admit(t, old, cs...)
		for {
			got := claim(t, old, 100)
			if len(got) == 0 {
				break
			}
			finish(t, old, got...)
		}
		f := newTestFrontier(t, rdb, newClock(), bloomOptions(2000, 0.01, 0))
		seen := 0
		for _, v := range admit(t, f, cs...) {
			if v == Seen {
				seen++
			}
		}
		mustEqual(t, "URIs the old filter holds, seen through the default frontier", seen, len(cs))
		mustEqual(t, "chunk adopted", f.bloom.chunk, uint64(4096))

		for _, tc := range []struct{ name, params, want string }{
			{"damaged record", "m=oops", "sizes it"},
			{"other m", fmt.Sprintf("m=%d k=%d chunk=4096", f.bloom.m+1, f.bloom.k), "sizes it"},
			{"chunk past 2^32 bits", fmt.Sprintf("m=%d k=%d chunk=%d", f.bloom.m, f.bloom.k, uint64(1)<<33), "sizes it"},
		} {
			rdb.Set(ctx, "{t}:bloom:params", tc.params, 0)
			g := newTestFrontier(t, rdb, newClock(), bloomOptions(2000, 0.01, 0))
			if _, err := g.Admit(ctx, cs[:1]); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
			}
		}
	})
}

// Shards of one frontier recorded with different chunks are refused:
// which key holds a bit would depend on the shard.
func TestBloomShardsDisagreeOnChunk(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	o := bloomOptions(2000, 0.01, 4096)
	o.Shards = 2
	f := newTestFrontier(t, rdb, newClock(), o)
	admit(t, f, cand("a", "/", "", true))
	keys, err := rdb.Keys(ctx, "*bloom:params").Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("params keys %v, %v", keys, err)
	}
	rdb.Set(ctx, keys[1], fmt.Sprintf("m=%d k=%d chunk=8192", f.bloom.m, f.bloom.k), 0)
	o.BloomChunkBits = 0
	g := newTestFrontier(t, rdb, newClock(), o)
	// The shards are read in order; either may be the one named.
	_, err = g.Admit(ctx, []Candidate{cand("b", "/", "", true)})
	if err == nil || !strings.Contains(err.Error(), "other shards with chunk=") ||
		!strings.Contains(err.Error(), "4096") || !strings.Contains(err.Error(), "8192") {
		t.Fatalf("err %v", err)
	}
}

// A default-sized bitmap key costs Redis its length and little more: its
// last bit set (the string grown to full length, with SETBIT's spare
// room) and bits spread over it, MEMORY USAGE stays within 2 MiB of
// STRLEN. The old 2^32-bit keys took 640 MiB for 512.
func TestBloomChunkAllocation(t *testing.T) {
	rdb := embeddedtest.Redis(t)
	ctx := context.Background()
	const key = "bloomchunk"
	for _, bit := range []int64{defaultChunkBits / 2, defaultChunkBits - 8<<20*3, defaultChunkBits - 1, 12345} {
		if err := rdb.SetBit(ctx, key, bit, 1).Err(); err != nil {
			t.Fatal(err)
		}
	}
	n, err := rdb.StrLen(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	used, err := rdb.MemoryUsage(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if n != defaultChunkBits/8 || used-n > 2<<20 {
		t.Fatalf("a %d-bit chunk: STRLEN %d, MEMORY USAGE %d (%d over)", int64(defaultChunkBits), n, used, used-n)
	}
	t.Logf("STRLEN %d, MEMORY USAGE %d", n, used)
}
