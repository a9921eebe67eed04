package frontier

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// checkInvariants recomputes from the per-host state what the scripts keep
// as running counters (the scripts buffer those changes during a call and
// write them at its end): the meta counters, the ready set, leases and the
// context reference counts.
func checkInvariants(t *testing.T, rdb *redis.Client, p string) {
	t.Helper()
	ctx := context.Background()
	keys := func(pattern string) []string {
		ks, err := rdb.Keys(ctx, p+pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		return ks
	}
	atoi := func(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }
	var queued, inflight, hosts, busy, exhausted, paused, held int64
	ready := rdb.ZRangeWithScores(ctx, p+"ready", 0, -1).Val()
	inReady := map[string]bool{}
	for _, z := range ready {
		inReady[z.Member.(string)] = true
	}
	index := readIndex(t, rdb, p, keys("x:*"))
	for _, hk := range keys("h:*") {
		host := strings.TrimPrefix(hk, p+"h:")
		h := rdb.HGetAll(ctx, hk).Val()
		n, a := atoi(h["n"]), atoi(h["a"])
		queued += n
		inflight += a
		if _, ok := h["pq"]; ok {
			hosts++
			if n == 0 && a == 0 {
				exhausted++
			}
		}
		if a > 0 {
			busy++
		}
		if h["p"] == "1" {
			paused++
		}
		live, leased, hp := index.count(rdb, p, host)
		if live != n || leased != a || hp != atoi(h["hp"]) {
			t.Errorf("host %s: n=%d a=%d hp=%s, index has %d queued, %d leased, %d held", host, n, a, h["hp"], live, leased, hp)
		}
		if l := rdb.LLen(ctx, p+"qh:"+host).Val(); l != hp {
			t.Errorf("host %s: %d held in the index, %d in its held list", host, hp, l)
		}
		held += hp
		pq := atoi(h["pq"])
		if pq == 0 {
			pq = 1
		}
		if want := n > 0 && a < pq && h["p"] != "1"; inReady[host] != want {
			t.Errorf("host %s (n=%d a=%d pq=%d p=%q): in ready set %v, want %v", host, n, a, pq, h["p"], inReady[host], want)
		}
	}
	meta := rdb.HGetAll(ctx, p+"meta").Val()
	for _, c := range []struct {
		field string
		want  int64
	}{{"queued", queued}, {"inflight", inflight}, {"hosts", hosts}, {"busy", busy}, {"exhausted", exhausted}, {"paused", paused}, {"held", held}} {
		if got := atoi(meta[c.field]); got != c.want {
			t.Errorf("meta %s = %d, want %d", c.field, got, c.want)
		}
	}

	leased := rdb.HGetAll(ctx, p+"leased").Val()
	if n := rdb.ZCard(ctx, p+"leases").Val(); n != int64(len(leased)) || int64(len(leased)) != inflight {
		t.Errorf("%d leases, %d leased items, %d in flight", n, len(leased), inflight)
	}
	// Every item holds a reference to its context, stale ones included,
	// and counts for its target: queued in a list, or in flight.
	refs := map[string]int64{}
	blobs := rdb.HGetAll(ctx, p+"ctx").Val()
	targets := map[string]int64{}
	count := func(item, kind string) {
		if f := strings.SplitN(item, " ", 6); len(f) == 6 {
			refs[f[4]]++
			src, _, _ := strings.Cut(blobs[f[4]], "\n")
			targets[kind+":"+src]++
		}
	}
	for _, item := range leased {
		count(item, "a")
	}
	for _, qk := range append(keys("q:*"), keys("qh:*")...) {
		for _, item := range listItems(t, rdb, qk) {
			count(item, "q")
		}
	}
	tq := rdb.HGetAll(ctx, p+"tq").Val()
	for field, n := range targets {
		if atoi(tq[field]) != n {
			t.Errorf("target count %s = %q, want %d", field, tq[field], n)
		}
	}
	for field, v := range tq {
		if targets[field] == 0 {
			t.Errorf("target count %s = %s, want none", field, v)
		}
	}
	ctxn := rdb.HGetAll(ctx, p+"ctxn").Val()
	for id, n := range refs {
		if atoi(ctxn[id]) != n || blobs[id] == "" {
			t.Errorf("context %s: %d items, count %q, blob %v", id, n, ctxn[id], blobs[id] != "")
		}
	}
	if len(ctxn) != len(refs) || len(blobs) != len(refs) {
		t.Errorf("%d contexts referenced, %d counted, %d stored", len(refs), len(ctxn), len(blobs))
	}
}

// listItems reads a queue with its blocks unpacked; with t, a block that
// does not unpack, or holds no items or more than blockItems, fails it.
func listItems(t *testing.T, rdb *redis.Client, key string) []string {
	c, err := newBlockCodec()
	if err != nil {
		panic(err)
	}
	var out []string
	for _, e := range rdb.LRange(context.Background(), key, 0, -1).Val() {
		if !isBlock(e) {
			out = append(out, e)
			continue
		}
		items, err := c.unpack(e)
		if t != nil && (err != nil || len(items) > blockItems) {
			t.Errorf("queue %s: block of %d items: %v", key, len(items), err)
		}
		out = append(out, items...)
	}
	return out
}

// Batches that name one host, source or context many times (and one
// lease twice) keep every counter exact, though each script call writes
// its counters once.
func TestBatchCounters(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		ck := newClock()
		f := newTestFrontier(t, rdb, ck, Options{})
		ctx := context.Background()
		check := func(step string) {
			t.Helper()
			checkInvariants(t, rdb, "{t}:")
			if t.Failed() {
				t.Fatalf("after %s", step)
			}
		}
		mk := func(host, path string, pq int) Candidate {
			c := cand(host, path, "L", false)
			c.Policy.Frontier.ParallelQueues = pq
			return c
		}
		var batch []Candidate
		for i := range 6 {
			batch = append(batch, mk("a", "/"+strconv.Itoa(i), 3), mk("a:8080", "/"+strconv.Itoa(i), 1))
		}
		other := mk("b", "/x", 1)
		other.Launch.ParentURLMetadata.HeritableData.Source = "tid:2:http://b/"
		forced := mk("a", "/5", 3)
		forced.Launch.ForceFetch = true
		reset := mk("a", "/6", 3)
		reset.ResetQuotas = true
		batch = append(batch, other, mk("a", "/0", 3), forced, reset, mk("a", "/1", 1))
		got := admit(t, f, batch...)
		mustEqual(t, "verdicts of repeats", sprint(got[12:]), sprint([]Verdict{Admitted, Queued, Reprioritised, Admitted, Queued}))
		check("admit")
		mustEqual(t, "stats", stats(t, f), Stats{Queued: 14, Hosts: 3, ReadyHosts: 3})
		info, err := f.Host(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "parallelQueues of the first sighting", info.ParallelQueues, 3)

		// Three of host a (parallelQueues 3), one of a:8080, one of b.
		cs := claim(t, f, 10)
		mustEqual(t, "claims", len(cs), 5)
		check("claim")
		var outs []Outcome
		for _, c := range cs {
			outs = append(outs, Outcome{Claim: c, Status: 200, Bytes: 1000, Policy: testPolicy()})
		}
		outs[1].Status, outs[1].Bytes = -2, 0 // a retry
		outs[2].Status = 404
		outs = append(outs, outs[0]) // the same lease twice
		ok, err := f.Complete(ctx, outs)
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "settled", sprint(ok), sprint([]bool{true, true, true, true, true, false}))
		check("complete")
		tot := totals(t, f)
		if tot.URIs != 4 || tot.ByStatus[200] != 3 || tot.ByStatus[404] != 1 || tot.Retries != 1 || tot.Bytes != 4000 {
			t.Fatalf("totals %+v", tot)
		}
		// Host a finished a 200 and a 404 on port 80, a:8080 a 200.
		info, err = f.Host(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		mustEqual(t, "server a", info.Server, Usage{FetchSuccesses: 1, SuccessBytes: 1000, FetchResponses: 2, AllBytes: 2000})
		mustEqual(t, "host name a", info.HostName, Usage{FetchSuccesses: 2, SuccessBytes: 2000, FetchResponses: 3, AllBytes: 3000})

		cs = claim(t, f, 10)
		check("second claim")
		if err := f.Release(ctx, cs[:1]); err != nil {
			t.Fatal(err)
		}
		check("release")
		ck.add(2 * time.Minute)
		if n, err := f.Reap(ctx); err != nil || n != len(cs)-1 {
			t.Fatalf("reaped %d of %d: %v", n, len(cs)-1, err)
		}
		check("reap")
		for {
			cs := claim(t, f, 10)
			if len(cs) == 0 {
				break
			}
			finish(t, f, cs...)
			check("drain")
		}
		st := stats(t, f)
		if st.Queued != 0 || st.InFlight != 0 || st.ExhaustedHosts != 3 {
			t.Fatalf("stats after draining: %+v", st)
		}
		// The last URI of each context is gone, and with it the context.
		if n := rdb.HLen(ctx, "{t}:ctx").Val(); n != 0 {
			t.Fatalf("%d contexts left", n)
		}
	})
}

