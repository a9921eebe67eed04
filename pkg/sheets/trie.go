package sheets

import "strings"

// tnode is a node of a radix tree of SURT prefixes. Every prefix with
// sheets ends at a node (edges are split on insert), so the prefixes that
// match a SURT are exactly the bound nodes on its path from the root, and
// the deepest one determines the whole chain of sheets. That is why each
// bound node can carry the finished effective settings: a lookup is one
// walk down the tree and no allocation.
//
// A tree is built once per snapshot and never changed after, so lookups
// need no lock.
type tnode struct {
	label    string
	children []*tnode // sorted by label[0]; labels of siblings differ in it
	bind     *binding // non-nil when a prefix with sheets ends here
	eff      *Effective
	applied  []Applied // what this node's binding applied, for Explain
}

// insert returns the node for key, creating and splitting nodes as needed.
func (n *tnode) insert(key string) *tnode {
	for key != "" {
		i, found := n.childIndex(key[0])
		if !found {
			leaf := &tnode{label: key}
			n.children = append(n.children, nil)
			copy(n.children[i+1:], n.children[i:])
			n.children[i] = leaf
			return leaf
		}
		c := n.children[i]
		l := commonPrefixLen(c.label, key)
		if l == len(c.label) {
			n, key = c, key[l:]
			continue
		}
		// Split c's edge at l: mid takes the common part.
		mid := &tnode{label: c.label[:l], children: []*tnode{c}}
		c.label = c.label[l:]
		n.children[i] = mid
		if l == len(key) {
			return mid
		}
		n, key = mid, key[l:]
	}
	return n
}

// childIndex finds the child whose label starts with b, or where it would
// go (binary search: the root's grandchildren fan out over every TLD).
func (n *tnode) childIndex(b byte) (int, bool) {
	lo, hi := 0, len(n.children)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.children[m].label[0] < b {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(n.children) && n.children[lo].label[0] == b
}

// deepest returns the deepest bound node whose prefix is a prefix of s, or
// nil.
func (n *tnode) deepest(s string) *tnode {
	var best *tnode
	for s != "" {
		i, ok := n.childIndex(s[0])
		if !ok || !strings.HasPrefix(s, n.children[i].label) {
			break
		}
		n = n.children[i]
		s = s[len(n.label):]
		if n.bind != nil {
			best = n
		}
	}
	return best
}

// path returns the bound nodes whose prefixes are prefixes of s, shortest
// first.
func (n *tnode) path(s string) []*tnode {
	var out []*tnode
	for s != "" {
		i, ok := n.childIndex(s[0])
		if !ok || !strings.HasPrefix(s, n.children[i].label) {
			break
		}
		n = n.children[i]
		s = s[len(n.label):]
		if n.bind != nil {
			out = append(out, n)
		}
	}
	return out
}

func commonPrefixLen(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
