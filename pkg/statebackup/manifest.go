// Package statebackup backs up and restores a crawl's state while it runs:
// the Redis data (frontier, recently-crawled DB, launcher ledger, seeds and
// sheets), taken as RDB snapshots over the replication protocol
// (pkg/rdbsync), and the CDX index, taken as a Pebble checkpoint through
// the index's HTTP API; and it rebuilds the recently-crawled DB from a CDX
// index or from WARC files when Redis is lost (docs/state.md).
//
// A backup is a directory: manifest.json (what, when, versions, and the
// size and SHA-256 of every file), redis/redis-<i>.rdb per master and
// cdx/index/ (the checkpoint). It is written under <dir>.partial and
// renamed when complete, so a directory without that suffix is whole.
package statebackup

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// ManifestName is the manifest's file name in a backup directory.
const ManifestName = "manifest.json"

// FormatVersion is the backup layout this package writes and reads.
const FormatVersion = 1

// ErrCorrupt wraps errors about a backup that does not match its manifest.
var ErrCorrupt = errors.New("backup does not match its manifest")

// Manifest describes one backup.
type Manifest struct {
	Format         int       `json:"format"`
	Created        time.Time `json:"created"`
	TookSeconds    float64   `json:"took_seconds"`
	TrawlerVersion string    `json:"trawler_version"`
	// Frontiers are the frontiers (e.g. fc-npld) whose claims the backup
	// paused; Paused the ones it paused itself (an operator's pause is
	// kept), which a restore resumes.
	Frontiers []string `json:"frontiers"`
	Paused    []string `json:"paused,omitempty"`
	// Quiesce is the state the snapshots were taken in.
	Quiesce Quiesce `json:"quiesce"`
	// Redis has one snapshot per master.
	Redis []RedisSnapshot `json:"redis"`
	// CDX is the index checkpoint; nil when the backup has none.
	CDX *CDXCheckpoint `json:"cdx,omitempty"`
	// Files lists every file of the backup but the manifest.
	Files []File `json:"files"`
}

// Quiesce records how still the crawl was at the snapshots.
type Quiesce struct {
	// Drained: nothing was in flight and every consumer group had caught
	// up; otherwise the drain timed out and InFlight URIs are crawled
	// again after a restore.
	Drained     bool    `json:"drained"`
	DrainSecs   float64 `json:"drain_seconds"`
	PausedSecs  float64 `json:"paused_seconds"`
	InFlight    int64   `json:"in_flight"`
	Queued      int64   `json:"queued"`
	ConsumerLag int64   `json:"consumer_lag"`
}

// RedisSnapshot is one master's RDB.
type RedisSnapshot struct {
	Addr         string `json:"addr"`
	File         string `json:"file"`
	ReplID       string `json:"replid"`
	Offset       int64  `json:"offset"`
	RDBVersion   int    `json:"rdb_version"`
	RedisVersion string `json:"redis_version,omitempty"`
	Diskless     bool   `json:"diskless"`
}

// CDXCheckpoint is the index checkpoint.
type CDXCheckpoint struct {
	Dir    string           `json:"dir"`
	Counts map[string]int64 `json:"counts"`
}

// File is one file of the backup, path relative to the backup directory.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// sumFiles lists every regular file under dir but the manifest, with its
// size and SHA-256.
func sumFiles(dir string) ([]File, error) {
	var out []File
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if rel == ManifestName {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", rel)
		}
		f, err := fileSum(path)
		if err != nil {
			return err
		}
		f.Path = filepath.ToSlash(rel)
		out = append(out, f)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, err
}

// fileSum reads one file's size and SHA-256.
func fileSum(path string) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return File{}, fmt.Errorf("read %s: %w", path, err)
	}
	return File{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// writeManifest sums the files of dir and writes the manifest, synced.
func writeManifest(dir string, m *Manifest) error {
	files, err := sumFiles(dir)
	if err != nil {
		return fmt.Errorf("backup manifest: %w", err)
	}
	m.Files = files
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeSynced(filepath.Join(dir, ManifestName), b)
}

// writeSynced writes a file and fsyncs it.
func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return f.Close()
}

// ReadManifest reads a backup's manifest.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestName)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("backup %s: %w (an unfinished backup is left as <dir>.partial)", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	if m.Format != FormatVersion {
		return nil, fmt.Errorf("%s: backup format %d, this trawler reads %d", path, m.Format, FormatVersion)
	}
	return &m, nil
}

// Verify checks every file of the backup against the manifest: present,
// of the recorded size and SHA-256, and no file the manifest does not
// list. Errors name the file and the reason and wrap ErrCorrupt.
func Verify(dir string, m *Manifest) error {
	have, err := sumFiles(dir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	got := map[string]File{}
	for _, f := range have {
		got[f.Path] = f
	}
	var errs []error
	for _, want := range m.Files {
		f, ok := got[want.Path]
		delete(got, want.Path)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%w: %s: missing", ErrCorrupt, want.Path))
		case f.Size < want.Size:
			errs = append(errs, fmt.Errorf("%w: %s: %d bytes, the manifest says %d (truncated)", ErrCorrupt, want.Path, f.Size, want.Size))
		case f.Size != want.Size:
			errs = append(errs, fmt.Errorf("%w: %s: %d bytes, the manifest says %d", ErrCorrupt, want.Path, f.Size, want.Size))
		case f.SHA256 != want.SHA256:
			errs = append(errs, fmt.Errorf("%w: %s: sha256 %s, the manifest says %s (altered)", ErrCorrupt, want.Path, f.SHA256, want.SHA256))
		}
	}
	for p := range got {
		errs = append(errs, fmt.Errorf("%w: %s: not in the manifest", ErrCorrupt, p))
	}
	return errors.Join(errs...)
}
