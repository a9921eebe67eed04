package crawllog

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ErrClosed is returned by Write and Sync after Close.
var ErrClosed = errors.New("crawl log closed")

// DefaultName is the crawl log's file name when Options.Name is empty.
const DefaultName = "crawl.log"

// syncInterval is how often lines written since the last sync are forced
// to disk. Each line is in the file (the kernel's page cache) as soon as
// Write returns, which a killed process cannot lose; the sync bounds what
// a machine crash or power cut can.
const syncInterval = time.Second

// rotationLayout is the suffix of a rotated file: the rotation time.
const rotationLayout = "20060102150405"

// Options configures a Writer.
type Options struct {
	// Dir is the directory of the log, normally the WARC directory; it is
	// created if missing.
	Dir string
	// Name is the file name; default DefaultName ("crawl.log").
	Name string
	// Now is the clock deciding rotation; default time.Now.
	Now func() time.Time
	// Extra appends each entry's JSON extra info as a 13th column ("{}" when
	// an entry has none), like Heritrix's logExtraInfo. When false, Extra is
	// dropped.
	Extra bool
	// Logger receives rotation notices and background sync errors;
	// default discards.
	Logger *slog.Logger
	// OnRotate, if set, is called with each file rotation renamed aside
	// (at midnight, or a leftover of an earlier day at Open): the file is
	// complete and never written again, so it can be shipped like a
	// closed WARC. Calls come one at a time from a goroutine of the
	// Writer, never under its lock, so a slow OnRotate holds up no line;
	// Close waits for the calls of every rotation before it.
	OnRotate func(Rotated)
}

// Writer appends crawl.log lines to Dir/Name. It is safe for concurrent use.
// Each line goes to the file with one write(2) before Write returns, so a
// killed process loses no line it was told to write; lines written are
// synced to disk once a second, at rotation and on Close. At 00:00 UTC the
// file is renamed Name.yyyyMMdd000000 (the rotation time) and a new one is
// started.
type Writer struct {
	opts Options
	path string

	mu      sync.Mutex
	file    *os.File
	line    []byte
	rotate  time.Time // next rotation instant
	dirty   bool      // lines written since the last sync
	closed  bool
	lastErr error // last background sync error, reported once
	// emptyExtra is what Heritrix prints for an empty extra-info object.
	emptyExtra []byte

	stop chan struct{}
	done chan struct{}

	rotated rotatedQueue
}

// Open opens (appending to) Dir/Name and starts the once-a-second syncer.
// A file left from an earlier UTC day, e.g. by a crash before midnight, is
// rotated first, named for the midnight at which it should have been.
func Open(o Options) (*Writer, error) {
	if o.Dir == "" {
		return nil, errors.New("open crawl log: Options.Dir is empty")
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if filepath.Base(o.Name) != o.Name {
		return nil, fmt.Errorf("open crawl log: name %q must be a plain file name", o.Name)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("open crawl log dir %s: %w", o.Dir, err)
	}
	w := &Writer{
		opts: o, path: filepath.Join(o.Dir, o.Name),
		stop: make(chan struct{}), done: make(chan struct{}),
		emptyExtra: []byte("{}"),
	}
	w.rotated.init(o.OnRotate)
	now := o.Now()
	if err := w.rotateLeftover(now); err != nil {
		w.rotated.close()
		return nil, err
	}
	if err := w.openFile(now); err != nil {
		w.rotated.close()
		return nil, err
	}
	go w.syncLoop()
	return w, nil
}

// nextMidnight is the first 00:00 UTC strictly after t.
func nextMidnight(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

// rotateLeftover renames an existing non-empty log last written before
// today (UTC), so today's file holds only today's lines.
func (w *Writer) rotateLeftover(now time.Time) error {
	fi, err := os.Stat(w.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open crawl log %s: %w", w.path, err)
	}
	if fi.Size() == 0 {
		return nil
	}
	due := nextMidnight(fi.ModTime())
	if now.Before(due) {
		return nil
	}
	return w.renameRotated(due)
}

// openFile opens the log for appending and makes sure a line cut short by
// a crash does not run into the next one.
func (w *Writer) openFile(now time.Time) error {
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open crawl log %s: %w", w.path, err)
	}
	if err := terminateLastLine(f, w.path); err != nil {
		f.Close()
		return err
	}
	w.file = f
	w.rotate = nextMidnight(now)
	return nil
}

// terminateLastLine appends '\n' when the file ends inside a line.
func terminateLastLine(f *os.File, path string) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat crawl log %s: %w", path, err)
	}
	if fi.Size() == 0 {
		return nil
	}
	r, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("check crawl log %s: %w", path, err)
	}
	defer r.Close()
	var last [1]byte
	if _, err := r.ReadAt(last[:], fi.Size()-1); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("check crawl log %s: %w", path, err)
	}
	if last[0] == '\n' {
		return nil
	}
	if _, err := f.Write([]byte{'\n'}); err != nil {
		return fmt.Errorf("repair crawl log %s: %w", path, err)
	}
	return nil
}

