package docsite

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// A tree site is reached level by level: breadth-first from the index,
// every page is found at exactly its level in the tree, none sooner, and
// the deepest level is what Levels says.
func TestGenerateTree(t *testing.T) {
	for _, tc := range []struct{ pages, fanout, levels int }{{557, 4, 5}, {1, 4, 1}, {20, 4, 2}, {21, 4, 3}, {30, 2, 4}} {
		t.Run(fmt.Sprintf("%d/%d", tc.pages, tc.fanout), func(t *testing.T) {
			if got := Levels(tc.pages, tc.fanout); got != tc.levels {
				t.Fatalf("Levels = %d, want %d", got, tc.levels)
			}
			dir := t.TempDir()
			if err := GenerateTree(dir, tc.pages, tc.fanout, 7); err != nil {
				t.Fatal(err)
			}
			urls, err := Reachable(dir, "http://docs.test/")
			if err != nil {
				t.Fatal(err)
			}
			if len(urls) != tc.pages+2 { // the index and the style sheet too
				t.Fatalf("%d URLs reachable, want %d", len(urls), tc.pages+2)
			}
			files := readTree(t, dir)
			level := map[string]int{IndexFile: 0}
			queue := []string{IndexFile}
			deepest := 0
			for len(queue) > 0 {
				f := queue[0]
				queue = queue[1:]
				links, err := hrefs(files[f])
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range links {
					rel := path.Clean(path.Join(path.Dir(f), l))
					if !strings.HasPrefix(rel, PagesDir+"/") {
						continue
					}
					if _, ok := level[rel]; !ok {
						level[rel] = level[f] + 1
						deepest = max(deepest, level[rel])
						queue = append(queue, rel)
					}
				}
			}
			for i := 1; i <= tc.pages; i++ {
				want, first := 1, 1
				for next := tc.fanout*first + 1; i >= next; next = tc.fanout*first + 1 {
					want, first = want+1, next
				}
				if got, ok := level[PagePath(i)]; !ok || got != want {
					t.Errorf("%s at level %d (found %v), want %d", PagePath(i), got, ok, want)
				}
			}
			if deepest != tc.levels {
				t.Errorf("deepest level %d, want %d", deepest, tc.levels)
			}
		})
	}
	if err := GenerateTree(filepath.Join(t.TempDir(), "x"), 10, 1, 1); err == nil || !strings.Contains(err.Error(), "fanout 1") {
		t.Errorf("fanout 1: %v", err)
	}
}
