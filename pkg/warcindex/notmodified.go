package warcindex

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// FilesOptions are IndexFiles' optional hooks; either may be nil.
type FilesOptions struct {
	// OnError hears of each record skipped (a *RecordError) and each file
	// that cannot be opened or read (an error naming it), once each.
	OnError func(error)
	// OnFile hears of each file read to its end, with its counts, once
	// its lines have been given to emit.
	OnFile func(path string, st Stats)
}

// FilesStats is what IndexFiles did.
type FilesStats struct {
	Stats           // summed over the files, as the lines were written
	Files       int // files read to their end
	NotModified NotModified
}

// NotModified counts the server-not-modified revisits IndexFiles met.
// Resolved ones got the line of their original; the others keep an
// ordinary revisit line (mime warc/revisit), counted by why.
type NotModified struct {
	Resolved int64
	// NotFound named an original by WARC-Refers-To, or by target URI,
	// date and payload digest, that is no response record of the files.
	NotFound int64
	// Unnamed have no WARC-Refers-To and lack one of
	// WARC-Refers-To-Target-URI, WARC-Refers-To-Date and
	// WARC-Payload-Digest.
	Unnamed int64
	// BadDate have no WARC-Refers-To and a WARC-Refers-To-Date that does
	// not parse.
	BadDate int64
}

// Unresolved is how many server-not-modified revisits kept an ordinary
// revisit line.
func (n NotModified) Unresolved() int64 { return n.NotFound + n.Unnamed + n.BadDate }

// Reasons says why revisits were left unresolved, e.g. "2 because their
// original is not in the files given"; "" when none were.
func (n NotModified) Reasons() string {
	var parts []string
	add := func(c int64, why string) {
		if c > 0 {
			parts = append(parts, fmt.Sprintf("%d because %s", c, why))
		}
	}
	add(n.NotFound, "their original is not in the files given")
	add(n.Unnamed, "they have no WARC-Refers-To and no complete WARC-Refers-To-Target-URI, WARC-Refers-To-Date and WARC-Payload-Digest")
	add(n.BadDate, "they have no WARC-Refers-To and a WARC-Refers-To-Date that does not parse")
	return strings.Join(parts, ", ")
}

// IndexFiles indexes the WARC files at paths as IndexFile does, in the
// order given, calling emit for each line, except that the line of a
// server-not-modified revisit (a 304) whose original response record is
// among the files points at that original: the revisit's URL key,
// timestamp and URL with the original's mime, status, digest, redirect,
// length, offset and filename (ARCHITECTURE.md section 11, "Replay of 304
// captures"). The original is the response record named by the revisit's
// WARC-Refers-To when it has one, else the response with its
// WARC-Refers-To-Target-URI, WARC-Refers-To-Date (to the second, as a CDX
// timestamp) and WARC-Payload-Digest. A response answered 304 is never an
// original.
//
// Each file is read twice. The first pass notes what the revisits refer
// to and finds originals that come after their revisit; the second finds
// those that come before it and writes the lines, so memory grows with the
// number of server-not-modified revisits, not of records.
//
// A record that cannot be indexed, or a file that cannot be opened or
// read, goes to opts.OnError once and the other files are indexed. The
// error returned is ctx's or emit's.
func IndexFiles(ctx context.Context, paths []string, emit func(cdx.Line) error, opts FilesOptions) (FilesStats, error) {
	o := &originals{byID: map[string]*original{}, byKey: map[string]*original{}}
	for _, path := range paths {
		_, err := eachRecord(ctx, path, func(l cdx.Line, f recordFacts) error {
			o.note(l, f)
			return nil
		}, nil)
		if ctx.Err() != nil {
			return FilesStats{}, fmt.Errorf("index warc files: %w", ctx.Err())
		}
		_ = err // the second pass reports it
	}

	var st FilesStats
	for _, path := range paths {
		fs, err := eachRecord(ctx, path, func(l cdx.Line, f recordFacts) error {
			o.find(l, f)
			if f.notModified {
				l = o.resolve(l, f, &st.NotModified)
			}
			if err := emit(l); err != nil {
				return &emitError{err}
			}
			return nil
		}, func(e *RecordError) {
			if opts.OnError != nil {
				opts.OnError(e)
			}
		})
		st.Records += fs.Records
		st.Indexed += fs.Indexed
		st.Errors += fs.Errors
		if ctx.Err() != nil {
			return st, fmt.Errorf("index warc files: %w", ctx.Err())
		}
		var emitErr *emitError
		if errors.As(err, &emitErr) {
			return st, err
		}
		if err != nil {
			if opts.OnError != nil {
				opts.OnError(err)
			}
			continue
		}
		st.Files++
		if opts.OnFile != nil {
			opts.OnFile(path, fs)
		}
	}
	return st, nil
}

