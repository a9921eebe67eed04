// Package cdx models one line of a CDX index (ARCHITECTURE.md section 11) and
// reads and writes it in the two formats Trawler speaks: CDX11 (the classic
// space-separated "CDX N b a m s k r M S V g" line of the Wayback Machine and
// OutbackCDX) and CDXJ (pywb's "urlkey timestamp {json}").
package cdx

import (
	"strings"

	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// Header11 is the legend line that starts a CDX11 file.
const Header11 = " CDX N b a m s k r M S V g"

// RevisitMime is the mimetype CDX indexes give revisit records.
const RevisitMime = "warc/revisit"

// Line is one capture in a CDX index. Empty string fields are written as "-"
// (CDX11) or left out (CDXJ); Length and Offset are -1 when unknown.
type Line struct {
	URLKey     string // IA SURT canonical form (surt.CDXKey)
	Timestamp  string // 14 digits, UTC, yyyyMMddHHmmss
	Original   string // the URL as crawled
	Mimetype   string
	Status     string // HTTP status code; "" for non-HTTP records (dns:)
	Digest     string // base32 SHA-1 of the payload, without "sha1:"
	Redirect   string
	RobotFlags string
	Length     int64 // compressed record length in the WARC
	Offset     int64 // compressed record offset in the WARC
	Filename   string
}

// FromCrawled builds the index line for a crawled event. It returns false
// when the event has no WARC location (nothing was written, e.g. -5002) or
// no CDX key can be computed for its URL, or when it describes a WARC record
// that is not indexed (request, metadata).
//
// The fields follow the conventions of ARCHITECTURE.md section 11, the
// same as the offline indexer (pkg/warcindex) reads from the record. The
// timestamp is the fetch start (start_time_plus_duration), which is what
// Heritrix and Trawler's WARC writer use for WARC-Date, falling back to the
// event timestamp. Revisits (warc_type revisit, or any "duplicate:"
// annotation: duplicate:digest for identical-payload-digest,
// duplicate:server-not-modified for a 304) get mimetype warc/revisit as
// pywb expects, the event's HTTP status, and the event's content_digest,
// which for a revisit is the payload digest of the record it repeats. A
// dns: event's status is 200 (its own is Heritrix's 1), as pywb and jwarc
// index the record, and its digest is that of the answer, the record's
// block. A resource record (a renderer's screenshot) has no status, as
// pywb indexes it.
//
// A 304 capture whose event names its original (ExtraOriginal) gets the
// original record's line under its own URL and timestamp, so that it
// replays as the page.
//
// The redirect field of a 3xx is the event's extra_info "location"
// (ExtraLocation, which Trawler's workers fill; Heritrix's crawl log has no
// Location), resolved against the URL as the offline indexer
// (pkg/warcindex) resolves the record's Location; empty when the event
// does not carry one.
func FromCrawled(ev messages.Crawled) (Line, bool) {
	if !ev.HasWARCLocation() {
		return Line{}, false
	}
	switch ev.WarcType {
	case "", "response", "revisit", "resource":
	default:
		return Line{}, false
	}
	key, err := surt.CDXKey(ev.URL)
	if err != nil {
		return Line{}, false
	}
	ts, ok := eventTimestamp(ev)
	if !ok {
		return Line{}, false
	}
	l := Line{
		URLKey:    key,
		Timestamp: ts,
		Original:  ev.URL,
		Mimetype:  BaseMime(ev.Mimetype),
		Digest:    ev.Digest(),
		Offset:    *ev.WarcOffset,
		Length:    -1,
		Filename:  *ev.WarcFilename,
	}
	if ev.WarcLength != nil && *ev.WarcLength > 0 {
		l.Length = *ev.WarcLength
	}
	l.Status = eventStatus(ev)
	if isRevisit(ev) {
		l.Mimetype = RevisitMime
	}
	l.Redirect = eventRedirect(ev)
	if o, ok, err := OriginalOf(ev); err != nil {
		return Line{}, false
	} else if ok && ev.StatusCode == statusNotModified {
		pointAtOriginal(&l, o)
	}
	return l, true
}

// statusNotModified is the 304 whose line points at its original.
const statusNotModified = 304

// eventStatus is the status field of an event's line.
func eventStatus(ev messages.Crawled) string {
	switch {
	case ev.WarcType == "resource":
		return ""
	case isDNS(ev.URL):
		return "200"
	case ev.StatusCode >= 100 && ev.StatusCode <= 999:
		return itoa(int64(ev.StatusCode))
	}
	return ""
}

// isDNS reports whether u is a dns: URI, whose record is a text/dns
// response rather than an HTTP message.
func isDNS(u string) bool {
	return len(u) >= 4 && strings.EqualFold(u[:4], "dns:")
}

// BaseMime drops content-type parameters ("text/html; charset=utf-8" ->
// "text/html") and lower-cases the rest, as an index line holds it.
func BaseMime(m string) string {
	m, _, _ = strings.Cut(m, ";")
	return strings.ToLower(strings.TrimSpace(m))
}

func eventTimestamp(ev messages.Crawled) (string, bool) {
	if start, ok := ev.FetchStart(); ok {
		return messages.Timestamp14(start), true
	}
	t, err := ev.Time()
	if err != nil {
		return "", false
	}
	return messages.Timestamp14(t), true
}

func isRevisit(ev messages.Crawled) bool {
	if ev.WarcType == "revisit" {
		return true
	}
	for _, a := range strings.Split(ev.Annotations, ",") {
		if strings.HasPrefix(strings.TrimSpace(a), "duplicate:") {
			return true
		}
	}
	return false
}
