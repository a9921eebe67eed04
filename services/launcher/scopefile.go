package launcher

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/surt"
)

// atomicFile writes a file that readers only ever see whole: it is written
// to a temporary file next to the destination and renamed into place on
// Commit. Workers watch and reload scope files; they must never read half
// of one.
type atomicFile struct {
	path string
	tmp  *os.File
	w    *bufio.Writer
}

func createAtomic(path string) (*atomicFile, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &atomicFile{path: path, tmp: tmp, w: bufio.NewWriterSize(tmp, 256<<10)}, nil
}

// WriteString writes s.
func (f *atomicFile) WriteString(s string) error {
	if _, err := f.w.WriteString(s); err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// Commit flushes, syncs and renames the file into place.
func (f *atomicFile) Commit() error {
	err := f.w.Flush()
	if err == nil {
		err = f.tmp.Sync()
	}
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// CreateTemp makes the file 0600; the readers may run as another
		// user.
		err = os.Chmod(f.tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.path)
	}
	if err != nil {
		_ = os.Remove(f.tmp.Name())
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

// Abort discards the file; the destination is left as it was.
func (f *atomicFile) Abort() {
	_ = f.tmp.Close()
	_ = os.Remove(f.tmp.Name())
}

// surtFile writes a SURT prefix file in the format the scope rules read
// (ARCHITECTURE.md 9): "#" comment lines, then one "+<SURT prefix>" per
// line, https folded to http.
type surtFile struct {
	*atomicFile
	last string // last prefix written, to drop runs of duplicates
	n    int    // prefixes written
}

// createSURTFile starts writing path with the given header lines (each
// written as a "# " comment).
func createSURTFile(path string, header ...string) (*surtFile, error) {
	af, err := createAtomic(path)
	if err != nil {
		return nil, fmt.Errorf("scope file: %w", err)
	}
	f := &surtFile{atomicFile: af}
	for _, h := range header {
		for _, line := range strings.Split(h, "\n") {
			if err := f.WriteString("# " + line + "\n"); err != nil {
				f.Abort()
				return nil, fmt.Errorf("scope file: %w", err)
			}
		}
	}
	return f, nil
}

// AddSeed writes the SURT prefix a seed implies (surt.ImpliedPrefix:
// https folded to http, the last path segment dropped, the authority left
// open when there is no path so subdomains match). A prefix equal to the
// previous one is not repeated.
func (f *surtFile) AddSeed(seed string) error {
	p := surt.ImpliedPrefix(seed)
	if p == "" {
		return fmt.Errorf("no SURT prefix for %q", seed)
	}
	return f.AddPrefix(p)
}

// AddPrefix writes one literal SURT prefix.
func (f *surtFile) AddPrefix(p string) error {
	if p == f.last {
		return nil
	}
	f.last = p
	f.n++
	return f.WriteString("+" + p + "\n")
}
