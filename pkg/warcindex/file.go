package warcindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// IndexFile indexes the WARC file at path, calling emit for each line in
// file order and onError (if not nil) for each record it had to skip. The
// filename in the lines is the base name of path. It returns an error when
// the file cannot be opened or read, emit fails or ctx is done; skipped
// records are not errors of the call.
//
// Each record gets its own line: a server-not-modified revisit keeps an
// ordinary revisit line, since its original may be in another file (see
// IndexFiles).
func IndexFile(ctx context.Context, path string, emit func(cdx.Line) error, onError func(*RecordError)) (Stats, error) {
	return eachRecord(ctx, path, func(l cdx.Line, _ recordFacts) error { return emit(l) }, onError)
}

// eachRecord reads the WARC file at path and calls fn with the line and
// facts of each indexed record, in file order, and onError (if not nil)
// with each record it skipped. An error of fn is returned wrapped with the
// path.
func eachRecord(ctx context.Context, path string, fn func(cdx.Line, recordFacts) error, onError func(*RecordError)) (Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return Stats{}, fmt.Errorf("index warc: %w", err)
	}
	defer func() { _ = f.Close() }()
	r, err := NewReader(f, filepath.Base(path))
	if err != nil {
		return Stats{}, err
	}
	for {
		if err := ctx.Err(); err != nil {
			return r.Stats(), fmt.Errorf("index warc %s: %w", path, err)
		}
		l, facts, err := r.next()
		var rerr *RecordError
		switch {
		case errors.Is(err, io.EOF):
			return r.Stats(), nil
		case errors.As(err, &rerr):
			if onError != nil {
				onError(rerr)
			}
		case err != nil:
			return r.Stats(), err
		default:
			if err := fn(l, facts); err != nil {
				return r.Stats(), fmt.Errorf("index warc %s: %w", path, err)
			}
		}
	}
}
