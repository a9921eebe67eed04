package scope

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// watchedSet is a SURT-prefix file that is polled and reloaded while the
// crawl runs (UKWA's WatchedFileSurtPrefixedDecideRule). A reload that
// fails to parse keeps the previous set and logs the file, line and
// reason; the file is tried again when it next changes.
type watchedSet struct {
	path string
	conv surtConv
	set  atomic.Pointer[PrefixSet]

	mu   sync.Mutex // serialises check; guards last
	last fileStamp
}

// fileStamp is what the poll compares: a change of either means reload.
type fileStamp struct {
	mod  time.Time
	size int64
}

func stampOf(fi os.FileInfo) fileStamp { return fileStamp{mod: fi.ModTime(), size: fi.Size()} }

// newWatchedSet loads the file; at start-up a missing or bad file is an
// error, since a crawl with half its scope is worse than none.
func newWatchedSet(path string, conv surtConv) (*watchedSet, error) {
	w := &watchedSet{path: path, conv: conv}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("surt file: %w", err)
	}
	set, err := w.read()
	if err != nil {
		return nil, err
	}
	w.set.Store(set)
	w.last = stampOf(fi)
	return w, nil
}

func (w *watchedSet) load() *PrefixSet { return w.set.Load() }

func (w *watchedSet) read() (*PrefixSet, error) {
	b, err := os.ReadFile(w.path)
	if err != nil {
		return nil, fmt.Errorf("surt file: %w", err)
	}
	prefixes, err := parsePrefixBytes(b, w.path)
	if err != nil {
		return nil, err
	}
	return NewPrefixSet(w.conv.apply(prefixes)), nil
}

// reloadOutcome is what one poll did, for logs and metrics.
type reloadOutcome string

const (
	reloadUnchanged reloadOutcome = ""
	reloadOK        reloadOutcome = "ok"
	reloadFailed    reloadOutcome = "error"
	reloadSkipped   reloadOutcome = "skipped"
)

// check reloads the file if its modification time or size changed.
//
// An empty (zero-byte) file is not applied: it is most often a file caught
// between truncation and rewrite, and applying it would briefly drop the
// whole scope. A file holding only comments does empty the set.
func (w *watchedSet) check(logger *slog.Logger) reloadOutcome {
	w.mu.Lock()
	defer w.mu.Unlock()
	fi, err := os.Stat(w.path)
	if err != nil {
		if w.last != (fileStamp{}) {
			logger.Error("scope: surt file unreadable; keeping previous prefixes", "file", w.path, "err", err)
			w.last = fileStamp{}
			return reloadFailed
		}
		return reloadUnchanged
	}
	st := stampOf(fi)
	if st == w.last {
		return reloadUnchanged
	}
	if st.size == 0 {
		logger.Warn("scope: surt file is empty; keeping previous prefixes", "file", w.path)
		w.last = st
		return reloadSkipped
	}
	set, err := w.read()
	if err != nil {
		w.last = st // report once per change, not once per poll
		var le *LineError
		if errors.As(err, &le) {
			logger.Error("scope: surt file reload failed; keeping previous prefixes",
				"file", le.Source, "line", le.Line, "reason", le.Reason, "text", le.Text)
		} else {
			logger.Error("scope: surt file reload failed; keeping previous prefixes", "file", w.path, "err", err)
		}
		return reloadFailed
	}
	// A file that changed while it was read may be half written: apply
	// nothing and read it again at the next poll. (Replacing the file by
	// rename avoids the window altogether.)
	if after, err := os.Stat(w.path); err != nil || stampOf(after) != st {
		return reloadUnchanged
	}
	w.last = st
	w.set.Store(set)
	logger.Info("scope: surt file reloaded", "file", w.path, "prefixes", set.Len())
	return reloadOK
}
