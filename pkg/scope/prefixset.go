package scope

import (
	"slices"
	"strings"
)

// PrefixSet is an immutable set of SURT prefixes answering "is any member
// a prefix of this SURT?" (Heritrix's SurtPrefixSet.containsPrefixOf).
//
// Members are kept sorted with redundant entries (those that another
// member is a prefix of) removed. Then the only member that can be a
// prefix of s is the greatest member <= s, so a lookup is one binary
// search. The strings live in one contiguous buffer indexed by offsets, so
// a million prefixes cost the garbage collector nothing to scan.
//
// Sets grow by With, which adds to a small second tier and folds it into
// the main one when it passes the square root of its size, so a stream of
// single added seeds costs O(sqrt n) each, amortised, rather than O(n).
type PrefixSet struct {
	base, delta sortedPrefixes
}

// sortedPrefixes is a sorted, redundancy-free list: member i is
// blob[off[i]:off[i+1]].
type sortedPrefixes struct {
	blob string
	off  []int
}

// NewPrefixSet builds a set from prefixes in any order, with duplicates.
func NewPrefixSet(prefixes []string) *PrefixSet {
	return &PrefixSet{base: buildSorted(slices.Clone(prefixes))}
}

// Len is the number of members after redundant prefixes were dropped.
func (p *PrefixSet) Len() int {
	if p == nil {
		return 0
	}
	return p.base.len() + p.delta.len()
}

// ContainsPrefixOf reports whether a member is a prefix of s.
func (p *PrefixSet) ContainsPrefixOf(s string) bool {
	if p == nil {
		return false
	}
	return p.base.containsPrefixOf(s) || p.delta.containsPrefixOf(s)
}

// Members returns the members in sorted order.
func (p *PrefixSet) Members() []string {
	if p == nil {
		return nil
	}
	out := make([]string, 0, p.Len())
	for i := range p.base.len() {
		out = append(out, p.base.at(i))
	}
	for i := range p.delta.len() {
		out = append(out, p.delta.at(i))
	}
	return buildSorted(out).strings()
}

// With returns a set holding p's members and adds; p is unchanged.
func (p *PrefixSet) With(adds []string) *PrefixSet {
	if len(adds) == 0 {
		return p
	}
	var base, delta sortedPrefixes
	if p != nil {
		base, delta = p.base, p.delta
	}
	next := &PrefixSet{base: base, delta: buildSorted(append(delta.strings(), adds...))}
	// The second tier is rebuilt on every call and folded into the first
	// when it outgrows sqrt of it: one added seed then costs O(sqrt n)
	// copying, amortised, and lookups stay two binary searches.
	if d := next.delta.len(); d > 256 && d*d > next.base.len() {
		next = &PrefixSet{base: mergeSorted(base, next.delta)}
	}
	return next
}

func (s sortedPrefixes) len() int {
	if len(s.off) == 0 {
		return 0
	}
	return len(s.off) - 1
}

func (s sortedPrefixes) at(i int) string { return s.blob[s.off[i]:s.off[i+1]] }

func (s sortedPrefixes) strings() []string {
	out := make([]string, s.len())
	for i := range out {
		out[i] = s.at(i)
	}
	return out
}

// containsPrefixOf finds the greatest member <= x and checks whether it is
// a prefix of x. Because no member is a prefix of another, any member that
// is a prefix of x would sort between it and x, so it is the only
// candidate.
func (s sortedPrefixes) containsPrefixOf(x string) bool {
	lo, hi := 0, s.len() // find the first member > x
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.at(mid) <= x {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo > 0 && strings.HasPrefix(x, s.at(lo-1))
}

// buildSorted sorts list in place, drops duplicates and members that
// another member is a prefix of, and packs the rest into one buffer.
func buildSorted(list []string) sortedPrefixes {
	slices.Sort(list)
	kept := list[:0]
	size := 0
	for _, s := range list {
		if s == "" {
			continue // the empty prefix would match everything: never a real entry
		}
		if n := len(kept); n > 0 && strings.HasPrefix(s, kept[n-1]) {
			continue
		}
		kept = append(kept, s)
		size += len(s)
	}
	var b strings.Builder
	b.Grow(size)
	off := make([]int, 0, len(kept)+1)
	off = append(off, 0)
	for _, s := range kept {
		b.WriteString(s)
		off = append(off, b.Len())
	}
	if len(kept) == 0 {
		return sortedPrefixes{}
	}
	return sortedPrefixes{blob: b.String(), off: off}
}

// mergeSorted merges two sorted, redundancy-free lists in one linear pass,
// dropping members the other list makes redundant.
func mergeSorted(a, b sortedPrefixes) sortedPrefixes {
	var bld strings.Builder
	bld.Grow(len(a.blob) + len(b.blob))
	off := make([]int, 1, a.len()+b.len()+1)
	last := ""
	add := func(s string) {
		if len(off) > 1 && strings.HasPrefix(s, last) {
			return
		}
		bld.WriteString(s)
		off = append(off, bld.Len())
		last = s
	}
	i, j := 0, 0
	for i < a.len() && j < b.len() {
		if x, y := a.at(i), b.at(j); x <= y {
			add(x)
			i++
		} else {
			add(y)
			j++
		}
	}
	for ; i < a.len(); i++ {
		add(a.at(i))
	}
	for ; j < b.len(); j++ {
		add(b.at(j))
	}
	if len(off) == 1 {
		return sortedPrefixes{}
	}
	return sortedPrefixes{blob: bld.String(), off: off}
}
