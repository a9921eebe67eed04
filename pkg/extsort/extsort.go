// Package extsort sorts more lines than fit in memory: lines are gathered
// into runs of bounded size, each run sorted and written to a file, and the
// runs merged k ways (in several passes when there are more runs than
// FanIn). Memory is RunBytes plus FanIn read buffers, whatever the input's
// size. Lines compare bytewise; with Unique, the merge keeps the least line
// of each key (the bytes before KeySep), so a caller that puts what orders
// a key's lines after the separator (a time, say) chooses which one stays.
package extsort

import (
	"bufio"
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// Defaults for Options.
const (
	DefaultRunBytes = 32 << 20
	DefaultFanIn    = 64
)

// readBuf is each run reader's buffer during a merge.
const readBuf = 64 << 10

// ErrBadLine is returned by Add for a line that holds a newline: the run
// files are newline-separated, so it would come out as two lines.
var ErrBadLine = errors.New("extsort: line holds a newline")

// Options configures a Sorter.
type Options struct {
	// Dir holds the run files (created if missing); required.
	Dir string
	// RunBytes bounds the lines kept in memory before a run is written;
	// 0: DefaultRunBytes.
	RunBytes int
	// FanIn bounds the runs merged at once; 0: DefaultFanIn (at least 2).
	FanIn int
	// Unique keeps the first line of each key in the merged output.
	Unique bool
	// KeySep ends a line's key for Unique; a line without it is all key.
	KeySep byte
}

// Sorter sorts lines added to it. It is not safe for concurrent use.
type Sorter struct {
	o     Options
	buf   [][]byte
	size  int
	runs  []string
	added int64
	seq   int
	// last is the key of the last line passed on (Unique); haveLast
	// tells an empty key from none.
	last     []byte
	haveLast bool
}

// New returns an empty Sorter writing its runs under o.Dir.
func New(o Options) (*Sorter, error) {
	if o.Dir == "" {
		return nil, errors.New("extsort: a directory is required")
	}
	if o.RunBytes <= 0 {
		o.RunBytes = DefaultRunBytes
	}
	if o.FanIn <= 0 {
		o.FanIn = DefaultFanIn
	}
	o.FanIn = max(o.FanIn, 2)
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("extsort: %w", err)
	}
	return &Sorter{o: o}, nil
}

// Add adds a copy of line. A line holding a newline is refused with
// ErrBadLine (its position, counted from 1, in the error) and not added.
func (s *Sorter) Add(line []byte) error {
	s.added++
	if bytes.IndexByte(line, '\n') >= 0 {
		return fmt.Errorf("%w: line %d", ErrBadLine, s.added)
	}
	s.buf = append(s.buf, bytes.Clone(line))
	s.size += len(line) + 24 // the slice header costs too
	if s.size >= s.o.RunBytes {
		return s.spill()
	}
	return nil
}

// Runs is how many run files have been written so far.
func (s *Sorter) Runs() int { return len(s.runs) }

