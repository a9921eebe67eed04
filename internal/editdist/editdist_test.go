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

func TestOf(t *testing.T) {
	for _, c := range []struct {
		a, b []string
		want int
	}{
		{nil, nil, 0},
		{[]string{"the", "cat", "sat"}, []string{"the", "cat", "sat"}, 0},
		{[]string{"the", "cat", "sat"}, []string{"the", "dog", "sat"}, 1},
		{[]string{"a", "b", "c", "d"}, []string{"a", "d"}, 2},
		{[]string{"x"}, []string{"y", "x", "y"}, 2},
	} {
		if got := Of(c.a, c.b); got != c.want {
			t.Errorf("Of(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	if got := Of([]rune("naïve"), []rune("naive")); got != 1 {
		t.Errorf("runes: %d, want 1", got)
	}
}
