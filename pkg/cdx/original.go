package cdx

import (
	"fmt"
	"strconv"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// ExtraOriginal is the crawled event's extra_info key under which a worker
// that wrote a server-not-modified revisit (a 304) names the full record
// the 304 confirmed: {"warc_filename", "warc_offset", "warc_length",
// "status_code", "mimetype", "timestamp"}, the original's own event fields.
//
// A 304 exchange is kept in the WARC as the revisit it is, but pywb's
// resolvingloader returns a revisit whose own HTTP status is 3xx as it is,
// without loading the original, so an index line pointing at the 304
// record replays as an empty "304 Not Modified". The index line of such a
// capture therefore points at the original record instead: the capture's
// URL and timestamp, the original's status, mime, digest and location
// (docs/architecture.md section 11.2).
const ExtraOriginal = "original"

// Original is the full record a 304 capture stands for.
type Original struct {
	Filename string
	Offset   int64
	// Length is the compressed record length; -1 when unknown.
	Length int64
	Status int
	Mime   string
	// Timestamp is the original's fetch start (its WARC-Date), as the
	// event's timestamp is written: yyyy-MM-ddTHH:mm:ss.SSSZ.
	Timestamp string
}

// Extra is the extra_info value of o.
func (o Original) Extra() map[string]any {
	m := map[string]any{
		"warc_filename": o.Filename,
		"warc_offset":   o.Offset,
		"status_code":   o.Status,
		"mimetype":      o.Mime,
	}
	if o.Length > 0 {
		m["warc_length"] = o.Length
	}
	if o.Timestamp != "" {
		m["timestamp"] = o.Timestamp
	}
	return m
}

// OriginalOf reads extra_info "original" of ev; ok is false when the event
// has none. A value that is there but unusable is an error: the event's
// line would otherwise replay as an empty 304.
func OriginalOf(ev messages.Crawled) (o Original, ok bool, err error) {
	v, present := ev.ExtraInfo[ExtraOriginal]
	if !present || v == nil {
		return Original{}, false, nil
	}
	m, isMap := v.(map[string]any)
	if !isMap {
		return Original{}, false, fmt.Errorf("crawled event for %s: extra_info.%s is %T, want an object", ev.URL, ExtraOriginal, v)
	}
	fail := func(field, want string) error {
		return fmt.Errorf("crawled event for %s: extra_info.%s.%s is %v, want %s", ev.URL, ExtraOriginal, field, m[field], want)
	}
	o.Length = -1
	var s, good bool
	if o.Filename, s = m["warc_filename"].(string); !s || o.Filename == "" {
		return Original{}, false, fail("warc_filename", "a file name")
	}
	if o.Offset, good = messages.WholeNumber(m["warc_offset"]); !good || o.Offset < 0 {
		return Original{}, false, fail("warc_offset", "an offset")
	}
	if n, present := m["warc_length"]; present {
		if o.Length, good = messages.WholeNumber(n); !good || o.Length <= 0 {
			return Original{}, false, fail("warc_length", "a positive length")
		}
	}
	st, good := messages.WholeNumber(m["status_code"])
	if !good || st < 100 || st > 999 {
		return Original{}, false, fail("status_code", "an HTTP status")
	}
	o.Status = int(st)
	if o.Mime, s = m["mimetype"].(string); !s {
		return Original{}, false, fail("mimetype", "a string")
	}
	if ts, present := m["timestamp"]; present {
		if o.Timestamp, s = ts.(string); !s {
			return Original{}, false, fail("timestamp", "a string")
		}
	}
	return o, true, nil
}

// pointAtOriginal makes l, the line of a server-not-modified capture, the
// line of the original record it confirmed, under the capture's own URL
// and timestamp.
func pointAtOriginal(l *Line, o Original) {
	l.Filename, l.Offset, l.Length = o.Filename, o.Offset, o.Length
	l.Status = strconv.Itoa(o.Status)
	l.Mimetype = BaseMime(o.Mime)
	l.Redirect = ""
}
