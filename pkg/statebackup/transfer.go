package statebackup

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/rdbsync"
)

// cdxDir is where the checkpoint goes in a backup (and, relative to the
// data directory, where a restore puts it: the cdxwriter's index dir).
const cdxDir = "cdx/index"

// cdxTransfer is a checkpoint whose files are still being received.
type cdxTransfer struct {
	resp   *http.Response
	dir    string
	counts map[string]int64
}

// startCheckpoint asks the index for a checkpoint. It returns once the
// checkpoint exists (the response headers come after it is taken); finish
// receives its files.
func startCheckpoint(ctx context.Context, o BackupOptions, out string) (*cdxTransfer, error) {
	u := strings.TrimRight(o.CDXURL, "/") + "/api/checkpoint"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return nil, fmt.Errorf("backup: cdx checkpoint: %w", err)
	}
	if o.CDXToken != "" {
		req.Header.Set("Authorization", "Bearer "+o.CDXToken)
	}
	client := o.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("backup: cdx checkpoint: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		_ = resp.Body.Close()
		return nil, fmt.Errorf("backup: cdx checkpoint: POST %s: %s: %s", u, resp.Status, strings.TrimSpace(string(b)))
	}
	counts := map[string]int64{}
	for kv := range strings.SplitSeq(resp.Header.Get(cdxindex.CheckpointHeader), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			counts[k], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return &cdxTransfer{resp: resp, dir: filepath.Join(out, filepath.FromSlash(cdxDir)), counts: counts}, nil
}

// finish writes the checkpoint's files. A stream cut short (no tar end)
// is an error.
func (t *cdxTransfer) finish() (*CDXCheckpoint, error) {
	defer t.abort()
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	tr := tar.NewReader(t.resp.Body)
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("backup: cdx checkpoint after %d files: %w", n, err)
		}
		clean := path.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || clean != h.Name || strings.HasPrefix(clean, "../") || path.IsAbs(clean) {
			return nil, fmt.Errorf("backup: cdx checkpoint: unexpected entry %q", h.Name)
		}
		if err := writeFile(filepath.Join(t.dir, filepath.FromSlash(clean)), tr, h.Size); err != nil {
			return nil, fmt.Errorf("backup: cdx checkpoint %s: %w", h.Name, err)
		}
		n++
	}
	if n == 0 {
		return nil, errors.New("backup: cdx checkpoint: no files received")
	}
	return &CDXCheckpoint{Dir: cdxDir, Counts: t.counts}, nil
}

// abort releases the response.
func (t *cdxTransfer) abort() { _ = t.resp.Body.Close() }

// writeFile writes exactly size bytes from r to a new file, synced.
func writeFile(name string, r io.Reader, size int64) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, r)
	if err == nil && n != size {
		err = fmt.Errorf("%d of %d bytes", n, size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// snapshots are the Redis snapshots in progress, one per master.
type snapshots struct {
	forked []chan struct{}
	done   chan snapResult
	// early are results received while waiting for the forks.
	early []snapResult
	n     int
}

type snapResult struct {
	i    int
	snap RedisSnapshot
	err  error
}

// startSnapshots starts one rdbsync.Fetch per master into
// redis/redis-<i>.rdb.
func startSnapshots(ctx context.Context, masters []rdbsync.Options, out string) *snapshots {
	s := &snapshots{done: make(chan snapResult, len(masters)), n: len(masters)}
	for i, mo := range masters {
		forked := make(chan struct{})
		s.forked = append(s.forked, forked)
		go func() {
			rel := fmt.Sprintf("redis/redis-%d.rdb", i)
			snap, err := fetchRDB(ctx, mo, filepath.Join(out, filepath.FromSlash(rel)), forked)
			snap.File = rel
			s.done <- snapResult{i: i, snap: snap, err: err}
		}()
	}
	return s
}

// waitForked returns once every master has forked (answered FULLRESYNC),
// or with the first error.
func (s *snapshots) waitForked(ctx context.Context) error {
	for _, f := range s.forked {
		for forked := false; !forked; {
			select {
			case <-f:
				forked = true
			case r := <-s.done:
				if r.err != nil {
					return fmt.Errorf("backup: %w", r.err)
				}
				s.early = append(s.early, r) // a small snapshot already whole
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// wait collects every snapshot.
func (s *snapshots) wait() ([]RedisSnapshot, error) {
	out := make([]RedisSnapshot, s.n)
	var errs []error
	results := s.early
	for range s.n - len(s.early) {
		results = append(results, <-s.done)
	}
	for _, r := range results {
		out[r.i] = r.snap
		if r.err != nil {
			errs = append(errs, fmt.Errorf("backup: %w", r.err))
		}
	}
	return out, errors.Join(errs...)
}

// fetchRDB writes one master's snapshot to a new file, synced; forked is
// closed once the master has forked.
func fetchRDB(ctx context.Context, mo rdbsync.Options, name string, forked chan struct{}) (RedisSnapshot, error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return RedisSnapshot{}, err
	}
	mo.OnFork = func() { close(forked) }
	info, err := rdbsync.Fetch(ctx, mo, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return RedisSnapshot{Addr: info.Addr, ReplID: info.ReplID, Offset: info.Offset, RDBVersion: info.RDBVersion,
		Diskless: info.Diskless}, err
}
