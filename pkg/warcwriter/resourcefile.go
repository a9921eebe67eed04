package warcwriter

import (
	"context"
	"fmt"
	"io"

	"github.com/nlnwa/gowarc"
)

// WriteResourceFrom writes r as WriteResource does, but with the size
// bytes of src (from its current offset) as the block instead of r.Block:
// a block larger than memory, such as a domain crawl's crawl.log or CDX
// staged on disk, is read twice (digest, then write) and never held.
// r.Block must be empty and r.Fields is not supported.
func (w *Writer) WriteResourceFrom(ctx context.Context, r Resource, src io.ReadSeeker, size int64) (Location, error) {
	if err := ctx.Err(); err != nil {
		return Location{}, err
	}
	if err := validateResource(&r); err != nil {
		return Location{}, err
	}
	if len(r.Block) > 0 || len(r.Fields) > 0 {
		return Location{}, inputErr(r.URL, "Block", "a resource written from a reader has no Block or Fields")
	}
	typ := gowarc.Resource
	if r.Metadata {
		typ = gowarc.Metadata
	}
	rb, err := w.build.newRecord(typ, unbuffered(append(owned(w.build.fieldsOptions()), gowarc.WithSkipParseBlock())),
		r.URL, r.Date, r.ContentType)
	if err != nil {
		return Location{}, err
	}
	rec, err := buildHeld(rb, src, size, "size")
	if err != nil {
		return Location{}, fmt.Errorf("resource %s: %w", r.URL, err)
	}
	// Block and payload are the same bytes.
	rec.WarcHeader().Set(gowarc.WarcPayloadDigest, rec.WarcHeader().Get(gowarc.WarcBlockDigest))
	defer closeRecords([]gowarc.WarcRecord{rec})
	locs, err := w.write(ctx, []gowarc.WarcRecord{rec})
	if err != nil {
		return Location{}, fmt.Errorf("write resource %s: %w", r.URL, err)
	}
	locs[0].RecordID = rec.WarcHeader().Get(gowarc.WarcRecordID)
	return locs[0], nil
}
