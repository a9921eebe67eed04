package bench

import (
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0", []int{0}, true},
		{"0-1", []int{0, 1}, true},
		{"0-2,5,7-8", []int{0, 1, 2, 5, 7, 8}, true},
		{"", nil, false},
		{"a", nil, false},
		{"3-1", nil, false},
		{"0-", nil, false},
		{"-1", nil, false},
		{"0,,1", nil, false},
	} {
		got, err := parseCPUList(c.in)
		if (err == nil) != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}

// TestInstructionCounter checks that the counters count, where the machine
// has them.
func TestInstructionCounter(t *testing.T) {
	c, err := startInstructions()
	if err != nil {
		t.Skipf("no perf counters here: %v", err)
	}
	x := 0
	for i := range 10_000_000 {
		x += i & 3
	}
	n, cycles, err := c.stop()
	if err != nil || n < 10_000_000 || cycles < 1_000_000 {
		t.Errorf("counted %d instructions, %d cycles (%v) over a 10M-step loop (%d)", n, cycles, err, x)
	}
}