// indexView is a shard's URI index read whole: uk -> state.
type indexView map[string]string

// readIndex reads every bucket and checks that each entry is in the
// bucket its hash says, and that meta ixn counts them.
func readIndex(t *testing.T, rdb *redis.Client, p string, buckets []string) indexView {
	t.Helper()
	ctx := context.Background()
	meta := rdb.HMGet(ctx, p+"meta", "ixb", "ixn").Val()
	nb, _ := strconv.Atoi(toString(meta[0]))
	nb = max(nb, 1)
	v := indexView{}
	for _, b := range buckets {
		for uk, st := range rdb.HGetAll(ctx, b).Val() {
			if want := p + "x:" + strconv.Itoa(ixBucket(uk, nb)); b != want {
				t.Errorf("index entry %s in %s, want %s (%d buckets)", uk, b, want, nb)
			}
			v[uk] = st
		}
	}
	if n, _ := strconv.Atoi(toString(meta[1])); n != len(v) {
		t.Errorf("meta ixn = %d, index holds %d", n, len(v))
	}
	return v
}

// ixBucket is lib.lua's bucket of uk among nb buckets.
func ixBucket(uk string, nb int) int {
	h := 0
	for i := range 5 {
		c := 0
		if i < len(uk) {
			c = int(uk[i])
		}
		switch {
		case c >= 'a':
			c -= 71
		case c == '_':
			c = 63
		case c >= 'A':
			c -= 'A'
		case c >= '0':
			c += 4
		default:
			c = 62
		}
		h = h*64 + c
	}
	pow := 1
	for pow*2 <= nb {
		pow *= 2
	}
	if b := h % (2 * pow); b < nb {
		return b
	}
	return h % pow
}

// count tells how many of host's items the index says are live: queued
// in its level lists, leased, held in its held list.
func (v indexView) count(rdb *redis.Client, p, host string) (live, leased, held int64) {
	ctx := context.Background()
	for level := range 3 {
		for _, raw := range listItems(nil, rdb, p+"q:"+host+":"+strconv.Itoa(level)) {
			if it, err := parseItem(raw); err == nil && v[it.uk] == queuedState(it.level, it.seq) {
				live++
			}
		}
	}
	for _, raw := range listItems(nil, rdb, p+"qh:"+host) {
		if it, err := parseItem(raw); err == nil && v[it.uk] == "h"+strconv.Itoa(it.level)+it.seq {
			held++
		}
	}
	for lease, raw := range rdb.HGetAll(ctx, p+"leased").Val() {
		if h, _, _ := cutLast(lease, " "); h != host {
			continue
		}
		if it, err := parseItem(raw); err == nil && strings.HasPrefix(v[it.uk], "l"+strconv.Itoa(it.level)+it.seq+"/") {
			leased++
		}
	}
	return live, leased, held
}
