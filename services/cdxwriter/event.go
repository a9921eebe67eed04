package cdxwriter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/messages"
	"github.com/trawler-crawl/trawler/pkg/recentdb"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// What an event amounts to, for the events metric.
const (
	resultCapture   = "capture"    // a capture: recently-crawled entry (and index line when it has a record)
	resultFailure   = "failure"    // a failed fetch: recently-crawled failure
	resultIndexOnly = "index_only" // an indexed record the DB does not track (dns:)
	resultSkipped   = "skipped"    // nothing to do (see recentdb.FromCrawled)
)

// failureMime and failureStatus are how UKWA's OutbackCDX client writes a
// failed fetch as a CDX line: OutbackCDX keeps no negative status codes.
const (
	failureMime   = "failure-status-code/"
	failureStatus = "599"
)

// event is a crawled event ready to apply.
type event struct {
	// line is the index line; nil when the event wrote no capture record.
	line *cdx.Line
	// update is the recently-crawled change; nil when there is none.
	update *recentdb.Update
	// failLine is the UKWA-style line of a failed fetch, for forwarding.
	failLine *cdx.Line
	result   string
	// stream is the stream whose history the update belongs to, as the
	// event names it; "" for the writer's default (see Config.Stream).
	stream string
}

// decodeRecord is the consumers' Decode: errors send the record to the DLQ.
func decodeRecord(r *kgo.Record) (event, error) {
	ev, err := messages.DecodeCrawled(r.Value)
	if err != nil {
		return event{}, err
	}
	return prepare(ev)
}

// prepare derives the index line, recently-crawled update and forwarded
// failure line of an event. An event that claims a capture record the
// index cannot take, or that the DB cannot use, is an error.
func prepare(ev messages.Crawled) (event, error) {
	var e event
	if err := checkText(ev); err != nil {
		return event{}, err
	}
	if ev.HasWARCLocation() && isCaptureRecord(ev.WarcType) {
		l, ok := cdx.FromCrawled(ev)
		if !ok {
			return event{}, indexError(ev)
		}
		e.line = &l
	}
	u, skip, err := recentdb.FromCrawled(ev)
	if err != nil {
		return event{}, err
	}
	if e.stream = recentdb.Stream(ev, ""); e.stream != "" && !knownStream(e.stream) {
		return event{}, fmt.Errorf("crawled event for %s: extra_info.%s %q: want npld or bypm",
			ev.URL, recentdb.ExtraStream, e.stream)
	}
	switch {
	case skip != "" && e.line != nil:
		e.result = resultIndexOnly
	case skip != "":
		e.result = resultSkipped
	case u.Failure != nil:
		e.update, e.result = &u, resultFailure
		e.failLine = failureLine(ev, u.Failure)
	default:
		e.update, e.result = &u, resultCapture
	}
	return e, nil
}

// knownStream reports whether s is a stream of the frequent crawl. An
// event naming another would open a history no worker reads.
func knownStream(s string) bool { return s == "npld" || s == "bypm" }

// checkText rejects NUL bytes, which no URL or file name has and which the
// index's keys cannot hold.
func checkText(ev messages.Crawled) error {
	if strings.IndexByte(ev.URL, 0) >= 0 {
		return fmt.Errorf("crawled event: url %q contains a NUL byte", ev.URL)
	}
	if ev.WarcFilename != nil && strings.IndexByte(*ev.WarcFilename, 0) >= 0 {
		return fmt.Errorf("crawled event for %s: warc_filename %q contains a NUL byte", ev.URL, *ev.WarcFilename)
	}
	return nil
}

// indexError says why an event with a record could not give an index line.
func indexError(ev messages.Crawled) error {
	if _, err := surt.CDXKey(ev.URL); err != nil {
		return fmt.Errorf("crawled event for %s: cannot index record: %w", ev.URL, err)
	}
	if _, _, err := cdx.OriginalOf(ev); err != nil {
		return fmt.Errorf("cannot index record: %w", err)
	}
	if _, ok := ev.FetchStart(); !ok {
		if _, err := ev.Time(); err != nil {
			return fmt.Errorf("crawled event for %s: cannot index record: no usable time: %w", ev.URL, err)
		}
	}
	return errors.New("crawled event for " + ev.URL + ": cannot index record")
}

func isCaptureRecord(warcType string) bool {
	switch warcType {
	case "", "response", "revisit", "resource":
		return true
	}
	return false
}

// failureLine is the CDX11 line UKWA's OutbackCDX client posted for a failed
// fetch: mimetype failure-status-code/<status>, status 599, length and
// offset 0 and no file. Its recently-seen queries filter these out
// (!mimetype:failure-status-code.*). nil when the URL has no CDX key.
func failureLine(ev messages.Crawled, f *recentdb.Failure) *cdx.Line {
	key, err := surt.CDXKey(ev.URL)
	if err != nil {
		return nil
	}
	return &cdx.Line{URLKey: key, Timestamp: messages.Timestamp14(f.Time), Original: ev.URL,
		Mimetype: failureMime + strconv.Itoa(f.Status), Status: failureStatus, Digest: ev.Digest()}
}
