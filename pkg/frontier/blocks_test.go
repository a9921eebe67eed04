package frontier

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func testCodec(t testing.TB) *blockCodec {
	c, err := newBlockCodec()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBlockRoundTrip(t *testing.T) {
	c := testCodec(t)
	for _, items := range [][]string{
		{"a"},
		{"", "x y z", strings.Repeat("\x1f\x00\xff", 300)},
		strings.Fields(strings.Repeat("uk1 uk2 uk3 uk4 ", 8)),
	} {
		b := c.pack(items)
		if !isBlock(b) || blockLen(b) != len(items) {
			t.Fatalf("pack(%d items): mark %v, count %d", len(items), isBlock(b), blockLen(b))
		}
		got, err := c.unpack(b)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(items) {
			t.Fatalf("unpack = %q, %v; want %q", got, err, items)
		}
	}
	// A head block gives its items a few at a time, its frame kept as it
	// was: nothing is compressed again.
	var items []string
	for i := range 20 {
		items = append(items, fmt.Sprintf("uk%d %d", i, i))
	}
	b := c.pack(items)
	_, _, frame, err := parseBlock(b)
	if err != nil {
		t.Fatal(err)
	}
	rest := b
	for from := 0; rest != ""; from += unpackItems {
		var head []string
		next := rest
		head, rest, err = c.split(next, unpackItems)
		to := min(from+unpackItems, len(items))
		if err != nil || fmt.Sprint(head) != fmt.Sprint(items[from:to]) {
			t.Fatalf("split at %d = %q, %v; want %q", from, head, err, items[from:to])
		}
		if rest == "" {
			if to != len(items) {
				t.Fatalf("split at %d left nothing of %d items", from, len(items))
			}
			break
		}
		left, err := c.unpack(rest)
		if err != nil || blockLen(rest) != len(items)-to || fmt.Sprint(left) != fmt.Sprint(items[to:]) {
			t.Fatalf("after split at %d: %d items by header, unpack %q, %v", from, blockLen(rest), left, err)
		}
		if _, _, f, _ := parseBlock(rest); rest[f:] != b[frame:] {
			t.Fatalf("split at %d compressed the frame again", from)
		}
	}
	if got := c.packAll(make([]string, 2*blockItems+1)); len(got) != 3 || blockLen(got[2]) != 1 {
		t.Fatalf("packAll of %d items: %d blocks", 2*blockItems+1, len(got))
	}
}

// Damaged blocks give an error naming what is wrong, never a panic or
// items the block did not hold.
func TestBlockCorrupt(t *testing.T) {
	c := testCodec(t)
	good := c.pack([]string{"one", "two", "three"})
	// A frame whose items do not fill the count, and one with a cut item.
	short := string(blockHeader(5, 0)) + good[3:]
	var cut []byte
	cut = binary.AppendUvarint(cut, 40)
	cut = append(cut, "only ten b"...)
	cutItem := string(blockHeader(1, 0)) + string(c.enc.EncodeAll(cut, nil))
	for _, tc := range []struct{ name, in, want string }{
		{"plain item", "uk 1 2 0 ctx p", "no block mark"},
		{"mark only", "\x00", "bad item count"},
		{"zero items", "\x00\x00", "bad item count"},
		{"no count taken out", "\x00\x03", "bad count of items taken out"},
		{"all taken out", "\x00\x03\x03" + good[3:], "bad count of items taken out"},
		{"truncated frame", good[:len(good)-4], "queue block of 3 items"},
		{"garbage frame", "\x00\x03\x00garbage", "queue block of 3 items"},
		{"count differs", short, "header says 5"},
		{"item cut", cutItem, "cut at byte 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, err := c.unpack(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) || items != nil {
				t.Fatalf("unpack = %q, %v; want error with %q", items, err, tc.want)
			}
		})
	}
}

func FuzzBlockUnpack(f *testing.F) {
	c := testCodec(f)
	f.Add(c.pack([]string{"a", "bb"}))
	f.Add("\x00\x02")
	f.Add(string(blockHeader(2, 1)) + c.pack([]string{"a", "bb"})[3:])
	f.Fuzz(func(t *testing.T, s string) {
		items, err := c.unpack(s)
		if err == nil && (len(items) != blockLen(s) || len(items) == 0) {
			t.Fatalf("%d items, header %d", len(items), blockLen(s))
		}
	})
}

