package messages

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// DecodeCrawled parses a crawled event in any of the shapes consumers must
// accept: Heritrix's, Trawler's, and a WARC-writing proxy's. A proxy's
// content_type fills Mimetype when mimetype is empty and its wire_bytes fills
// Size when size is null; the proxy fields themselves are kept. Numbers in
// extra_info decode as json.Number so they re-encode unchanged.
func DecodeCrawled(b []byte) (Crawled, error) {
	c, ok := fastDecodeCrawled(b)
	if !ok {
		c = Crawled{}
		if err := decodeStrict(b, &c); err != nil {
			return Crawled{}, fmt.Errorf("decode crawled event: %w", err)
		}
	}
	if c.Mimetype == "" && c.ContentType != "" {
		c.Mimetype = c.ContentType
	}
	if c.Size == nil && c.WireBytes != nil {
		size := *c.WireBytes
		c.Size = &size
	}
	if strings.TrimSpace(c.URL) == "" {
		return Crawled{}, errors.New(`decode crawled event: missing required field "url"`)
	}
	return c, nil
}

// MarshalJSON encodes the event as section 4.2 fixes it: size null when not
// positive, content_length and the WARC offset null when negative,
// content_digest and warc_filename null when empty (and the WARC offset and
// length with it, since they mean nothing without a file). Like marshal, it
// does not escape HTML; json.Marshal adds that, as AppendCrawled does.
func (c Crawled) MarshalJSON() ([]byte, error) {
	b, err := appendCrawled(make([]byte, 0, crawledSizeHint), c, false)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Time parses the event's timestamp (when it was logged).
func (c Crawled) Time() (time.Time, error) {
	t, err := ParseISOTime(c.Timestamp)
	if err != nil {
		return time.Time{}, fmt.Errorf("crawled event timestamp: %w", err)
	}
	return t, nil
}

// FetchStart returns the fetch start from start_time_plus_duration
// (yyyyMMddHHmmssSSS+ms); ok is false when it is absent ("-") or malformed.
func (c Crawled) FetchStart() (start time.Time, ok bool) {
	s, _, _ := strings.Cut(c.StartTimePlusDuration, "+")
	if len(s) != 17 || strings.Trim(s, "0123456789") != "" {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation("20060102150405.000", s[:14]+"."+s[14:], time.UTC)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// Digest returns content_digest without its "sha1:" (or other algorithm)
// prefix; "" when there is none.
func (c Crawled) Digest() string {
	if c.ContentDigest == nil {
		return ""
	}
	d := *c.ContentDigest
	if _, after, ok := strings.Cut(d, ":"); ok {
		return after
	}
	return d
}

// HasWARCLocation reports whether the event says where its record is.
func (c Crawled) HasWARCLocation() bool {
	return c.WarcFilename != nil && *c.WarcFilename != "" && c.WarcOffset != nil && *c.WarcOffset >= 0
}

// Int64 returns a pointer to v, for filling the nullable numeric fields.
func Int64(v int64) *int64 { return &v }

// String returns a pointer to v, for filling the nullable string fields.
func String(v string) *string { return &v }
