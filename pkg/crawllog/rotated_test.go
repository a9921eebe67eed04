package crawllog

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// rotations records OnRotate calls.
type rotations struct {
	mu  sync.Mutex
	got []Rotated
}

func (r *rotations) add(x Rotated) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, x)
}

func (r *rotations) list() []Rotated {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Rotated(nil), r.got...)
}

// TestOnRotate: every file renamed aside, at midnight or as a leftover at
// Open, is handed to OnRotate with its final path and size, by the time
// Close returns; a log closed without rotating is not (a later Open
// appends to it).
func TestOnRotate(t *testing.T) {
	yesterday := time.Date(2024, 1, 16, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		leftover string // content of a crawl.log from yesterday, if any
		// midnight moves the clock past midnight after one line.
		midnight bool
		want     []string // rotated file names
	}{
		{name: "no rotation"},
		{name: "leftover at open", leftover: "old line\n", want: []string{"crawl.log.20240117000000"}},
		{name: "midnight", midnight: true, want: []string{"crawl.log.20240118000000"}},
		{name: "leftover and midnight", leftover: "old\n", midnight: true,
			want: []string{"crawl.log.20240117000000", "crawl.log.20240118000000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, DefaultName)
			if tc.leftover != "" {
				if err := os.WriteFile(path, []byte(tc.leftover), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(path, yesterday, yesterday); err != nil {
					t.Fatal(err)
				}
			}
			var rec rotations
			clk := newClock(time.Date(2024, 1, 17, 23, 0, 0, 0, time.UTC))
			w := openTest(t, Options{Dir: dir, Now: clk.now, OnRotate: func(r Rotated) {
				time.Sleep(10 * time.Millisecond) // a slow consumer, as a Kafka produce is; Close must wait for it
				rec.add(r)
			}})
			if err := w.Write(entryAt(clk.now(), "http://a.example/")); err != nil {
				t.Fatal(err)
			}
			if tc.midnight {
				clk.set(time.Date(2024, 1, 18, 0, 0, 1, 0, time.UTC))
				if err := w.Write(entryAt(clk.now(), "http://a.example/next")); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := rec.list()
			if len(got) != len(tc.want) {
				t.Fatalf("OnRotate got %v, want %v", got, tc.want)
			}
			for i, r := range got {
				if filepath.Base(r.Path) != tc.want[i] {
					t.Errorf("rotation %d: path %s, want %s", i, r.Path, tc.want[i])
				}
				fi, err := os.Stat(r.Path)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Size() != r.Size || r.Size == 0 {
					t.Errorf("rotation %d: size %d, file has %d", i, r.Size, fi.Size())
				}
				if want, _ := time.Parse(rotationLayout, tc.want[i][len("crawl.log."):]); !r.At.Equal(want) {
					t.Errorf("rotation %d: at %v, want %v", i, r.At, want)
				}
			}
		})
	}
}