// renameRotated moves the log aside as Name.<at>; if that name is taken
// (a restart within the same second), a counter is added.
func (w *Writer) renameRotated(at time.Time) error {
	base := w.path + "." + at.UTC().Format(rotationLayout)
	target := base
	for i := 1; ; i++ {
		if _, err := os.Lstat(target); errors.Is(err, os.ErrNotExist) {
			break
		}
		target = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(w.path, target); err != nil {
		return fmt.Errorf("rotate crawl log %s: %w", w.path, err)
	}
	w.opts.Logger.Info("rotated crawl log", "from", w.path, "to", target)
	r := Rotated{Path: target, At: at.UTC()}
	if fi, err := os.Stat(target); err == nil {
		r.Size = fi.Size()
	}
	w.rotated.add(r)
	return nil
}

// Write appends one line with a single write(2) on the O_APPEND file,
// rotating first when midnight UTC has passed. The line is in the file when
// Write returns; it is on disk after the next sync.
func (w *Writer) Write(e Entry) error {
	if !w.opts.Extra {
		e.Extra = nil
	} else if len(e.Extra) == 0 {
		e.Extra = w.emptyExtra
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if err := w.maybeRotate(); err != nil {
		return err
	}
	w.line = AppendLine(w.line[:0], e)
	// os.File.Write loops until the whole line is written; a line is far
	// below any limit of one write(2), so that is one system call.
	if _, err := w.file.Write(w.line); err != nil {
		return fmt.Errorf("write crawl log %s: %w", w.path, err)
	}
	w.dirty = true
	return nil
}

// maybeRotate closes, renames and reopens the file once the clock reaches
// the next midnight. Callers hold mu.
func (w *Writer) maybeRotate() error {
	now := w.opts.Now()
	if now.Before(w.rotate) {
		return nil
	}
	at := w.rotate
	if err := w.closeFile(); err != nil {
		// The lines are in the file even if the sync failed; go on
		// rotating rather than stop logging.
		w.opts.Logger.Error("crawl log close at rotation", "err", err)
	}
	if err := w.renameRotated(at); err != nil {
		// Keep logging to the old file rather than losing lines.
		w.opts.Logger.Error("crawl log rotation failed", "err", err)
	}
	return w.openFile(now)
}

// closeFile syncs and closes the file. Callers hold mu.
func (w *Writer) closeFile() error {
	if err := w.file.Sync(); err != nil {
		_ = w.file.Close()
		return fmt.Errorf("sync crawl log %s: %w", w.path, err)
	}
	w.dirty = false
	if err := w.file.Close(); err != nil {
		return fmt.Errorf("close crawl log %s: %w", w.path, err)
	}
	return nil
}

// Sync forces the lines written so far to disk (and rotates if it is due).
// Writers are not held up while the disk works: only the rotation check
// runs under the lock.
func (w *Writer) Sync() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if err := w.maybeRotate(); err != nil {
		w.mu.Unlock()
		return err
	}
	f, dirty := w.file, w.dirty
	w.dirty = false
	w.mu.Unlock()
	if !dirty {
		return nil
	}
	// A rotation or Close may close f meanwhile; os.File keeps the
	// descriptor open until this call returns, and closeFile syncs anyway.
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrClosed) {
		w.mu.Lock()
		w.dirty = true // try again next time
		w.mu.Unlock()
		return fmt.Errorf("sync crawl log %s: %w", w.path, err)
	}
	return nil
}

// syncLoop syncs once a second and rotates at midnight even when no line
// arrives.
func (w *Writer) syncLoop() {
	defer close(w.done)
	t := time.NewTicker(syncInterval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			if err := w.Sync(); err != nil && !errors.Is(err, ErrClosed) {
				w.logSyncError(err)
			}
		}
	}
}

// logSyncError logs a background failure once per distinct error, so a
// full disk does not flood the log every second.
func (w *Writer) logSyncError(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastErr != nil && w.lastErr.Error() == err.Error() {
		return
	}
	w.lastErr = err
	w.opts.Logger.Error("crawl log sync failed", "err", err)
}

// Close stops the syncer, syncs and closes the file. Calling it again
// returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	w.mu.Lock()
	err := w.closeFile()
	w.mu.Unlock()
	w.rotated.close()
	return err
}