// spill sorts the lines in memory and writes them as a run.
func (s *Sorter) spill() error {
	if len(s.buf) == 0 {
		return nil
	}
	slices.SortStableFunc(s.buf, bytes.Compare)
	path, err := s.writeRun(func(w *bufio.Writer) error {
		for _, l := range s.buf {
			if _, err := w.Write(l); err != nil {
				return err
			}
			if err := w.WriteByte('\n'); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.runs = append(s.runs, path)
	clear(s.buf)
	s.buf, s.size = s.buf[:0], 0
	return nil
}

// writeRun writes a new run file with fill.
func (s *Sorter) writeRun(fill func(*bufio.Writer) error) (string, error) {
	s.seq++
	path := filepath.Join(s.o.Dir, "run-"+strconv.Itoa(s.seq))
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("extsort: %w", err)
	}
	w := bufio.NewWriterSize(f, readBuf)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("extsort: write run: %w", err)
	}
	return path, nil
}

// Merge calls fn with every line in order (the first of each key with
// Unique). The slice is valid only during the call. The Sorter is empty
// afterwards, its run files removed, whether or not Merge failed.
func (s *Sorter) Merge(fn func(line []byte) error) error {
	defer s.Close()
	if len(s.runs) == 0 {
		// Everything fits in memory: no file is written.
		slices.SortStableFunc(s.buf, bytes.Compare)
		return s.emit(sliceSource(s.buf), fn)
	}
	if err := s.spill(); err != nil {
		return err
	}
	// Merge FanIn runs at a time into a longer one until FanIn remain
	// (equal lines are equal bytes, so which run gives one first does not
	// matter).
	for len(s.runs) > s.o.FanIn {
		group := s.runs[:s.o.FanIn]
		path, err := s.writeRun(func(w *bufio.Writer) error {
			return mergeFiles(group, func(l []byte) error {
				if _, err := w.Write(l); err != nil {
					return err
				}
				return w.WriteByte('\n')
			})
		})
		if err != nil {
			return err
		}
		for _, p := range group {
			_ = os.Remove(p)
		}
		s.runs = append(s.runs[s.o.FanIn:], path)
	}
	return mergeFiles(s.runs, func(l []byte) error { return s.emitOne(l, fn) })
}

// emit passes a sorted source's lines through the Unique filter to fn.
func (s *Sorter) emit(src sliceSource, fn func([]byte) error) error {
	for _, l := range src {
		if err := s.emitOne(l, fn); err != nil {
			return err
		}
	}
	return nil
}

// emitOne passes l to fn unless Unique and its key is the last one's.
func (s *Sorter) emitOne(l []byte, fn func([]byte) error) error {
	if s.o.Unique {
		k := s.key(l)
		if s.haveLast && bytes.Equal(s.last, k) {
			return nil
		}
		s.last, s.haveLast = append(s.last[:0], k...), true
	}
	return fn(l)
}

// key is a line's key: the bytes before KeySep.
func (s *Sorter) key(l []byte) []byte {
	if i := bytes.IndexByte(l, s.o.KeySep); i >= 0 {
		return l[:i]
	}
	return l
}

// Close removes the run files and empties the Sorter.
func (s *Sorter) Close() error {
	var errs []error
	for _, p := range s.runs {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	s.runs, s.buf, s.size, s.last, s.haveLast = nil, nil, 0, nil, false
	return errors.Join(errs...)
}

type sliceSource [][]byte

// mergeFiles merges sorted run files k ways into fn.
func mergeFiles(paths []string, fn func([]byte) error) error {
	h := &runHeap{}
	defer func() {
		for _, r := range h.rs {
			_ = r.f.Close()
		}
	}()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("extsort: %w", err)
		}
		r := &runReader{f: f, r: bufio.NewReaderSize(f, readBuf)}
		ok, err := r.next()
		if err != nil {
			_ = f.Close()
			return err
		}
		if !ok {
			_ = f.Close()
			continue
		}
		h.rs = append(h.rs, r)
	}
	heap.Init(h)
	for h.Len() > 0 {
		r := h.rs[0]
		if err := fn(r.line); err != nil {
			return err
		}
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			_ = r.f.Close()
			heap.Pop(h)
		}
	}
	return nil
}

// runReader reads one run's lines.
type runReader struct {
	f    *os.File
	r    *bufio.Reader
	line []byte
}

// next reads the next line; false at the end of the run.
func (r *runReader) next() (bool, error) {
	line, err := r.r.ReadBytes('\n')
	if errors.Is(err, io.EOF) && len(line) == 0 {
		return false, nil
	}
	if err != nil {
		// Runs are written whole by this package: an unterminated line is
		// a run file damaged under it.
		return false, fmt.Errorf("extsort: read run %s: %w", r.f.Name(), err)
	}
	r.line = line[:len(line)-1]
	return true, nil
}

// runHeap orders run readers by their current line.
type runHeap struct{ rs []*runReader }

func (h *runHeap) Len() int           { return len(h.rs) }
func (h *runHeap) Less(i, j int) bool { return bytes.Compare(h.rs[i].line, h.rs[j].line) < 0 }
func (h *runHeap) Swap(i, j int)      { h.rs[i], h.rs[j] = h.rs[j], h.rs[i] }
func (h *runHeap) Push(x any)         { h.rs = append(h.rs, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := h.rs
	r := old[len(old)-1]
	h.rs = old[:len(old)-1]
	return r
}
