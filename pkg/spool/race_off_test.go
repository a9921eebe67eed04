//go:build !race

package spool

// boundedTotal is the size TestMemoryBounded writes.
const boundedTotal = 2 << 30