// The packing constants admit.lua repeats are blocks.go's.
func TestBlockConstantsInLua(t *testing.T) {
	m := regexp.MustCompile(`local COMPACT_AT, HOT_HEAD = (\d+), (\d+)`).FindStringSubmatch(luaAdmit)
	if m == nil || m[1] != fmt.Sprint(compactAt) || m[2] != fmt.Sprint(hotHead) {
		t.Fatalf("admit.lua has %q, blocks.go compactAt %d hotHead %d", m, compactAt, hotHead)
	}
}

// claimAll claims and finishes host a's URIs one at a time, at most limit,
// until a claim gives none, and returns their paths.
func claimAll(t *testing.T, f *Frontier, limit int) string {
	t.Helper()
	var got []string
	for range limit {
		cs := claim(t, f, 1)
		if len(cs) == 0 {
			break
		}
		got = append(got, strings.TrimPrefix(cs[0].Launch.URL, "http://a/"))
		finish(t, f, cs...)
	}
	return strings.Join(got, " ")
}

// queueShape describes a queue's elements: p a plain item, B a block.
func queueShape(rdb *redis.Client, key string) string {
	var b strings.Builder
	for _, e := range rdb.LRange(context.Background(), key, 0, -1).Val() {
		if isBlock(e) {
			fmt.Fprintf(&b, "B%d ", blockLen(e))
		} else {
			b.WriteString("p ")
		}
	}
	return strings.TrimSpace(b.String())
}

// A long queue is packed into blocks as it is admitted and claimed in
// arrival order through them, precedence kept, nothing lost or doubled.
func TestQueueBlocks(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{})
		const n = 200
		var want []string
		for i := range n {
			// One at a time, as pages' outlinks come, and in batches.
			c := cand("a", fmt.Sprintf("/p%03d", i), "LL", false)
			want = append(want, c.Launch.URL)
			admit(t, f, c)
		}
		var batch []Candidate
		for i := range 40 {
			batch = append(batch, cand("a", fmt.Sprintf("/seed%02d", i), "", true))
		}
		admit(t, f, batch...)
		checkInvariants(t, rdb, "{t}:")
		normal, seeds := "{t}:q:a:2", "{t}:q:a:0"
		shape := queueShape(rdb, normal)
		// hotHead plain, full blocks, then fewer than compactAt plain.
		if !regexp.MustCompile(`^p( B32){5,6}( B[1-3]?[0-9])?( p){0,7}$`).MatchString(shape) {
			t.Fatalf("queue of %d: %s", n, shape)
		}
		if got := len(listItems(t, rdb, seeds)); got != 40 {
			t.Fatalf("seed queue holds %d items (%s)", got, queueShape(rdb, seeds))
		}
		got := strings.Fields(claimAll(t, f, n+60))
		if len(got) != n+40 {
			t.Fatalf("claimed %d of %d", len(got), n+40)
		}
		for i, u := range got[:40] {
			if "http://a/"+u != batch[i].Launch.URL {
				t.Fatalf("claim %d: %s, want the seed %s", i, u, batch[i].Launch.URL)
			}
		}
		mustEqual(t, "claim order", strings.Join(got[40:], " "), strings.ReplaceAll(strings.Join(want, " "), "http://a/", ""))
		checkInvariants(t, rdb, "{t}:")
		mustEqual(t, "queued at the end", stats(t, f).Queued, int64(0))
	})
}

