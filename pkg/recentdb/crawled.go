package recentdb

import (
	"fmt"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/messages"
)

// extra_info keys a crawled event may carry the response's validators under
// (a Trawler convention: Heritrix's event has no such fields). Their values
// must be JSON strings.
const (
	ExtraETag         = "etag"
	ExtraLastModified = "lastModified"
	// ExtraStream names the stream of the frequent crawl (npld, bypm)
	// whose history the capture belongs to; see Stream.
	ExtraStream = "stream"
)

// Stream is the stream an event's capture belongs to: extra_info "stream"
// when the event carries it (Trawler's workers do), otherwise def, the
// stream a consumer assigns to other producers' events. Streams keep
// separate histories because they are separate legal regimes.
func Stream(ev messages.Crawled, def string) string {
	if s, ok := ev.ExtraInfo[ExtraStream].(string); ok && s != "" {
		return s
	}
	return def
}

// Heritrix status codes FromCrawled treats specially.
const (
	statusConnectFailed  = -2
	statusConnectLost    = -3
	statusDeferred       = -50
	statusOutOfScope     = -5000
	statusHandedOff      = -5002
	statusBlockedByQuota = -5003
	statusNotModified    = 304
)

// skipped are the outcomes UKWA's OutbackCDXPersistStoreProcessor does not
// record, so that they do not count as "dealt with for now": the URI is
// handled elsewhere (-5002, rendering: recording it could also collide with
// the renderer's own capture at the same second), is waiting for a
// prerequisite (-50), or ended in a way Heritrix treats as transient within
// the recrawl interval (scope, quota, connection failures).
var skipped = map[int]string{
	statusHandedOff:      "handed off to the renderer",
	statusDeferred:       "deferred",
	statusOutOfScope:     "out of scope",
	statusBlockedByQuota: "blocked by quota",
	statusConnectFailed:  "connect failed",
	statusConnectLost:    "connection lost",
}

// FromCrawled turns a crawled event into the update it makes, following the
// rules of UKWA's OutbackCDX persist processor: ok is false (with the reason
// in skip) for outcomes it does not record (see skipped), for URLs that are
// not http or https (its processors only handle those), for WARC records
// that are not captures (a proxy's request and metadata records) and for
// status 0 (never attempted). A negative status becomes a Failure (UKWA's
// "failure-status-code/<status>" lines); anything else is a Capture, plus an
// Original when a full record was written. An event that cannot be used (no
// usable time, or validators of the wrong type) is an error.
func FromCrawled(ev messages.Crawled) (u Update, skip string, err error) {
	if !isHTTP(ev.URL) {
		return Update{}, "not an http or https URL", nil
	}
	if why, ok := skipped[ev.StatusCode]; ok {
		return Update{}, why, nil
	}
	if ev.StatusCode == 0 {
		return Update{}, "never attempted (status 0)", nil
	}
	if ev.HasWARCLocation() && !isCaptureRecord(ev.WarcType) {
		return Update{}, "WARC " + ev.WarcType + " record", nil
	}
	t, err := eventTime(ev)
	if err != nil {
		return Update{}, "", err
	}
	u.URL = ev.URL
	if ev.StatusCode < 0 {
		u.Failure = &Failure{Time: t, Status: ev.StatusCode}
		return u, "", nil
	}
	if u.Capture, err = capture(ev, t); err != nil {
		return Update{}, "", err
	}
	// A 304 is never an original: its empty block is not the page, and a
	// revisit referring to it would replay as an empty 304. Trawler writes
	// a 304 as a server-not-modified revisit; another producer's plain
	// 304 record is still a capture, not an original.
	if !u.Capture.Revisit && ev.StatusCode != statusNotModified && u.Capture.Filename != "" && u.Capture.Digest != "" {
		u.Original = &Original{Time: t, Digest: u.Capture.Digest, Filename: u.Capture.Filename,
			Offset: u.Capture.Offset, Length: u.Capture.Length, RecordID: ev.WarcID,
			Status: ev.StatusCode, Mime: cdx.BaseMime(ev.Mimetype)}
	}
	return u, "", nil
}

// capture builds the Capture of a successful fetch.
func capture(ev messages.Crawled, t time.Time) (*Capture, error) {
	c := &Capture{Time: t, Status: ev.StatusCode, Length: -1, Revisit: isRevisit(ev)}
	if ev.ContentDigest != nil {
		c.Digest = *ev.ContentDigest
	}
	if ev.HasWARCLocation() {
		c.Filename, c.Offset = *ev.WarcFilename, *ev.WarcOffset
		if ev.WarcLength != nil && *ev.WarcLength > 0 {
			c.Length = *ev.WarcLength
		}
	}
	var err error
	if c.ETag, err = extraString(ev, ExtraETag); err != nil {
		return nil, err
	}
	if c.LastModified, err = extraString(ev, ExtraLastModified); err != nil {
		return nil, err
	}
	if c.Interval, err = extraSeconds(ev, ExtraAdaptiveInterval); err != nil {
		return nil, err
	}
	return c, nil
}

// eventTime is the fetch start (what WARC-Date and the CDX timestamp use),
// or the event's own time when nothing was fetched ("-"), as UKWA's client
// falls back to the current time.
func eventTime(ev messages.Crawled) (time.Time, error) {
	if start, ok := ev.FetchStart(); ok {
		return start, nil
	}
	t, err := ev.Time()
	if err != nil {
		return time.Time{}, fmt.Errorf("crawled event for %s: no usable time: start_time_plus_duration %q and %w",
			ev.URL, ev.StartTimePlusDuration, err)
	}
	return t.Truncate(time.Millisecond), nil
}

// isHTTP reports whether u has an http or https scheme, in any case.
func isHTTP(u string) bool {
	scheme, _, ok := strings.Cut(u, ":")
	return ok && (strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https"))
}

func isCaptureRecord(warcType string) bool {
	switch warcType {
	case "", "response", "revisit", "resource":
		return true
	}
	return false
}

// isRevisit mirrors cdx.FromCrawled: a revisit record, or Heritrix's
// duplicate:digest annotation.
func isRevisit(ev messages.Crawled) bool {
	if ev.WarcType == "revisit" {
		return true
	}
	for a := range strings.SplitSeq(ev.Annotations, ",") {
		if strings.HasPrefix(a, "duplicate:") {
			return true
		}
	}
	return false
}

// extraString reads an optional string from extra_info.
func extraString(ev messages.Crawled, key string) (string, error) {
	v, ok := ev.ExtraInfo[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("crawled event for %s: extra_info.%s is %T, want a string", ev.URL, key, v)
	}
	return s, nil
}
