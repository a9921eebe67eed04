package cdxindex

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// CheckpointHeader is the response header of the checkpoint API that
// carries the entry count of each collection in the checkpoint, as
// "name=count" pairs joined by commas.
const CheckpointHeader = "X-Trawler-Cdx-Counts"

// Checkpoint writes a consistent copy of the index to dir, which must not
// exist (Pebble's checkpoint: tables are hard-linked where the file system
// allows, so it is cheap and can be taken while the index is written to).
// Writes are held for its duration, so the returned entry counts are those
// of the copy.
func (ix *Index) Checkpoint(dir string) (map[string]int64, error) {
	if err := ix.acquire(); err != nil {
		return nil, err
	}
	defer ix.closeMu.RUnlock()
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if err := ix.db.Checkpoint(dir, pebble.WithFlushedWAL()); err != nil {
		return nil, fmt.Errorf("cdx index checkpoint to %s: %w", dir, err)
	}
	ix.countMu.Lock()
	defer ix.countMu.Unlock()
	counts := make(map[string]int64, len(ix.counts))
	for c, n := range ix.counts {
		counts[c] = n
	}
	return counts, nil
}

// Each calls fn with every entry of collection, in key order (URL key, then
// time). It reads a Pebble snapshot, so writes meanwhile are not seen; an
// error from fn stops it and is returned.
func (ix *Index) Each(ctx context.Context, collection string, fn func(cdx.Line) error) error {
	if err := ix.acquire(); err != nil {
		return err
	}
	defer ix.closeMu.RUnlock()
	cp := collectionPrefix(collection)
	s, err := ix.newScan(cp, cp, prefixEnd(cp), false, nil, 0)
	if err != nil {
		return fmt.Errorf("cdx index %s: %w", collection, err)
	}
	defer s.close()
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		c, ok := s.next()
		if !ok {
			break
		}
		if err := fn(c.line()); err != nil {
			return err
		}
	}
	if err := s.err(); err != nil {
		return fmt.Errorf("cdx index %s: %w", collection, err)
	}
	return nil
}

// line is the capture as a cdx.Line, absent fields empty.
func (c *capture) line() cdx.Line {
	undash := func(s string) string {
		if s == "-" {
			return ""
		}
		return s
	}
	l := cdx.Line{URLKey: c.urlkey, Timestamp: strconv.FormatInt(c.timestamp, 10), Original: undash(c.original),
		Mimetype: undash(c.mimetype), Digest: encodeBase32(c.digest), Redirect: undash(c.redirect),
		RobotFlags: undash(c.robotflags), Length: c.length, Offset: c.offset, Filename: undash(c.filename)}
	if c.status > 0 {
		l.Status = strconv.FormatInt(c.status, 10)
	}
	return l
}

// serveCheckpoint answers POST /api/checkpoint with a tar stream of a fresh
// checkpoint of the index (regular files only, names relative to the
// checkpoint), taken beside the index directory so that tables are hard
// links, and removed once sent. CheckpointHeader carries the counts.
func (h *handler) serveCheckpoint(w http.ResponseWriter, r *http.Request) {
	if h.opts.ReadOnly || h.ix.dir == "" {
		plain(w, http.StatusForbidden, "This index does not serve checkpoints.\n")
		return
	}
	dir := fmt.Sprintf("%s.checkpoint-%d", strings.TrimRight(h.ix.dir, "/"), time.Now().UnixNano())
	defer func() { _ = os.RemoveAll(dir) }()
	counts, err := h.ix.Checkpoint(dir)
	if err != nil {
		h.ix.log.Error("checkpoint", "err", err)
		plain(w, http.StatusInternalServerError, err.Error()+"\n")
		return
	}
	names := make([]string, 0, len(counts))
	for c, n := range counts {
		names = append(names, c+"="+strconv.FormatInt(n, 10))
	}
	sort.Strings(names)
	w.Header().Set(CheckpointHeader, strings.Join(names, ","))
	w.Header().Set("Content-Type", "application/x-tar")
	tw := tar.NewWriter(w)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		return tarFile(tw, path, rel)
	})
	if err == nil {
		err = tw.Close()
	}
	if err != nil {
		// The status is sent: cutting the stream short (no tar end
		// blocks) is how the client learns of it.
		h.ix.log.Error("send checkpoint", "err", err)
		panic(http.ErrAbortHandler)
	}
}

// tarFile appends one file.
func tarFile(tw *tar.Writer, path, name string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(name), Mode: 0o644, Size: st.Size(),
		ModTime: st.ModTime(), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}
