package cdxindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/prometheus/client_golang/prometheus"
)

// ErrClosed is returned by every method called after Close.
var ErrClosed = errors.New("cdxindex: index closed")

// ErrBadLine is wrapped by Put and Delete errors about a line that cannot be
// indexed (no URL key, a timestamp that is not up to 14 digits, a status that
// is not a number, a NUL byte). Retrying the same lines cannot help.
var ErrBadLine = errors.New("bad cdx line")

// ErrBadCollection is wrapped by errors about a collection name that is not
// [A-Za-z0-9_-]+ (OutbackCDX's rule, which keeps names safe in URL paths).
var ErrBadCollection = errors.New("invalid collection name")

var collectionName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// DefaultCacheBytes is the Pebble block cache size when Options.CacheBytes
// is zero.
const DefaultCacheBytes = 64 << 20

// memTableBytes is Pebble's memtable size: the batch of writes it flushes
// to a table at a time.
const memTableBytes = 32 << 20

// Options configures Open. The zero value is usable.
type Options struct {
	// Logger receives Pebble's log lines and the index's own; default discards.
	Logger *slog.Logger
	// Registerer, when set, gets the index metrics (trawler_cdx_*).
	Registerer prometheus.Registerer
	// CacheBytes is the Pebble block cache size; default DefaultCacheBytes.
	// Bloom filters and index blocks live there. The process uses about
	// this plus 64 MiB of memtables.
	CacheBytes int64
}

// Index is a CDX index in one Pebble database, holding any number of
// collections. Its methods are safe for concurrent use; writes (Put, Delete,
// ingest) are serialised so that entry counts stay exact, reads run in
// parallel with them and with each other.
type Index struct {
	db       *pebble.DB
	dir      string // for checkpoints beside it
	fsCloser io.Closer
	log      *slog.Logger
	metrics  *metrics

	// closeMu is held shared by every operation and exclusively by Close,
	// so that Close waits for open iterators (Pebble forbids closing under
	// them).
	closeMu sync.RWMutex
	closed  bool

	// writeMu serialises writers: a write reads whether each key exists to
	// keep the entry count exact.
	writeMu sync.Mutex
	// countMu guards counts, read by queries and metrics.
	countMu sync.Mutex
	counts  map[string]int64
}

// Open opens (creating if needed) the index in directory dir. Only one
// process may have a directory open: Pebble locks it.
func Open(dir string, opts Options) (*Index, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = DefaultCacheBytes
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("open cdx index %s: %w", dir, err)
	}
	po, fsCloser := pebbleOptions(opts)
	db, err := pebble.Open(dir, po)
	if err != nil {
		_ = fsCloser.Close()
		return nil, fmt.Errorf("open cdx index %s: %w", dir, err)
	}
	ix := &Index{db: db, dir: dir, fsCloser: fsCloser, log: opts.Logger, counts: map[string]int64{}}
	if err := ix.loadCounts(); err != nil {
		_ = ix.closeDB()
		return nil, fmt.Errorf("open cdx index %s: %w", dir, err)
	}
	ix.metrics = newMetrics(ix)
	if err := ix.metrics.register(opts.Registerer); err != nil {
		_ = ix.closeDB()
		return nil, fmt.Errorf("open cdx index %s: %w", dir, err)
	}
	for c, n := range ix.counts {
		ix.metrics.entries.WithLabelValues(c).Set(float64(n))
	}
	return ix, nil
}

// pebbleOptions tunes Pebble for this workload: bloom filters on every level
// make the existence check of each written key and exact lookups cheap.
// The disk-health-checking file system is set up here rather than by
// Pebble, which leaks its ticker goroutine when Open fails (a locked
// directory); the returned closer stops it.
func pebbleOptions(opts Options) (*pebble.Options, io.Closer) {
	log := opts.Logger
	fs, closer := vfs.WithDiskHealthChecks(vfs.Default, 5*time.Second, nil, func(info vfs.DiskSlowInfo) {
		log.Warn("cdx index disk is slow", "path", info.Path, "op", info.OpType.String(), "duration", info.Duration)
	})
	po := &pebble.Options{
		FS:     fs,
		Logger: pebbleLogger{opts.Logger},
		// Pebble charges memtables to the block cache: without room for
		// them (the active one and one being flushed) the cache holds
		// nothing and every bloom filter is read from disk.
		CacheSize:          opts.CacheBytes + 2*memTableBytes,
		FormatMajorVersion: pebble.FormatNewest,
		MemTableSize:       memTableBytes,
	}
	for i := range po.Levels {
		po.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
	}
	return po, closer
}

// closeDB closes the database, then the file system wrapper.
func (ix *Index) closeDB() error {
	err := ix.db.Close()
	if cerr := ix.fsCloser.Close(); err == nil {
		err = cerr
	}
	return err
}

// loadCounts reads the per-collection entry counts.
func (ix *Index) loadCounts() error {
	it, err := ix.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixMeta}, UpperBound: []byte{prefixCapture}})
	if err != nil {
		return fmt.Errorf("read collections: %w", err)
	}
	defer it.Close()
	for ok := it.First(); ok; ok = it.Next() {
		n, k := binary.Varint(it.Value())
		if k <= 0 {
			return fmt.Errorf("read collections: bad count for %q", it.Key()[1:])
		}
		ix.counts[string(it.Key()[1:])] = n
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("read collections: %w", err)
	}
	return nil
}

// Close flushes nothing (every write is already durable), waits for running
// queries and closes the database. Later calls return ErrClosed.
func (ix *Index) Close() error {
	ix.closeMu.Lock()
	defer ix.closeMu.Unlock()
	if ix.closed {
		return ErrClosed
	}
	ix.closed = true
	ix.metrics.unregister()
	if err := ix.closeDB(); err != nil {
		return fmt.Errorf("close cdx index: %w", err)
	}
	return nil
}

// acquire takes the shared close lock; release with ix.closeMu.RUnlock.
func (ix *Index) acquire() error {
	ix.closeMu.RLock()
	if ix.closed {
		ix.closeMu.RUnlock()
		return ErrClosed
	}
	return nil
}

// Collections returns the names of the collections, sorted.
func (ix *Index) Collections() []string {
	ix.countMu.Lock()
	defer ix.countMu.Unlock()
	out := make([]string, 0, len(ix.counts))
	for c := range ix.counts {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Count returns the number of entries in collection and whether the
// collection exists (has ever been written to).
func (ix *Index) Count(collection string) (int64, bool) {
	ix.countMu.Lock()
	defer ix.countMu.Unlock()
	n, ok := ix.counts[collection]
	return n, ok
}

// DiskBytes is the disk space the database uses (live and obsolete files).
func (ix *Index) DiskBytes() uint64 {
	if err := ix.acquire(); err != nil {
		return 0
	}
	defer ix.closeMu.RUnlock()
	return ix.db.Metrics().DiskSpaceUsage()
}

// ValidateCollection reports whether name can be a collection name,
// wrapping ErrBadCollection if not.
func ValidateCollection(name string) error {
	if !collectionName.MatchString(name) {
		return fmt.Errorf("%w: %q (want [A-Za-z0-9_-]+)", ErrBadCollection, name)
	}
	return nil
}

// pebbleLogger sends Pebble's messages to slog. Fatalf is Pebble's
// unrecoverable-corruption path: it must not return.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

func (l pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.log.Error(msg, "component", "pebble", "fatal", true)
	panic("pebble: " + msg)
}
