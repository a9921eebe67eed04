package extsort

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sortAll adds lines to a Sorter of o and returns what Merge gives, and
// how many runs were written.
func sortAll(t *testing.T, o Options, lines []string) ([]string, int) {
	t.Helper()
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if err := s.Add([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	runs := s.Runs()
	var out []string
	if err := s.Merge(func(l []byte) error {
		out = append(out, string(l))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out, runs
}

// TestSortMatchesInMemory sorts the same random lines in memory and with
// runs of a few lines (hundreds of runs, several merge passes), with and
// without Unique, and expects the same output, and no run file left.
func TestSortMatchesInMemory(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var lines []string
	for i := range 3000 {
		// Keys repeat (a URL seen again); the part after the tab orders
		// a key's lines, and Unique keeps the least.
		lines = append(lines, fmt.Sprintf("http://h%d.example/%d\t%013d", rng.IntN(50), rng.IntN(300), 3000-i))
	}
	want := slices.Clone(lines)
	slices.Sort(want)
	var wantUnique []string
	for _, l := range want {
		k, _, _ := strings.Cut(l, "\t")
		if n := len(wantUnique); n > 0 && strings.HasPrefix(wantUnique[n-1], k+"\t") {
			continue
		}
		wantUnique = append(wantUnique, l)
	}
	for _, tc := range []struct {
		name     string
		runBytes int
		fanIn    int
		unique   bool
		want     []string
		minRuns  int
	}{
		{"in memory", 0, 0, false, want, 0},
		{"in memory, unique", 0, 0, true, wantUnique, 0},
		{"many runs, one pass", 2000, 1000, false, want, 80},
		{"many runs, several passes", 200, 3, false, want, 500},
		{"many runs, several passes, unique", 200, 3, true, wantUnique, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			got, runs := sortAll(t, Options{Dir: dir, RunBytes: tc.runBytes, FanIn: tc.fanIn, Unique: tc.unique, KeySep: '\t'}, lines)
			if runs < tc.minRuns {
				t.Fatalf("%d runs written, want at least %d", runs, tc.minRuns)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %d lines, want %d; first difference at %d", len(got), len(tc.want), firstDiff(got, tc.want))
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Fatalf("%d run files left after Merge", len(left))
			}
		})
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestBadLine: a line holding a newline is refused with its position,
// not added, and the rest sorts.
func TestBadLine(t *testing.T) {
	s, err := New(Options{Dir: t.TempDir(), RunBytes: 10})
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	for _, l := range []string{"b", "a\nz", "c", "a"} {
		if err := s.Add([]byte(l)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrBadLine) || !strings.Contains(errs[0].Error(), "line 2") {
		t.Fatalf("errors %v, want one ErrBadLine at line 2", errs)
	}
	var got []string
	if err := s.Merge(func(l []byte) error { got = append(got, string(l)); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("got %q", got)
	}
}

// TestDamagedRun: a run file cut short under the Sorter fails the merge
// with the file named, instead of passing a partial line on.
func TestDamagedRun(t *testing.T) {
	dir := t.TempDir()
	s, err := New(Options{Dir: dir, RunBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"b", "a", "c"} {
		if err := s.Add([]byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(s.runs[0], []byte("b"), 0o644); err != nil { // newline lost
		t.Fatal(err)
	}
	err = s.Merge(func([]byte) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "run-1") {
		t.Fatalf("Merge = %v, want an error naming run-1", err)
	}
}

func TestNewNeedsDir(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a directory succeeded")
	}
}
