package spool

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	files := map[string]int{
		"trawler-spool-1": 100, "trawler-spool-2": 50, "tmp-diskbuffer-9": 7, // stale
		"notes.txt": 3, "trawler-spoolish": 1, // not ours
	}
	for name, n := range files {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A directory with a stale-looking name is not a spool file.
	if err := os.Mkdir(filepath.Join(dir, "trawler-spool-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	n, size, err := RemoveStale(dir, "tmp-diskbuffer-")
	if err != nil || n != 3 || size != 157 {
		t.Fatalf("removed %d files, %d bytes (%v), want 3 and 157", n, size, err)
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if len(names) != 3 {
		t.Fatalf("left %v, want notes.txt, trawler-spool-dir and trawler-spoolish", names)
	}
	if n, _, err := RemoveStale(filepath.Join(dir, "absent")); n != 0 || err != nil {
		t.Fatalf("absent directory: %d %v", n, err)
	}
}

// A spilled Buffer's file carries the prefix RemoveStale looks for.
func TestSpilledFileIsStaleWhenLeft(t *testing.T) {
	dir := t.TempDir()
	b := New(0, dir)
	if _, err := b.Write(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	// The process "dies" here: the file stays until RemoveStale.
	n, _, err := RemoveStale(dir)
	if err != nil || n != 1 {
		t.Fatalf("removed %d (%v), want the spilled file", n, err)
	}
	_ = b.Close()
}
