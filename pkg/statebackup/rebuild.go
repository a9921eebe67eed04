package statebackup

import (
	"context"
	"fmt"
	"strconv"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
)

// rebuildBatch is how many updates go to Redis per recentdb.Put.
const rebuildBatch = 1000

// RebuildReport counts what a rebuild of the recently-crawled DB did.
type RebuildReport struct {
	// Lines is the number of index lines (or WARC capture records) read.
	Lines int64
	// Updates is the number of recently-crawled updates written.
	Updates int64
	// Skipped counts lines that make no update (dns:, status 0, ...), by
	// reason, as recentdb.FromCrawled names them.
	Skipped map[string]int64
	// BadRecords counts WARC records that could not be read.
	BadRecords int64
}

// Rebuilder writes recently-crawled updates derived from CDX lines into a
// DB, in batches. The lines go through recentdb.FromCrawled, the function
// the cdxwriter applies to crawled events, so a line makes the update its
// event made, except for what a CDX line does not carry: validators (ETag,
// Last-Modified), milliseconds, failures, and the outlinks of unchanged
// pages, which the worker writes itself.
type Rebuilder struct {
	db      *recentdb.DB
	pending []recentdb.Update
	rep     RebuildReport
	// prev is the line before, to tell the line of a 304 capture, which
	// points at the record of an earlier line of its URL.
	prev cdx.Line
}

// NewRebuilder writes into db.
func NewRebuilder(db *recentdb.DB) *Rebuilder {
	return &Rebuilder{db: db, rep: RebuildReport{Skipped: map[string]int64{}}}
}

// Add applies one line (buffered; Flush writes the rest).
func (r *Rebuilder) Add(ctx context.Context, l cdx.Line) error {
	r.rep.Lines++
	u, skip, err := UpdateFromLine(l)
	if err != nil {
		return err
	}
	if skip != "" {
		r.rep.Skipped[skip]++
		return nil
	}
	if u.Original != nil && l.Filename != "" && l.URLKey == r.prev.URLKey && l.Original == r.prev.Original &&
		l.Filename == r.prev.Filename && l.Offset == r.prev.Offset {
		// A 304's line names the original it confirmed (cdx.ExtraOriginal),
		// which the line before (same URL, earlier) holds: the capture is
		// a revisit, and the original keeps its own date.
		u.Original, u.Capture.Revisit = nil, true
	}
	r.prev = l
	r.pending = append(r.pending, u)
	if len(r.pending) >= rebuildBatch {
		return r.Flush(ctx)
	}
	return nil
}

// Flush writes the buffered updates.
func (r *Rebuilder) Flush(ctx context.Context) error {
	if len(r.pending) == 0 {
		return nil
	}
	if err := r.db.Put(ctx, r.pending); err != nil {
		return fmt.Errorf("rebuild recently-crawled DB %s: %w", r.db.History(), err)
	}
	r.rep.Updates += int64(len(r.pending))
	r.pending = r.pending[:0]
	return nil
}

// Report is what the rebuilder did so far.
func (r *Rebuilder) Report() RebuildReport { return r.rep }

// UpdateFromLine is the recently-crawled update of one CDX line: the line
// is turned back into the crawled event fields it came from and given to
// recentdb.FromCrawled. skip is non-empty (the reason) when the line makes
// no update; a line ingested from elsewhere with a short timestamp is
// skipped rather than stopping a rebuild of millions.
func UpdateFromLine(l cdx.Line) (u recentdb.Update, skip string, err error) {
	ts := l.Timestamp
	if len(ts) != 14 {
		return recentdb.Update{}, "timestamp not of 14 digits", nil
	}
	status, _ := strconv.Atoi(l.Status)
	ev := messages.Crawled{URL: l.Original, StatusCode: status, Mimetype: l.Mimetype,
		StartTimePlusDuration: ts + "000+0", WarcType: "response"}
	if l.Mimetype == "warc/revisit" {
		ev.WarcType = "revisit"
	}
	if l.Digest != "" && l.Digest != "-" {
		ev.ContentDigest = messages.String("sha1:" + l.Digest)
	}
	if l.Filename != "" {
		ev.WarcFilename = messages.String(l.Filename)
		ev.WarcOffset = messages.Int64(l.Offset)
		ev.WarcLength = messages.Int64(l.Length)
	}
	return recentdb.FromCrawled(ev)
}

// RebuildFromIndex writes an update for every entry of the index's
// collection (the crawl name: fc, dc). The index must not be open
// elsewhere: use a stopped cdxwriter's index dir or a restored backup's.
func RebuildFromIndex(ctx context.Context, ix *cdxindex.Index, collection string, db *recentdb.DB) (RebuildReport, error) {
	r := NewRebuilder(db)
	err := ix.Each(ctx, collection, func(l cdx.Line) error { return r.Add(ctx, l) })
	if err == nil {
		err = r.Flush(ctx)
	}
	return r.Report(), err
}

// RebuildFromWARCs writes an update for every capture record of the WARC
// files, read as `trawler cdx index` reads them (pkg/warcindex). Records
// that cannot be read are counted and skipped, as that command does; onBad
// hears of each.
func RebuildFromWARCs(ctx context.Context, paths []string, db *recentdb.DB, onBad func(*warcindex.RecordError)) (RebuildReport, error) {
	r := NewRebuilder(db)
	for _, p := range paths {
		_, err := warcindex.IndexFile(ctx, p, func(l cdx.Line) error { return r.Add(ctx, l) }, func(e *warcindex.RecordError) {
			r.rep.BadRecords++
			if onBad != nil {
				onBad(e)
			}
		})
		if err != nil {
			return r.Report(), fmt.Errorf("rebuild from %s: %w", p, err)
		}
	}
	err := r.Flush(ctx)
	return r.Report(), err
}
