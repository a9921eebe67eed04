package warcwriter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// A write that fails for lack of space leaves no half record: the failed
// capture is cut out of the file, every file closed afterwards reads back
// strictly with only whole captures, and writing resumes once space is
// freed. On a real filesystem that fills (a small tmpfs, which needs root
// to mount) and, anywhere, on a simulated one: the file's buffered writer
// pointed at /dev/full for one capture, so its flush fails with ENOSPC as
// a full disk's would, part-way through the bytes.
func TestNoSpaceLeavesNoHalfRecord(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T) (dir string, fill func(*Writer) error, free func())
	}{
		{"tmpfs", tmpfsCase},
		{"simulated", devFullCase},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, fill, free := tt.run(t)
			cfg := testConfig(dir)
			cfg.MaxFileSize = 1 << 30
			w, closed := newTestWriter(t, cfg)
			ctx := context.Background()
			written := 0
			write := func(i int) error {
				f := withMeta(newFetch(fmt.Sprintf("http://example.com/%d", i), fetchDate, body(uint64(i), 40<<10), false))
				_, err := w.WriteCapture(ctx, f.c)
				if err == nil {
					written++
				}
				return err
			}
			if err := write(0); err != nil {
				t.Fatal(err)
			}
			if err := fill(w); err != nil {
				t.Fatal(err)
			}
			var err error
			for i := 1; i < 1000 && err == nil; i++ {
				err = write(i)
			}
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("writing to a full disk: %v, want ENOSPC", err)
			}
			// The file holds whole captures only, as it would be closed now.
			open := openFiles(t, dir)
			if len(open) != 1 {
				t.Fatalf("open files %v, want 1", open)
			}
			if recs := readAll(t, open[0], strictOptions()...); len(recs) != 1+3*written {
				t.Fatalf("%d records in the file after ENOSPC, want %d", len(recs), 1+3*written)
			}
			free()
			if err := write(1000); err != nil {
				t.Fatalf("write after space was freed: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			ix := indexDir(t, dir)
			if len(ix.responses) != written {
				t.Errorf("%d responses in the files, %d captures written", len(ix.responses), written)
			}
			var records int64
			for _, cf := range closed.all() {
				records += cf.Records
			}
			if want := int64(1 + 3*written); records != want {
				t.Errorf("closed files hold %d records, want %d (warcinfo and 3 per capture)", records, want)
			}
		})
	}
}

// tmpfsCase mounts a 1 MiB tmpfs (skipping the test without root or
// mount), whose space a filler file takes until the next write fails;
// free removes the filler.
func tmpfsCase(t *testing.T) (string, func(*Writer) error, func()) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	filler := filepath.Join(dir, "filler")
	fill := func(*Writer) error {
		// Leave about 100 KiB: two captures fit, the third does not.
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			return err
		}
		n := int64(st.Bavail)*st.Bsize - 100<<10
		return os.WriteFile(filler, make([]byte, max(n, 0)), 0o644)
	}
	free := func() {
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
	return dir, fill, free
}

// devFullCase points the open file's buffered writer at /dev/full, whose
// writes fail with ENOSPC; free points it back at the file.
func devFullCase(t *testing.T) (string, func(*Writer) error, func()) {
	dir := t.TempDir()
	fill := func(w *Writer) error {
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Skipf("no /dev/full: %v", err)
		}
		t.Cleanup(func() { _ = full.Close() })
		s, err := w.acquire(context.Background())
		if err != nil {
			return err
		}
		s.bw.Reset(full)
		w.release(s)
		return nil
	}
	// The failed write's rollback points the buffered writer back at the
	// file as it cuts the capture out: space is back at once.
	return dir, fill, func() {}
}

// openFiles lists the ".open" files in dir.
func openFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+openSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
