package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"

	"github.com/klauspost/compress/gzip"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
)

const cdxUsage = `usage: trawler cdx index [--format cdxj|cdx11] [--sort] FILE.warc.gz...
       trawler cdx load --index DIR --collection NAME [--batch N] FILE...
index writes one line per response, revisit, resource and metadata record (not
warc-fields) to standard output; the line of a 304 (server-not-modified revisit)
whose original response is among the files points at that original, for replay;
load adds WARC files, or CDX11/CDX9/CDXJ files (optionally gzipped), to an index.`

func runCDX(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	verb, rest, err := sub(args, verbs()["cdx"]...)
	if err != nil {
		fmt.Fprintln(stderr, cdxUsage)
		return err
	}
	if verb == "index" {
		return runCDXIndex(ctx, rest, stdout, stderr)
	}
	return runCDXLoad(ctx, rest, stderr)
}

// problems counts the records and files a command skipped; they make the
// exit status 1 once everything else is done.
type problems struct {
	w io.Writer
	n int
}

func (p *problems) report(err error) {
	p.n++
	fmt.Fprintf(p.w, "error: %v\n", err)
}

func (p *problems) err() error {
	if p.n == 0 {
		return nil
	}
	return fmt.Errorf("%d records or files could not be read (see above)", p.n)
}

func runCDXIndex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("cdx index", stderr)
	format := fs.String("format", "cdxj", "output format: cdxj or cdx11")
	sorted := fs.Bool("sort", false, "sort the output by URL key and time (as a CDX file for binary search), holding it in memory")
	if err := parse(fs, args); err != nil {
		return err
	}
	var formatLine func(cdx.Line) string
	switch *format {
	case "cdxj":
		formatLine = cdx.Line.CDXJ
	case "cdx11":
		formatLine = cdx.Line.CDX11
	default:
		return fmt.Errorf("%w: --format %q: want cdxj or cdx11", errUsage, *format)
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, cdxUsage)
		return fmt.Errorf("%w: no WARC files given", errUsage)
	}
	out := bufio.NewWriterSize(stdout, 256<<10)
	if *format == "cdx11" {
		fmt.Fprintln(out, cdx.Header11)
	}
	var held []string
	emit := func(l cdx.Line) error {
		if *sorted {
			held = append(held, formatLine(l))
			return nil
		}
		_, err := fmt.Fprintln(out, formatLine(l))
		return err
	}
	pr := &problems{w: stderr}
	st, err := warcindex.IndexFiles(ctx, fs.Args(), emit, warcindex.FilesOptions{OnError: pr.report})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	sort.Strings(held)
	for _, l := range held {
		fmt.Fprintln(out, l)
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	warnNotModified(stderr, st.NotModified)
	return pr.err()
}

// warnNotModified says how many 304s kept an ordinary revisit line and
// why. It is a warning, not an error: the lines are what pywb's indexer
// writes, but pywb replays such a capture as an empty 304.
func warnNotModified(w io.Writer, n warcindex.NotModified) {
	if u := n.Unresolved(); u > 0 {
		fmt.Fprintf(w, "warning: %d server-not-modified revisits (304s) keep an ordinary revisit line (mime warc/revisit), not their original's: %s\n",
			u, n.Reasons())
	}
}

