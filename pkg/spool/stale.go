package spool

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// filePrefix names the temporary files of spilled Buffers.
const filePrefix = "trawler-spool-"

// RemoveStale removes from dir (not its subdirectories) the files a
// process that died there left behind: spilled Buffers' files, and files
// whose names start with one of prefixes (another library's spill files,
// such as gowarc's record buffers). A Buffer removes its file on Close, so
// these are only ever a killed process's, and a crawl killed with large
// downloads in flight leaves up to maxLengthBytes each, which nothing else
// would reclaim. Only dir's sole user may call it, before it spools
// anything: a worker or renderer holding the identity that owns dir. It
// returns how many files and bytes it removed; a file it cannot remove is
// an error, and the others are still removed.
func RemoveStale(dir string, prefixes ...string) (files int, bytes int64, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("spool: list %s: %w", dir, err)
	}
	prefixes = append(prefixes, filePrefix)
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() || !hasAnyPrefix(e.Name(), prefixes) {
			continue
		}
		info, ierr := e.Info()
		if ierr != nil {
			continue // gone meanwhile
		}
		if rerr := os.Remove(filepath.Join(dir, e.Name())); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("spool: remove stale %s: %w", e.Name(), rerr))
			continue
		}
		files++
		bytes += info.Size()
	}
	return files, bytes, errors.Join(errs...)
}

func hasAnyPrefix(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// RemoveStaleLogged is RemoveStale for a role cleaning its directory:
// what it removed, and what it could not, is logged, and nothing stops.
func RemoveStaleLogged(dir string, log *slog.Logger, prefixes ...string) {
	n, size, err := RemoveStale(dir, prefixes...)
	if n > 0 {
		log.Warn("removed spool files left by a killed process", "dir", dir, "files", n, "bytes", size)
	}
	if err != nil {
		log.Warn("stale spool files not removed", "dir", dir, "err", err)
	}
}
