package messages

import (
	"encoding/json"
	"slices"
	"strconv"
)

// AppendCrawled appends the event to dst exactly as json.Marshal(c) encodes
// it (Crawled.MarshalJSON's shape with <, > and & escaped), without
// json.Marshal's reflection and its second pass that re-validates and
// compacts MarshalJSON's output. On error dst is returned unchanged with
// json.Marshal's error.
func AppendCrawled(dst []byte, c Crawled) ([]byte, error) {
	n := len(dst)
	// One allocation up front rather than a series of doublings.
	dst = slices.Grow(dst, crawledSizeHint)
	dst, err := appendCrawled(dst, c, true)
	if err == nil {
		return dst, nil
	}
	// Only extra_info can fail; json.Marshal words the error.
	b, err := json.Marshal(c)
	if err != nil {
		return dst[:n], err
	}
	return append(dst[:n], b...), nil
}

// crawledSizeHint is a starting capacity that holds a typical event.
const crawledSizeHint = 1024

// appendCrawled writes the event as section 4.2 fixes it (see
// Crawled.MarshalJSON): the fields in struct order, the nullable ones null
// when their value means nothing, extra_info and the proxy fields omitted
// when empty; escapeHTML as json.Marshal adds it.
func appendCrawled(dst []byte, c Crawled, escapeHTML bool) ([]byte, error) {
	dst = appendString(append(dst, `{"timestamp":`...), c.Timestamp, escapeHTML)
	dst = appendString(appendKey(dst, true, "url"), c.URL, escapeHTML)
	dst = strconv.AppendInt(appendKey(dst, true, "status_code"), int64(c.StatusCode), 10)
	dst = appendInt64From(appendKey(dst, true, "size"), c.Size, 1)
	dst = appendInt64From(appendKey(dst, true, "content_length"), c.ContentLength, 0)
	dst = appendNonEmpty(appendKey(dst, true, "content_digest"), c.ContentDigest, escapeHTML)
	dst = appendString(appendKey(dst, true, "mimetype"), c.Mimetype, escapeHTML)
	dst = appendString(appendKey(dst, true, "hop_path"), c.HopPath, escapeHTML)
	dst = appendString(appendKey(dst, true, "via"), c.Via, escapeHTML)
	dst = appendString(appendKey(dst, true, "seed"), c.Seed, escapeHTML)
	dst = appendString(appendKey(dst, true, "host"), c.Host, escapeHTML)
	dst = strconv.AppendInt(appendKey(dst, true, "thread"), int64(c.Thread), 10)
	dst = appendString(appendKey(dst, true, "start_time_plus_duration"), c.StartTimePlusDuration, escapeHTML)
	dst = appendString(appendKey(dst, true, "annotations"), c.Annotations, escapeHTML)
	dst = appendNonEmpty(appendKey(dst, true, "warc_filename"), c.WarcFilename, escapeHTML)
	// An offset or length means nothing without the file it is in.
	offset, length := c.WarcOffset, c.WarcLength
	if c.WarcFilename == nil || *c.WarcFilename == "" {
		offset, length = nil, nil
	}
	dst = appendInt64From(appendKey(dst, true, "warc_offset"), offset, 0)
	dst = appendInt64From(appendKey(dst, true, "warc_length"), length, 1)
	dst = appendString(appendKey(dst, true, "crawl_name"), c.CrawlName, escapeHTML)
	if len(c.ExtraInfo) > 0 {
		var err error
		if dst, err = appendExtraInfo(appendKey(dst, true, "extra_info"), c.ExtraInfo, escapeHTML); err != nil {
			return dst, err
		}
	}
	dst = appendOmitEmpty(dst, "content_type", c.ContentType, escapeHTML)
	dst = appendOmitEmpty(dst, "warc_type", c.WarcType, escapeHTML)
	if c.WireBytes != nil {
		dst = strconv.AppendInt(appendKey(dst, true, "wire_bytes"), *c.WireBytes, 10)
	}
	dst = appendOmitEmpty(dst, "http_method", c.HTTPMethod, escapeHTML)
	dst = appendOmitEmpty(dst, "warc_content_type", c.WarcContentType, escapeHTML)
	dst = appendOmitEmpty(dst, "warc_id", c.WarcID, escapeHTML)
	return append(dst, '}'), nil
}

// appendInt64From appends *p, or null when p is nil or *p is below least.
func appendInt64From(dst []byte, p *int64, least int64) []byte {
	if p == nil || *p < least {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, *p, 10)
}

// appendNonEmpty appends *p, or null when p is nil or points to "".
func appendNonEmpty(dst []byte, p *string, escapeHTML bool) []byte {
	if p == nil || *p == "" {
		return append(dst, "null"...)
	}
	return appendString(dst, *p, escapeHTML)
}

// appendOmitEmpty appends ,"key":"v" unless v is empty (omitempty).
func appendOmitEmpty(dst []byte, key, v string, escapeHTML bool) []byte {
	if v == "" {
		return dst
	}
	return appendString(appendKey(dst, true, key), v, escapeHTML)
}

// appendExtraInfo appends m as encoding/json does. What the hand-written
// encoder cannot write exactly (NaN, a malformed json.Number, deep or cyclic
// nesting, a value encoding/json rejects) sends the whole map through
// encoding/json, so the bytes, or the error, are the ones it gives.
func appendExtraInfo(dst []byte, m map[string]any, escapeHTML bool) ([]byte, error) {
	n := len(dst)
	dst, err := appendAnyMap(dst, m, escapeHTML, 0)
	if err == nil {
		return dst, nil
	}
	b, err := marshalAny(m, escapeHTML)
	if err != nil {
		return dst[:n], err
	}
	return append(dst[:n], b...), nil
}
