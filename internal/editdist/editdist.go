// Package editdist measures Levenshtein distances: how far a mistyped
// name is from a known one (for "did you mean" hints in errors), and how
// far a replayed page's text is from its capture's (replay QA).
package editdist

// Distance is the Levenshtein distance between a and b, in bytes (the
// names it compares are ASCII).
func Distance(a, b string) int { return Of([]byte(a), []byte(b)) }

// Of is the Levenshtein distance of two sequences of symbols (bytes,
// runes, word ids), after their common prefix and suffix are dropped, in
// two rows of memory: its time is the product of what is left of the two
// lengths, which the caller bounds.
func Of[T comparable](a, b []T) int {
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
