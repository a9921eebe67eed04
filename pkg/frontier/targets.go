package frontier

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Targets (source tags) in the frontier: per-target queue counts, and
// pausing a target without holding up its hosts' other targets.
//
// The scripts keep, per shard, a hash tq of counters per source id
// ("q:<id>" queued, "a:<id>" in flight) changed in the same call as the
// URI (admit, claim, complete, reap, take), and tn mapping a source id to
// its tag. A queued URI counts from its admission until its entry leaves
// the queue; an entry superseded by a forced re-queue counts until the
// claim drops it, so the counts never drift.
//
// A paused target's source id is in the set psrc. The claim sets its URIs
// aside as they reach the head of a host queue, into the host's list qh:
// (index entry 'h'), and goes on to the host's next URI; ResumeSource puts
// them back at the head of their levels. Each URI is set aside once per
// pause, so a claim stays O(1) amortised however long the paused target's
// queue.

// TargetCount is what one target has in the frontier.
type TargetCount struct {
	Source   string `json:"source"`
	Queued   int64  `json:"queued"`
	InFlight int64  `json:"in_flight"`
	// Paused: the target is paused (its queued URIs wait, set aside).
	Paused bool `json:"paused,omitempty"`
}

// TargetCounts returns the queued and in-flight counts of every target
// with any, most queued first.
func (f *Frontier) TargetCounts(ctx context.Context) ([]TargetCount, error) {
	pipe := f.rdb.Pipeline()
	type cmds struct {
		counts, names interface{ Val() map[string]string }
	}
	cs := make([]cmds, len(f.prefixes))
	for i, p := range f.prefixes {
		cs[i] = cmds{pipe.HGetAll(ctx, p+"tq"), pipe.HGetAll(ctx, p+"tn")}
	}
	// Every shard holds the same paused set (PauseSource).
	paused := pipe.SMembersMap(ctx, f.prefixes[0]+"psrc")
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("frontier %s target counts: %w", f.name, err)
	}
	byID := map[string]*TargetCount{}
	for _, c := range cs {
		names := c.names.Val()
		for field, v := range c.counts.Val() {
			kind, id, ok := strings.Cut(field, ":")
			if !ok {
				continue
			}
			n, _ := strconv.ParseInt(v, 10, 64)
			t := byID[id]
			if t == nil {
				_, p := paused.Val()[id]
				t = &TargetCount{Source: names[id], Paused: p}
				byID[id] = t
			}
			if t.Source == "" {
				t.Source = names[id]
			}
			switch kind {
			case "q":
				t.Queued += n
			case "a":
				t.InFlight += n
			}
		}
	}
	out := make([]TargetCount, 0, len(byID))
	for _, t := range byID {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b TargetCount) int {
		return cmp.Or(cmp.Compare(b.Queued+b.InFlight, a.Queued+a.InFlight), cmp.Compare(a.Source, b.Source))
	})
	return out, nil
}

// PauseSource stops claims of the target with source tag source; its hosts'
// other targets go on. URIs in flight finish.
func (f *Frontier) PauseSource(ctx context.Context, source string) error {
	pipe := f.rdb.Pipeline()
	for _, p := range f.prefixes {
		pipe.SAdd(ctx, p+"psrc", sourceID(source))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("frontier %s pause target %s: %w", f.name, source, err)
	}
	return nil
}

// ResumeSource undoes PauseSource: the URIs set aside go back to the head
// of their queues. It returns how many.
func (f *Frontier) ResumeSource(ctx context.Context, source string) (int, error) {
	moved := 0
	for s, p := range f.prefixes {
		if err := f.rdb.SRem(ctx, p+"psrc", sourceID(source)).Err(); err != nil {
			return moved, fmt.Errorf("frontier %s resume target %s: %w", f.name, source, err)
		}
		hosts, err := f.rdb.SMembers(ctx, p+"held").Result()
		if err != nil {
			return moved, fmt.Errorf("frontier %s resume target %s: %w", f.name, source, err)
		}
		for _, host := range hosts {
			r, err := f.runAll(ctx, f.sc.unhold, []call{{shard: s, args: []any{ms(f.now()), host}}})
			if err != nil {
				return moved, fmt.Errorf("frontier %s resume target %s at %s: %w", f.name, source, host, err)
			}
			moved += int(toInt(r[0]))
		}
	}
	return moved, nil
}

// PausedSource reports whether the target with source tag source is
// paused in the frontier.
func (f *Frontier) PausedSource(ctx context.Context, source string) (bool, error) {
	ok, err := f.rdb.SIsMember(ctx, f.prefixes[0]+"psrc", sourceID(source)).Result()
	if err != nil {
		return false, fmt.Errorf("frontier %s paused target %s: %w", f.name, source, err)
	}
	return ok, nil
}