// A host that gives several URIs a call (parallelQueues) has its head
// unpacked far enough for a claim of many: a claim is not held to the
// few plain items of a head.
func TestQueueBlocksParallelHost(t *testing.T) {
	rdb := backends()[0].open(t)
	f := newTestFrontier(t, rdb, newClock(), Options{})
	var cs []Candidate
	for i := range 300 {
		c := cand("a", fmt.Sprintf("/p%03d", i), "LL", false)
		c.Policy.Frontier.ParallelQueues = 100
		cs = append(cs, c)
		admit(t, f, c) // one at a time, so the queue is packed as it grows
	}
	var got []*Claim
	calls := 0
	for len(got) < 300 && calls < 40 {
		calls++
		batch := claim(t, f, 50)
		got = append(got, batch...)
		outs := make([]Outcome, len(batch))
		for i, c := range batch {
			outs[i] = Outcome{Claim: c, Status: 200, Policy: cs[0].Policy}
		}
		if _, err := f.Complete(context.Background(), outs); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 300 || calls > 9 {
		t.Fatalf("claimed %d in %d claims of 50", len(got), calls)
	}
	for i, c := range got {
		if c.Launch.URL != cs[i].Launch.URL {
			t.Fatalf("claim %d: %s, want %s", i, c.Launch.URL, cs[i].Launch.URL)
		}
	}
	checkInvariants(t, rdb, "{t}:")
}

// A compaction or an unpacking computed from a read that another worker
// overtook changes nothing.
func TestQueueBlocksRace(t *testing.T) {
	rdb := backends()[0].open(t)
	f := newTestFrontier(t, rdb, newClock(), Options{})
	ctx := context.Background()
	key := "{t}:q:a:2"
	for i := range 7 {
		admit(t, f, cand("a", fmt.Sprintf("/p%02d", i), "LL", false))
	}
	// compactAt plain items without an admission: one claimed, one
	// admitted, the claimed one put back at the head.
	cs := claim(t, f, 1)
	admit(t, f, cand("a", "/p07", "LL", false))
	if err := f.Release(ctx, cs); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "plain", queueShape(rdb, key), "p p p p p p p p")
	run, ok := f.tailRun(key, 9, rdb.LRange(ctx, key, 0, -1).Val())
	if !ok || len(run.old) != 8 {
		t.Fatalf("tail run of 8 plain: %v, %d old", ok, len(run.old))
	}
	// Another worker packs the tail first, at its admission.
	admit(t, f, cand("a", "/p08", "LL", false))
	mustEqual(t, "after an admission", queueShape(rdb, key), "p B8")
	if done, err := f.splice(ctx, 0, []spliceRun{run}); err != nil || done != 0 {
		t.Fatalf("stale compaction: %d applied, %v", done, err)
	}
	mustEqual(t, "unchanged", queueShape(rdb, key), "p B8")
	// An unpacking of a block that is gone changes nothing.
	b8 := rdb.LIndex(ctx, key, 1).Val()
	for i := 9; i < 17; i++ {
		admit(t, f, cand("a", fmt.Sprintf("/p%02d", i), "LL", false))
	}
	mustEqual(t, "merged", queueShape(rdb, key), "p B16")
	if err := f.unpackHeads(ctx, 0, []headBlock{{key: key, block: b8}}); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "head unpacking of a block gone", queueShape(rdb, key), "p B16")
	checkInvariants(t, rdb, "{t}:")
	mustEqual(t, "claimed", claimAll(t, f, 20), "p00 p01 p02 p03 p04 p05 p06 p07 p08 p09 p10 p11 p12 p13 p14 p15 p16")
}

// A block met at the head is split in its place: the rest of it takes
// the block's element (its frame unchanged) and only the unpacked items
// are pushed before it; the last split of a block leaves items only.
// The claim that takes the item before a block reports it, and Claim
// unpacks it at once.
func TestQueueBlockSplitInPlace(t *testing.T) {
	forBackends(t, func(t *testing.T, rdb *redis.Client) {
		f := newTestFrontier(t, rdb, newClock(), Options{})
		ctx := context.Background()
		key := "{t}:q:a:2"
		for i := range 30 {
			admit(t, f, cand("a", fmt.Sprintf("/p%02d", i), "LL", false))
		}
		mustEqual(t, "shape", queueShape(rdb, key), "p B24 p p p p p")
		_, _, at, err := parseBlock(rdb.LIndex(ctx, key, 1).Val())
		if err != nil {
			t.Fatal(err)
		}
		frame := rdb.LIndex(ctx, key, 1).Val()[at:]
		mustEqual(t, "first claim", claimAll(t, f, 1), "p00")
		for i, want := range []string{"p p p p p p p p B16 p p p p p", "p p p p p p p p B8 p p p p p", "p p p p p p p p p p p p p"} {
			mustEqual(t, fmt.Sprintf("after split %d", i+1), queueShape(rdb, key), want)
			if i < 2 {
				_, _, at, err := parseBlock(rdb.LIndex(ctx, key, 8).Val())
				if err != nil {
					t.Fatal(err)
				}
				mustEqual(t, "frame kept", rdb.LIndex(ctx, key, 8).Val()[at:], frame)
			}
			var run []string
			for k := 1 + 8*i; k < 9+8*i; k++ {
				run = append(run, fmt.Sprintf("p%02d", k))
			}
			mustEqual(t, "claimed", claimAll(t, f, 8), strings.Join(run, " "))
		}
		mustEqual(t, "the tail", claimAll(t, f, 10), "p25 p26 p27 p28 p29")
		checkInvariants(t, rdb, "{t}:")
	})
}