// originals holds the originals wanted by server-not-modified revisits:
// by the record id they name, or by refKey when they name none.
type originals struct {
	byID, byKey map[string]*original
}

// original is a wanted original response; line is set once it is found.
type original struct {
	line  cdx.Line
	found bool
}

// refKey identifies an original by URL, 14-digit timestamp and payload
// digest. The timestamp is to the second because WARC/1.0 dates are, and
// a revisit's WARC-Refers-To-Date may have been written at another
// precision than its original's WARC-Date.
func refKey(uri, timestamp, digest string) string {
	return uri + "\x00" + timestamp + "\x00" + strings.ToLower(strings.TrimSpace(digest))
}

// Why a server-not-modified revisit names no original to look up.
const (
	named   = iota
	unnamed // no WARC-Refers-To and not all of URI, date and digest
	badDate // no WARC-Refers-To and an unparsable WARC-Refers-To-Date
)

// wanted returns where a revisit's original is looked up: the map (byID
// or byKey) and key, or why there is none.
func (o *originals) wanted(f recordFacts) (m map[string]*original, key string, why int) {
	if f.refersTo != "" {
		return o.byID, f.refersTo, named
	}
	if f.refersToURI == "" || f.refersToDate == "" || f.payloadDigest == "" {
		return nil, "", unnamed
	}
	t, err := parseWARCDate(f.refersToDate)
	if err != nil {
		return nil, "", badDate
	}
	return o.byKey, refKey(f.refersToURI, messages.Timestamp14(t), f.payloadDigest), named
}

// note records what a server-not-modified revisit wants, then looks for
// the record among the wanted originals (first pass).
func (o *originals) note(l cdx.Line, f recordFacts) {
	if f.notModified {
		if m, key, why := o.wanted(f); why == named && m[key] == nil {
			m[key] = &original{}
		}
		return
	}
	o.find(l, f)
}

// find keeps the line of a response record that a revisit wants and that
// is not found yet.
func (o *originals) find(l cdx.Line, f recordFacts) {
	if !f.response || l.Status == "304" {
		return
	}
	if w := o.byID[f.id]; f.id != "" && w != nil && !w.found {
		w.line, w.found = l, true
	}
	if f.payloadDigest == "" || len(o.byKey) == 0 {
		return
	}
	if w := o.byKey[refKey(l.Original, l.Timestamp, f.payloadDigest)]; w != nil && !w.found {
		w.line, w.found = l, true
	}
}

// resolve returns the line of a server-not-modified revisit: its
// original's, under the revisit's key, timestamp and URL, or the
// revisit's own when the original was not found; n counts which.
func (o *originals) resolve(l cdx.Line, f recordFacts, n *NotModified) cdx.Line {
	m, key, why := o.wanted(f)
	switch why {
	case unnamed:
		n.Unnamed++
		return l
	case badDate:
		n.BadDate++
		return l
	}
	if w := m[key]; w == nil || !w.found {
		n.NotFound++
		return l
	}
	n.Resolved++
	r := m[key].line
	r.URLKey, r.Timestamp, r.Original = l.URLKey, l.Timestamp, l.Original
	return r
}

// emitError marks an error of IndexFiles' emit, which ends the call.
type emitError struct{ err error }

func (e *emitError) Error() string { return e.err.Error() }
func (e *emitError) Unwrap() error { return e.err }
