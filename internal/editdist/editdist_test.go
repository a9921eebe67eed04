package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"seed", "seed", 0}, {"seeds", "seed", 1}, {"", "abc", 3}, {"abc", "", 3},
		{"minDelayMS", "minDelayMs", 1}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2}, {"TRAWLER_CLAMD_ADR", "TRAWLER_CLAMD_ADDR", 1},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