func runCDXLoad(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("cdx load", stderr)
	dir := fs.String("index", "", "index directory (created if missing; must not be open in a running cdxwriter)")
	collection := fs.String("collection", "", "collection to load into, [A-Za-z0-9_-]+")
	batch := fs.Int("batch", 10000, "lines per durable write")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *dir == "" || *collection == "" || fs.NArg() == 0:
		fmt.Fprintln(stderr, cdxUsage)
		return fmt.Errorf("%w: --index, --collection and at least one file are required", errUsage)
	case *batch <= 0:
		return fmt.Errorf("%w: --batch %d: want a positive number", errUsage, *batch)
	}
	if err := cdxindex.ValidateCollection(*collection); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ix, err := cdxindex.Open(*dir, cdxindex.Options{Logger: log})
	if err != nil {
		return err
	}
	l := &loader{ix: ix, collection: *collection, batch: *batch, pr: &problems{w: stderr}, out: stderr}
	// WARC files are indexed together, as `cdx index` indexes them, so
	// that a 304 in one points at its original in another.
	var warcs []string
	for _, path := range fs.Args() {
		isWARC, err := l.file(ctx, path)
		if isWARC {
			warcs = append(warcs, path)
		}
		if err != nil {
			if ctx.Err() != nil {
				_ = ix.Close()
				return err
			}
			l.pr.report(err)
		}
	}
	if len(warcs) > 0 {
		if err := l.warcs(ctx, warcs); err != nil {
			if ctx.Err() != nil {
				_ = ix.Close()
				return err
			}
			l.pr.report(err)
		}
	}
	if err := ix.Close(); err != nil {
		return err
	}
	n, _ := ix.Count(*collection)
	fmt.Fprintf(stderr, "collection %s: %d entries\n", *collection, n)
	return l.pr.err()
}

// loader loads files into one collection.
type loader struct {
	ix         *cdxindex.Index
	collection string
	batch      int
	pr         *problems
	out        io.Writer
}

// file loads path if it holds CDX lines and reports whether it is a WARC
// file instead, left for warcs.
func (l *loader) file(ctx context.Context, path string) (isWARC bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("load: %w", err)
	}
	defer func() { _ = f.Close() }()
	if isWARC, err = warcindex.IsWARC(f); err != nil {
		return false, fmt.Errorf("load %s: %w", path, err)
	}
	if isWARC {
		return true, nil
	}
	return false, l.cdxFile(ctx, path, f)
}

// warcs indexes WARC files as one set (warcindex.IndexFiles) and puts
// their lines in batches.
func (l *loader) warcs(ctx context.Context, paths []string) error {
	lines := make([]cdx.Line, 0, l.batch)
	var added int
	flush := func() error {
		if len(lines) == 0 {
			return nil
		}
		if err := l.ix.Put(ctx, l.collection, lines); err != nil {
			return err
		}
		added += len(lines)
		lines = lines[:0]
		return nil
	}
	st, err := warcindex.IndexFiles(ctx, paths, func(ln cdx.Line) error {
		lines = append(lines, ln)
		if len(lines) >= l.batch {
			return flush()
		}
		return nil
	}, warcindex.FilesOptions{
		OnError: l.pr.report,
		OnFile: func(path string, st warcindex.Stats) {
			fmt.Fprintf(l.out, "%s: %d lines from %d records, %d records skipped\n", path, st.Indexed, st.Records, st.Errors)
		},
	})
	if err == nil {
		err = flush()
	}
	fmt.Fprintf(l.out, "%d of %d WARC files read: %d lines loaded\n", st.Files, len(paths), added)
	warnNotModified(l.out, st.NotModified)
	return err
}

// cdxFile loads CDX or CDXJ lines, gunzipping them if needed.
func (l *loader) cdxFile(ctx context.Context, path string, f *os.File) error {
	br := bufio.NewReader(f)
	var r io.Reader = br
	if head, _ := br.Peek(2); bytes.Equal(head, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("load %s: %w", path, err)
		}
		defer func() { _ = zr.Close() }()
		r = zr
	}
	st, err := l.ix.Load(ctx, l.collection, r, cdxindex.LoadOptions{
		BatchLines: l.batch,
		OnBadLine:  func(e *cdxindex.LineError) { l.pr.report(fmt.Errorf("%s: %w", path, e)) },
	})
	fmt.Fprintf(l.out, "%s: %d lines loaded, %d bad lines skipped\n", path, st.Added, st.Bad)
	if err != nil {
		return fmt.Errorf("load %s: %w", path, err)
	}
	return nil
}
