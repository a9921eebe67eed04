package metawarc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// StagingDir is the directory under the WARC directory where metadata
// WARCs are written before they get their final name. Its name starts with
// a dot and it holds no "*.warc.gz" at the WARC directory's level, so
// movers and RecoverOpen never see a file in it.
const StagingDir = ".metadata-staging"

// Item is one record of a metadata WARC.
type Item struct {
	// URI is the record's metadata:// URI (see URI).
	URI string
	// ContentType is the block's media type.
	ContentType string
	Block       []byte
	// File, when set, is a file whose content is the block (Block then
	// empty): a block staged on disk because it may not fit in memory
	// (a streaming launch's crawl.log and CDX).
	File string
}

// Config says where and how metadata WARCs are written.
type Config struct {
	// Dir is the WARC directory the finished files go to.
	Dir string
	// Prefix starts file names; NAS-like, e.g. "BL-NPLD-METADATA".
	Prefix string
	// Hostname is the {host} part of file names and goes into warcinfo.
	Hostname string
	// CrawlName, Operator, Software, RobotsPolicy and UserAgent go into
	// warcinfo, as in the content WARCs.
	CrawlName, Operator, Software, RobotsPolicy, UserAgent string
	// Version is the WARC version (warcwriter.Version10 or 11).
	Version string
}

// Name is the deterministic file name of the metadata WARC of a launch of
// source at launch time t: {prefix}-{id}-{yyyyMMddHHmmss000}-00000-{host}.warc.gz,
// where id names the source (tid<N> for a W3ACT target, else a hash of
// the tag). Writing the same launch twice aims at the same name, which is
// what makes a retry after a crash find the finished file.
func (c Config) Name(source string, t time.Time) string {
	return fmt.Sprintf("%s-%s-%s000-00000-%s.warc.gz", c.Prefix, SourceID(source), t.UTC().Format("20060102150405"), c.Hostname)
}

// SourceID is a file-name-safe id of a source tag: "tid57875" for
// "tid:57875:https://…", else "src" and 8 hex digits of its FNV-1a hash.
func SourceID(source string) string {
	if rest, ok := strings.CutPrefix(source, "tid:"); ok {
		id, _, _ := strings.Cut(rest, ":")
		if id != "" && strings.Trim(id, "0123456789") == "" {
			return "tid" + id
		}
	}
	h := uint32(2166136261)
	for i := 0; i < len(source); i++ {
		h ^= uint32(source[i])
		h *= 16777619
	}
	return fmt.Sprintf("src%08x", h)
}

// Recover removes what a crash left in dir's staging directory: files
// being written, and files closed but not yet renamed (their launch is
// not marked done, so it is written again). Call it before writing.
func Recover(dir string, log *slog.Logger) error {
	staging := filepath.Join(dir, StagingDir)
	entries, err := os.ReadDir(staging)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("metadata warc recover: %w", err)
	}
	for _, e := range entries {
		if log != nil {
			log.Info("removing unfinished metadata WARC", "path", filepath.Join(staging, e.Name()))
		}
		if err := os.RemoveAll(filepath.Join(staging, e.Name())); err != nil {
			return fmt.Errorf("metadata warc recover: %w", err)
		}
	}
	return nil
}

// Result is a written (or found) metadata WARC.
type Result struct {
	warcwriter.ClosedFile
	// Existed: the file was there already (a retry after a crash that
	// followed the rename); nothing was written.
	Existed bool
}

// Write writes items as resource records of one WARC named name, dated
// date, into the staging directory, then renames it into Config.Dir. If
// the final file exists already it is kept and reported with Existed.
func Write(ctx context.Context, cfg Config, name string, date time.Time, items []Item) (Result, error) {
	final := filepath.Join(cfg.Dir, name)
	if fi, err := os.Stat(final); err == nil {
		return Result{ClosedFile: warcwriter.ClosedFile{Name: name, Path: final, Size: fi.Size(), Closed: fi.ModTime()}, Existed: true}, nil
	}
	stage := filepath.Join(cfg.Dir, StagingDir, strings.TrimSuffix(name, ".warc.gz"))
	if err := os.RemoveAll(stage); err != nil {
		return Result{}, fmt.Errorf("metadata warc %s: clear staging: %w", name, err)
	}
	var closed []warcwriter.ClosedFile
	// One file under its final name, however large: the launch's
	// provenance is not split, and its warcinfo names the file it is in.
	w, err := warcwriter.New(warcwriter.Config{Dir: stage, Prefix: cfg.Prefix, Name: name, Hostname: cfg.Hostname,
		CrawlName: cfg.CrawlName, Operator: cfg.Operator, Software: cfg.Software, Version: cfg.Version,
		RobotsPolicy: cfg.RobotsPolicy, UserAgent: cfg.UserAgent},
		warcwriter.WithOnClose(func(f warcwriter.ClosedFile) { closed = append(closed, f) }),
		warcwriter.WithClock(func() time.Time { return date }))
	if err != nil {
		return Result{}, fmt.Errorf("metadata warc %s: %w", name, err)
	}
	for _, it := range items {
		if err := writeItem(ctx, w, it, date); err != nil {
			_ = w.Close()
			_ = os.RemoveAll(stage)
			return Result{}, fmt.Errorf("metadata warc %s: %w", name, err)
		}
	}
	if err := w.Close(); err != nil {
		_ = os.RemoveAll(stage)
		return Result{}, fmt.Errorf("metadata warc %s: %w", name, err)
	}
	if len(closed) != 1 {
		_ = os.RemoveAll(stage)
		return Result{}, fmt.Errorf("metadata warc %s: wrote %d files, want 1", name, len(closed))
	}
	cf := closed[0]
	if err := os.Rename(cf.Path, final); err != nil {
		return Result{}, fmt.Errorf("metadata warc %s: %w", name, err)
	}
	if err := syncDir(cfg.Dir); err != nil {
		return Result{}, fmt.Errorf("metadata warc %s: %w", name, err)
	}
	_ = os.RemoveAll(stage)
	cf.Name, cf.Path = name, final
	return Result{ClosedFile: cf}, nil
}

// writeItem writes one item, its block from memory or from its file.
func writeItem(ctx context.Context, w *warcwriter.Writer, it Item, date time.Time) error {
	r := warcwriter.Resource{URL: it.URI, Date: date, ContentType: it.ContentType, Block: it.Block}
	if it.File == "" {
		_, err := w.WriteResource(ctx, r)
		return err
	}
	f, err := os.Open(it.File)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	_, err = w.WriteResourceFrom(ctx, r, f, fi.Size())
	return err
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	return d.Sync()
}
