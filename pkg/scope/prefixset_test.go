package scope

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestPrefixSet(t *testing.T) {
	set := NewPrefixSet([]string{
		"http://(org,example,www,)/a/",
		"http://(org,example,www,)/a/b/", // redundant: under /a/
		"http://(org,example,",           // makes the next redundant
		"http://(org,example,www,)/z/",
		"http://(uk,co,",
		"http://(uk,co,",
		"",
		"http://(com,b,)/",
	})
	if got, want := set.Members(), []string{"http://(com,b,)/", "http://(org,example,", "http://(uk,co,"}; !slices.Equal(got, want) {
		t.Fatalf("Members = %q, want %q", got, want)
	}
	tests := []struct {
		s    string
		want bool
	}{
		{"http://(org,example,www,)/a/b", true},
		{"http://(org,example,)/", true},
		{"http://(org,example", false},
		{"http://(org,examples,)/", false},
		{"http://(uk,co,x,)/", true},
		{"http://(uk,con,)/", false},
		{"http://(com,b,)/", true},
		{"http://(com,b,)", false},
		{"http://(com,a,)/", false},
		{"", false},
		{"zzz", false},
	}
	for _, tc := range tests {
		if got := set.ContainsPrefixOf(tc.s); got != tc.want {
			t.Errorf("ContainsPrefixOf(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
	var empty *PrefixSet
	if empty.ContainsPrefixOf("http://(a,") || empty.Len() != 0 || NewPrefixSet(nil).ContainsPrefixOf("x") {
		t.Fatal("empty sets must contain nothing")
	}
}

// TestPrefixSetAgainstBruteForce grows a set through With (crossing the
// fold threshold several times) and compares every answer with a linear
// scan.
func TestPrefixSetAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abc,)/"[rng.IntN(6)]
		}
		return string(b)
	}
	var all []string
	set := NewPrefixSet(nil)
	for round := range 40 {
		adds := make([]string, 1+rng.IntN(300))
		for i := range adds {
			adds[i] = "h(" + word(1+rng.IntN(7))
		}
		before := set
		set = set.With(adds)
		all = append(all, adds...)
		if before.Len() > set.Len()+len(adds) {
			t.Fatalf("round %d: With lost members", round)
		}
	}
	for range 20000 {
		s := "h(" + word(rng.IntN(10))
		want := slices.ContainsFunc(all, func(p string) bool { return strings.HasPrefix(s, p) })
		if got := set.ContainsPrefixOf(s); got != want {
			t.Fatalf("ContainsPrefixOf(%q) = %v, brute force %v", s, got, want)
		}
	}
	if got, want := set.Members(), NewPrefixSet(all).Members(); !slices.Equal(got, want) {
		t.Fatalf("Members after With differ from a fresh build: %d vs %d", len(got), len(want))
	}
}
