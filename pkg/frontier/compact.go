package frontier

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// spliceRun is one replacement for splice.lua: the elements old, found
// at a queue's head ('h'), anywhere ('a') or near its tail ('t'), become
// the elements new.
type spliceRun struct {
	key      string
	where    byte
	old, new []string
}

// splice applies runs of one shard and returns how many were applied
// (a run another worker changed meanwhile is not).
func (f *Frontier) splice(ctx context.Context, shard int, runs []spliceRun) (int, error) {
	var args []any
	for _, r := range runs {
		args = append(args, r.key, string(r.where), len(r.old))
		for _, e := range r.old {
			args = append(args, e)
		}
		args = append(args, len(r.new))
		for _, e := range r.new {
			args = append(args, e)
		}
	}
	replies, err := f.runAll(ctx, f.sc.splice, []call{{shard: shard, args: args}})
	if err != nil {
		return 0, fmt.Errorf("frontier %s queue blocks: %w", f.name, err)
	}
	return int(toInt(replies[0])), nil
}

// dueTail is a queue admit.lua reported for packing, with how many items
// the admission pushed onto it.
type dueTail struct {
	key    string
	pushed int
}

// compact packs the plain tails of the queues admit.lua reported (of one
// shard) into blocks. A tail is read back as far as the block before it
// can be: what the admission pushed and fewer than compactAt items before
// (more only when an earlier packing lost a race, and then the plain
// items before the window stay so), bounded by compactWindow. The tail
// and the list's length are read in one transaction, so the position of
// what was read is known.
func (f *Frontier) compact(ctx context.Context, shard int, due []dueTail) error {
	lens := make([]*redis.IntCmd, len(due))
	tails := make([]*redis.StringSliceCmd, len(due))
	_, err := f.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, d := range due {
			lens[i] = pipe.LLen(ctx, d.key)
			tails[i] = pipe.LRange(ctx, d.key, -int64(min(d.pushed+compactAt+1, compactWindow)), -1)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("frontier %s read queue tails: %w", f.name, err)
	}
	var runs []spliceRun
	for i, d := range due {
		if r, ok := f.tailRun(d.key, lens[i].Val(), tails[i].Val()); ok {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return nil
	}
	_, err = f.splice(ctx, shard, runs)
	return err
}

// tailRun is the packing of a queue's tail: its plain items after the
// last block, with that block when it is not full; of a queue without
// blocks, all but its first hotHead items. n is the list's length, elems
// its last elements. ok is false when fewer than compactAt items would be
// packed.
func (f *Frontier) tailRun(key string, n int64, elems []string) (spliceRun, bool) {
	base := max(0, int(n)-len(elems)) // list index of elems[0]
	last := -1
	for i := len(elems) - 1; i >= 0; i-- {
		if isBlock(elems[i]) {
			last = i
			break
		}
	}
	start := last + 1
	if last < 0 && base < hotHead {
		start = hotHead - base
	}
	if len(elems)-start < compactAt {
		return spliceRun{}, false
	}
	old, items := elems[start:], elems[start:]
	if last >= 0 && blockLen(elems[last]) < blockItems {
		if in, err := f.blocks.unpack(elems[last]); err == nil {
			old = elems[last:]
			items = append(in, elems[start:]...)
		}
	}
	return spliceRun{key: key, where: 't', old: old, new: f.blocks.packAll(items)}, true
}

// headBlock is a block a claim met at the head of a queue; holding: the
// claim was setting aside URIs of paused targets when it met it; busy:
// it had claimed more than one URI of the host (parallelQueues).
type headBlock struct {
	key, block    string
	holding, busy bool
}

// holdRun is how many elements of a queue's head are unpacked whole for
// a claim setting aside URIs of paused targets, about HOLD_MAX items
// (claim.lua), so a long run of them is set aside as fast as when plain;
// and for a host that gives several URIs a call, so that one claim is
// not held to the unpackItems of a head.
const holdRun = 1000 / blockItems

// unpackHeads unpacks the blocks claims met at queue heads of one shard:
// unpackItems items become plain, the block keeps the rest (split); or, for a
// claim setting URIs aside or taking several of the host, the blocks
// among the first holdRun elements whole. A block that cannot be
// unpacked (corrupt) is dropped with an error logged, so its host is not
// stuck: its URIs are lost to this crawl until a rebuild from the journal
// (docs/frontier.md, Memory).
func (f *Frontier) unpackHeads(ctx context.Context, shard int, heads []headBlock) error {
	runs := make([]spliceRun, 0, len(heads))
	for _, h := range oneHeadPerQueue(heads) {
		if h.holding || h.busy {
			elems, err := f.rdb.LRange(ctx, h.key, 0, holdRun-1).Result()
			if err != nil {
				return fmt.Errorf("frontier %s read queue %s: %w", f.name, h.key, err)
			}
			// The plain items after the last block stay as they are.
			last := len(elems) - 1
			for last >= 0 && !isBlock(elems[last]) {
				last--
			}
			if last < 0 {
				continue
			}
			elems = elems[:last+1]
			items, err := f.blocks.unpackAll(elems)
			if err != nil {
				f.log.Error("corrupt queue block dropped", "frontier", f.name, "queue", h.key, "err", err)
			}
			runs = append(runs, spliceRun{key: h.key, where: 'h', old: elems, new: items})
			continue
		}
		items, rest, err := f.blocks.split(h.block, unpackItems)
		if err != nil {
			f.log.Error("corrupt queue block dropped", "frontier", f.name, "queue", h.key,
				"items", blockLen(h.block), "err", err)
			runs = append(runs, spliceRun{key: h.key, where: 'h', old: []string{h.block}})
			continue
		}
		if rest != "" {
			items = append(items, rest)
		}
		runs = append(runs, spliceRun{key: h.key, where: 'h', old: []string{h.block}, new: items})
	}
	if len(runs) == 0 {
		return nil
	}
	_, err := f.splice(ctx, shard, runs)
	return err
}

// oneHeadPerQueue merges the reports of one queue (a claim may report a
// block behind an item, then meet it), keeping the first block and every
// reason to unpack further.
func oneHeadPerQueue(heads []headBlock) []headBlock {
	out := heads[:0:0]
	at := map[string]int{}
	for _, h := range heads {
		if i, ok := at[h.key]; ok {
			out[i].holding = out[i].holding || h.holding
			out[i].busy = out[i].busy || h.busy
			continue
		}
		at[h.key] = len(out)
		out = append(out, h)
	}
	return out
}

// unpackIn unpacks blocks wherever they are in their queues (one shard),
// so the items in them can be taken by value (take.lua).
func (f *Frontier) unpackIn(ctx context.Context, shard int, heads []headBlock) error {
	runs := make([]spliceRun, 0, len(heads))
	for _, h := range heads {
		items, err := f.blocks.unpack(h.block)
		if err != nil {
			continue // the claim drops it when it reaches the head
		}
		runs = append(runs, spliceRun{key: h.key, where: 'a', old: []string{h.block}, new: items})
	}
	if len(runs) == 0 {
		return nil
	}
	_, err := f.splice(ctx, shard, runs)
	return err
}

// queueRead is a run of a queue's elements with its blocks unpacked.
type queueRead struct {
	key   string
	elems int // list elements read
	items []string
	// from maps an item that was in a block to the block.
	from map[string]string
}

// readQueue reads elements start..stop of the queue key (LRANGE's
// indexes), unpacking blocks. A block that cannot be unpacked is left
// out: the claim drops it when it reaches the head.
func (f *Frontier) readQueue(ctx context.Context, key string, start, stop int64) (queueRead, error) {
	elems, err := f.rdb.LRange(ctx, key, start, stop).Result()
	if err != nil {
		return queueRead{}, fmt.Errorf("frontier %s read queue %s: %w", f.name, key, err)
	}
	return f.unpackRead(key, elems), nil
}

func (f *Frontier) unpackRead(key string, elems []string) queueRead {
	q := queueRead{key: key, elems: len(elems), items: make([]string, 0, len(elems))}
	for _, e := range elems {
		if !isBlock(e) {
			q.items = append(q.items, e)
			continue
		}
		items, err := f.blocks.unpack(e)
		if err != nil {
			continue
		}
		if q.from == nil {
			q.from = map[string]string{}
		}
		for _, it := range items {
			q.from[it] = e
		}
		q.items = append(q.items, items...)
	}
	return q
}

// unpackFor unpacks, in place, the blocks of q holding any of items, so
// that take.lua finds them by value.
func (f *Frontier) unpackFor(ctx context.Context, shard int, qs []queueRead, items []any) error {
	var heads []headBlock
	seen := map[string]bool{}
	for _, q := range qs {
		if q.from == nil {
			continue
		}
		for _, it := range items {
			s, _ := it.(string)
			if b, ok := q.from[s]; ok && !seen[b] {
				seen[b] = true
				heads = append(heads, headBlock{key: q.key, block: b})
			}
		}
	}
	if len(heads) == 0 {
		return nil
	}
	return f.unpackIn(ctx, shard, heads)
}