// A block that no longer unpacks is dropped with an error logged: its
// host goes on with the rest of its queue.
func TestQueueBlockCorruptAtHead(t *testing.T) {
	rdb := backends()[0].open(t)
	var logs bytes.Buffer
	f := newTestFrontier(t, rdb, newClock(), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	key := "{t}:q:a:2"
	for i := range 30 {
		admit(t, f, cand("a", fmt.Sprintf("/p%02d", i), "LL", false))
	}
	mustEqual(t, "shape", queueShape(rdb, key), "p B24 p p p p p")
	if err := rdb.LSet(ctx, key, 1, "\x00\x18\x00damaged").Err(); err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "claimed", claimAll(t, f, 40), "p00 p25 p26 p27 p28 p29")
	if !strings.Contains(logs.String(), "corrupt queue block dropped") || !strings.Contains(logs.String(), "items=24") {
		t.Fatalf("log: %s", logs.String())
	}
}

// The operator's tools see and take URIs inside blocks: NextURIs lists
// them, URIState places them, TakeQueued deletes one (its block unpacked
// in place).
func TestQueueBlocksOperatorTools(t *testing.T) {
	rdb := backends()[0].open(t)
	f := newTestFrontier(t, rdb, newClock(), Options{})
	ctx := context.Background()
	key := "{t}:q:a:2"
	for i := range 100 {
		admit(t, f, cand("a", fmt.Sprintf("/p%03d", i), "LL", false))
	}
	admit(t, f, cand("a", "/seed", "", true))
	if !strings.Contains(queueShape(rdb, key), "B32") {
		t.Fatalf("not packed: %s", queueShape(rdb, key))
	}
	next, err := f.NextURIs(ctx, "a", 20)
	if err != nil || len(next) != 20 || next[0].URL != "http://a/seed" || next[19].URL != "http://a/p018" {
		t.Fatalf("NextURIs: %d, %v", len(next), err)
	}
	st, err := f.URIState(ctx, "http://a/p070")
	if err != nil || st.State != URIQueued || st.Position != 70 || st.Ahead != 71 {
		t.Fatalf("URIState of p070: %+v, %v", st, err)
	}
	taken, err := f.TakeQueued(ctx, Selector{URL: func(u string) bool { return u == "http://a/p050" }}, time.Minute)
	if err != nil || len(taken) != 1 || taken[0].Launch.URL != "http://a/p050" {
		t.Fatalf("TakeQueued: %d, %v", len(taken), err)
	}
	d := Decision{Status: StatusDeleted}
	if _, err := f.Complete(ctx, []Outcome{{Claim: taken[0], Status: StatusDeleted, NotFetched: true, Policy: testPolicy(), Decision: &d}}); err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, rdb, "{t}:")
	more, err := f.TakeMore(ctx, "a", 12, time.Minute)
	if err != nil || len(more) != 12 || more[11].Launch.URL != "http://a/p010" {
		t.Fatalf("TakeMore: %d, %v", len(more), err)
	}
	checkInvariants(t, rdb, "{t}:")
	q, err := f.Queued(ctx, "a")
	if err != nil || len(q) != 100-1-11 {
		t.Fatalf("Queued: %d, %v", len(q), err)
	}
	for _, l := range q {
		if l.URL == "http://a/p050" {
			t.Fatal("the deleted URI is still queued")
		}
	}
}
