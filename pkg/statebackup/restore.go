package statebackup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/rdbsync"
)

// ErrNotEmpty is returned when the restore target holds anything.
var ErrNotEmpty = errors.New("restore target is not empty")

// RestoredName is the file a restore leaves in the data directory: the
// backup's manifest and when it was restored, for provenance.
const RestoredName = "restored-from.json"

// RestoreOptions configures Restore.
type RestoreOptions struct {
	// From is the backup directory.
	From string
	// DataDir is the standalone data directory to create. It must not
	// exist or be empty.
	DataDir string
	// RedisServer is the redis-server binary that loads the snapshot and
	// writes it as the append-only file the embedded server reads; empty:
	// redis-server from PATH.
	RedisServer string
	Logger      *slog.Logger
}

// RestoreReport says what a restore did.
type RestoreReport struct {
	Manifest *Manifest
	// Keys is the number of keys the snapshot held.
	Keys int64
	// Released is the number of leased URIs put back in their queues:
	// the URIs in flight at the backup, which are crawled again.
	Released int64
	// CDXCounts are the restored index's entry counts.
	CDXCounts map[string]int64
	Took      time.Duration
}

// Restore makes a standalone data directory from a backup: the manifest and
// every checksum are verified first, the RDB is loaded by a private
// redis-server and written as the append-only file the embedded server
// starts from (redis/), and the checkpoint becomes the cdxwriter's index
// (cdx/index/). The work happens in <DataDir>.restoring, renamed to
// DataDir only when all of it succeeded, so a failed restore leaves no
// directory that looks like a data directory.
func Restore(ctx context.Context, o RestoreOptions) (*RestoreReport, error) {
	start := time.Now()
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := ReadManifest(o.From)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	if err := Verify(o.From, m); err != nil {
		return nil, fmt.Errorf("restore from %s: %w", o.From, err)
	}
	if len(m.Redis) != 1 {
		return nil, fmt.Errorf("restore: the backup holds %d Redis masters (a Redis Cluster); a standalone data directory takes one: restore it into a running Redis Cluster instead (--redis, RestoreTo; docs/state.md)", len(m.Redis))
	}
	if err := checkEmpty(o.DataDir); err != nil {
		return nil, err
	}
	stage := filepath.Clean(o.DataDir) + ".restoring"
	if err := os.RemoveAll(stage); err != nil {
		return nil, fmt.Errorf("restore: remove the unfinished %s: %w", stage, err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(stage)
		}
	}()
	rep := &RestoreReport{Manifest: m}
	rdbPath := filepath.Join(o.From, filepath.FromSlash(m.Redis[0].File))
	if err := checkRDB(rdbPath); err != nil {
		return nil, err
	}
	redisDir := filepath.Join(stage, "redis")
	if err := copyFile(rdbPath, filepath.Join(redisDir, "dump.rdb")); err != nil {
		return nil, fmt.Errorf("restore %s: %w", m.Redis[0].File, err)
	}
	log.Info("loading the Redis snapshot", "file", m.Redis[0].File)
	if rep.Keys, rep.Released, err = loadRedis(ctx, o.RedisServer, redisDir, m); err != nil {
		return nil, fmt.Errorf("restore %s: %w", m.Redis[0].File, err)
	}
	if m.CDX != nil {
		if rep.CDXCounts, err = restoreIndex(o.From, stage, m); err != nil {
			return nil, err
		}
	}
	b, _ := json.MarshalIndent(struct {
		Restored time.Time `json:"restored"`
		From     string    `json:"from"`
		Manifest *Manifest `json:"manifest"`
	}{time.Now().UTC(), o.From, m}, "", "  ")
	if err := writeSynced(filepath.Join(stage, RestoredName), b); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	if err := os.Remove(o.DataDir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("restore: %w", err)
	}
	if err := os.Rename(stage, o.DataDir); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	ok = true
	rep.Took = time.Since(start)
	return rep, nil
}

// checkEmpty refuses a target that holds anything.
func checkEmpty(dir string) error {
	if dir == "" {
		return errors.New("restore: no data directory given")
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("restore into %s: %w (it holds %s and %d more); restore into a new directory",
			dir, ErrNotEmpty, ents[0].Name(), len(ents)-1)
	}
	return nil
}

// checkRDB checks the snapshot's structure (header, end opcode, CRC64)
// before a server is asked to load it: the manifest's checksum proves the
// file is the one backed up, this that it was whole when backed up.
func checkRDB(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer func() { _ = f.Close() }()
	if _, _, err := rdbsync.CheckFile(f); err != nil {
		return fmt.Errorf("restore %s: %w", path, err)
	}
	return nil
}

// restoreIndex copies the checkpoint to the index directory of the data
// directory being staged.
func restoreIndex(from, stage string, m *Manifest) (map[string]int64, error) {
	return copyIndex(from, filepath.Join(stage, filepath.FromSlash(cdxDir)), m)
}

// restoreIndexTo copies the checkpoint to dir (empty or missing), through
// dir.restoring, renamed to dir only when the copy checked out.
func restoreIndexTo(from, dir string, m *Manifest) (map[string]int64, error) {
	stage := filepath.Clean(dir) + ".restoring"
	if err := os.RemoveAll(stage); err != nil {
		return nil, fmt.Errorf("restore: remove the unfinished %s: %w", stage, err)
	}
	counts, err := copyIndex(from, stage, m)
	if err == nil {
		if err = os.Remove(dir); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
	}
	if err == nil {
		err = os.Rename(stage, dir)
	}
	if err != nil {
		_ = os.RemoveAll(stage)
		return nil, fmt.Errorf("restore the index into %s: %w", dir, err)
	}
	return counts, nil
}

// copyIndex copies the checkpoint to dst and opens it, checking the entry
// counts against the manifest.
func copyIndex(from, dst string, m *Manifest) (map[string]int64, error) {
	src := filepath.Join(from, filepath.FromSlash(m.CDX.Dir))
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		return copyFile(path, filepath.Join(dst, rel))
	})
	if err != nil {
		return nil, fmt.Errorf("restore %s: %w", m.CDX.Dir, err)
	}
	ix, err := cdxindex.Open(dst, cdxindex.Options{})
	if err != nil {
		return nil, fmt.Errorf("restore %s: %w", m.CDX.Dir, err)
	}
	counts := map[string]int64{}
	for _, c := range ix.Collections() {
		counts[c], _ = ix.Count(c)
	}
	if err := ix.Close(); err != nil {
		return nil, fmt.Errorf("restore %s: %w", m.CDX.Dir, err)
	}
	for c, n := range m.CDX.Counts {
		if counts[c] != n {
			return nil, fmt.Errorf("restore %s: %w: collection %s has %d entries, the manifest says %d", m.CDX.Dir, ErrCorrupt, c, counts[c], n)
		}
	}
	return counts, nil
}

// copyFile copies one file, creating its directory, synced.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	return writeFile(dst, io.Reader(in), st.Size())
}
