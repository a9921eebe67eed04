package warcwriter

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nlnwa/gowarc"
)

// Resource is a record the crawl made itself rather than fetched: a
// browser's screenshot of a page or its rendered DOM, as UKWA's renderer
// writes them (WARC-Target-URI "screenshot:<url>", "onreadydom:<url>").
type Resource struct {
	// URL is the WARC-Target-URI.
	URL string
	// Date is when the resource was made.
	Date time.Time
	// ContentType is the block's media type, e.g. "image/png".
	ContentType string
	// Block is the resource itself.
	Block []byte
	// Metadata writes the block as a metadata record rather than a
	// resource: what describes a capture without being one, as brozzler
	// and Heritrix's ExtractorYoutubeDL write yt-dlp's JSON at
	// "youtube-dl:<url>".
	Metadata bool
	// Fields, when not empty, add a metadata record (warc-fields, in this
	// order) about the resource, linked by WARC-Concurrent-To: the
	// viewport and time of a screenshot, say.
	Fields [][2]string
}

// WriteResource writes r as a resource record (with a payload digest, so
// indexes carry one) and its metadata record to one file, returning the
// resource record's location.
func (w *Writer) WriteResource(ctx context.Context, r Resource) (Location, error) {
	if err := ctx.Err(); err != nil {
		return Location{}, err
	}
	if err := validateResource(&r); err != nil {
		return Location{}, err
	}
	res, err := w.build.resource(&r)
	if err != nil {
		return Location{}, err
	}
	recs := []gowarc.WarcRecord{res}
	if len(r.Fields) > 0 {
		meta, err := w.build.fieldsRecord(r.URL, r.Date, r.Fields)
		if err != nil {
			closeRecords(recs)
			return Location{}, err
		}
		meta.WarcHeader().AddId(gowarc.WarcConcurrentTo, res.RecordId())
		recs = append(recs, meta)
	}
	defer closeRecords(recs)
	locs, err := w.write(ctx, recs)
	if err != nil {
		return Location{}, fmt.Errorf("write resource %s: %w", r.URL, err)
	}
	locs[0].RecordID = res.WarcHeader().Get(gowarc.WarcRecordID)
	return locs[0], nil
}

func validateResource(r *Resource) error {
	switch {
	case r.URL == "" || strings.ContainsFunc(r.URL, isSpaceOrControl):
		return inputErr(r.URL, "URL", "empty or has spaces or control characters")
	case r.Date.IsZero():
		return inputErr(r.URL, "Date", "zero")
	case r.ContentType == "" || strings.ContainsFunc(r.ContentType, isControl):
		return inputErr(r.URL, "ContentType", "empty or has control characters")
	}
	for _, f := range r.Fields {
		if f[0] == "" || strings.ContainsAny(f[0], ": \r\n") {
			return inputErr(r.URL, "Fields", "bad field name %q", f[0])
		}
	}
	return nil
}

// resource builds a resource record of r: block and payload are the same
// bytes, so both digests are the block's.
func (b builder) resource(r *Resource) (gowarc.WarcRecord, error) {
	opts := sized(append(owned(b.fieldsOptions()), gowarc.WithSkipParseBlock()), int64(len(r.Block)))
	typ := gowarc.Resource
	if r.Metadata {
		typ = gowarc.Metadata
	}
	rb, err := b.newRecord(typ, opts, r.URL, r.Date, r.ContentType)
	if err != nil {
		return nil, err
	}
	d := blockDigest(r.Block)
	rb.AddWarcHeader(gowarc.WarcBlockDigest, d)
	rb.AddWarcHeader(gowarc.WarcPayloadDigest, d)
	if _, err := rb.Write(r.Block); err != nil {
		_ = rb.Close()
		return nil, fmt.Errorf("buffer resource: %w", err)
	}
	rec, err := build(rb)
	if err != nil {
		return nil, fmt.Errorf("resource record: %w", err)
	}
	return rec, nil
}

// fieldsRecord builds a metadata record whose block is the given
// warc-fields.
func (b builder) fieldsRecord(target string, date time.Time, fields [][2]string) (gowarc.WarcRecord, error) {
	var sb strings.Builder
	for _, f := range fields {
		sb.WriteString(f[0])
		sb.WriteString(": ")
		sb.WriteString(cleanField(f[1]))
		sb.WriteString("\r\n")
	}
	return b.warcFields(target, date, sb.String())
}
