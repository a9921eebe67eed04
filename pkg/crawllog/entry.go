package crawllog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// Entry is one crawl.log line: one finished URI.
type Entry struct {
	// Logged is the instant the line is logged (column 1).
	Logged time.Time
	// Status is the Heritrix fetch status code (column 2).
	Status int
	// Size is the size column: for HTTP fetches the content-body length,
	// otherwise the bytes recorded (e.g. the DNS response). Heritrix prints
	// "-" for a size that is not positive, except that an HTTP fetch (HTTP
	// set) prints its content length even when it is 0.
	Size int64
	// HTTP marks an HTTP transaction (Heritrix's isHttpTransaction), so that
	// a 0-byte body prints "0" rather than "-".
	HTTP bool
	// URL is the fetched URI (column 4).
	URL string
	// HopPath is the discovery path from the seed; "" for a seed.
	HopPath string
	// Via is the URI this one was discovered from; "" for a seed.
	Via string
	// MIME is the content type; it is truncated at the first ';', ',' or
	// white space and printed as "no-type" when empty, as Heritrix does.
	MIME string
	// Thread is the fetching thread (printed "#" + at least 3 digits).
	Thread int
	// FetchStart is when the network fetch began; zero prints "-".
	FetchStart time.Time
	// Duration is how long the fetch took (printed in milliseconds).
	Duration time.Duration
	// Digest is the content digest with its scheme ("sha1:..."), or "".
	Digest string
	// Source is the source tag (usually the seed), or "".
	Source string
	// Annotations are printed comma-joined, "-" when there are none.
	Annotations []string
	// Extra is an optional JSON object appended after the annotations
	// (Heritrix's logExtraInfo); nil or empty means no column.
	Extra []byte
}

// na is Heritrix's placeholder for an empty column.
const na = "-"

// logTimeLayout is Heritrix's ArchiveUtils.getLog17Date format.
const logTimeLayout = "2006-01-02T15:04:05.000Z"

// AppendLine appends e to dst as one crawl.log line in Heritrix3's exact
// format (UriProcessingFormatter), including the trailing '\n'. It does not
// allocate when dst has room.
//
// Line breaks inside a field would split the line, so they are replaced:
// control characters and spaces in the URL and via columns are
// percent-encoded, and CR/LF elsewhere become spaces. Heritrix never has them
// in well-formed input, so golden lines are unaffected.
func AppendLine(dst []byte, e Entry) []byte {
	dst = e.Logged.UTC().AppendFormat(dst, logTimeLayout)
	dst = append(dst, ' ')
	dst = appendStatus(dst, e.Status)
	dst = append(dst, ' ')
	dst = appendSize(dst, e)
	dst = append(dst, ' ')
	dst = appendURL(dst, e.URL)
	dst = append(dst, ' ')
	dst = appendText(dst, orNA(e.HopPath))
	dst = append(dst, ' ')
	dst = appendURL(dst, orNA(e.Via))
	dst = append(dst, ' ')
	dst = append(dst, TruncateMIME(e.MIME)...)
	dst = append(dst, " #"...)
	dst = appendThread(dst, e.Thread)
	dst = append(dst, ' ')
	dst = appendStartPlusDuration(dst, e.FetchStart, e.Duration)
	dst = append(dst, ' ')
	dst = appendText(dst, orNA(e.Digest))
	dst = append(dst, ' ')
	dst = appendText(dst, orNA(e.Source))
	dst = append(dst, ' ')
	dst = appendAnnotations(dst, e.Annotations)
	if len(e.Extra) > 0 {
		dst = append(dst, ' ')
		dst = appendText(dst, e.Extra)
	}
	return append(dst, '\n')
}

func orNA(s string) string {
	if s == "" {
		return na
	}
	return s
}

// appendPadded right-aligns digits in a field of width w with pad, as
// ArchiveUtils.padTo does (never truncating).
func appendPadded(dst, digits []byte, w int, pad byte) []byte {
	for i := len(digits); i < w; i++ {
		dst = append(dst, pad)
	}
	return append(dst, digits...)
}

func appendStatus(dst []byte, status int) []byte {
	var buf [20]byte
	return appendPadded(dst, strconv.AppendInt(buf[:0], int64(status), 10), 5, ' ')
}

func appendSize(dst []byte, e Entry) []byte {
	var buf [20]byte
	if e.Size > 0 || (e.HTTP && e.Size == 0) {
		return appendPadded(dst, strconv.AppendInt(buf[:0], e.Size, 10), 10, ' ')
	}
	return appendPadded(dst, append(buf[:0], na...), 10, ' ')
}

func appendThread(dst []byte, thread int) []byte {
	var buf [20]byte
	return appendPadded(dst, strconv.AppendInt(buf[:0], int64(thread), 10), 3, '0')
}

// appendStartPlusDuration writes yyyyMMddHHmmssSSS+<ms>, or "-" when no
// fetch happened; a negative duration counts as 0, as in crawled events.
func appendStartPlusDuration(dst []byte, start time.Time, d time.Duration) []byte {
	if start.IsZero() {
		return append(dst, na...)
	}
	dst = start.UTC().AppendFormat(dst, "20060102150405.000")
	// Drop the '.' the layout needs to print milliseconds.
	dot := len(dst) - 4
	copy(dst[dot:], dst[dot+1:])
	dst = dst[:len(dst)-1]
	dst = append(dst, '+')
	return strconv.AppendInt(dst, max(d.Milliseconds(), 0), 10)
}

func appendAnnotations(dst []byte, anns []string) []byte {
	if len(anns) == 0 {
		return append(dst, na...)
	}
	for i, a := range anns {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendText(dst, a)
	}
	return dst
}

// appendText copies s, turning CR and LF into spaces so a line stays a line.
func appendText[T string | []byte](dst []byte, s T) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' || c == '\r' {
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

// appendURL copies a URI, percent-encoding spaces and control characters,
// which a well-formed URI never holds but which would break the columns.
func appendURL(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7f {
			dst = append(dst, '%', hex[c>>4], hex[c&0xf])
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// TruncateMIME reduces a content type as Heritrix's MimetypeUtils.truncate
// does: the text before the first white space, ';' or ','; "no-type" when
// that is empty or when a line break follows it (Java's regex "." stops at
// line terminators, so such values do not match).
func TruncateMIME(ct string) string {
	end := strings.IndexAny(ct, " \t\n\v\f\r;,")
	if end < 0 {
		end = len(ct)
	}
	if end == 0 || strings.ContainsAny(ct[end:], "\n\r\u0085\u2028\u2029") {
		return "no-type"
	}
	return ct[:end]
}

// FromCrawled builds the crawl.log entry for a crawled event (section 4.2).
// The size column follows Heritrix: content_length for HTTP fetches (a
// non-null content_length marks one), otherwise size. extra_info is always
// encoded into Extra; the Writer keeps it only when Options.Extra is set.
// Errors name the offending field.
func FromCrawled(ev messages.Crawled) (Entry, error) {
	if strings.TrimSpace(ev.URL) == "" {
		return Entry{}, errors.New(`crawled event field "url": missing`)
	}
	logged, err := messages.ParseISOTime(ev.Timestamp)
	if err != nil {
		return Entry{}, fmt.Errorf(`crawled event %s field "timestamp": %w`, ev.URL, err)
	}
	start, dur, err := parseStartPlusDuration(ev.StartTimePlusDuration)
	if err != nil {
		return Entry{}, fmt.Errorf(`crawled event %s field "start_time_plus_duration": %w`, ev.URL, err)
	}
	e := Entry{
		Logged: logged, Status: ev.StatusCode, URL: ev.URL,
		HopPath: dashless(ev.HopPath), Via: dashless(ev.Via), MIME: ev.Mimetype,
		Thread: ev.Thread, FetchStart: start, Duration: dur,
		Source: dashless(ev.Seed),
	}
	switch {
	case ev.ContentLength != nil && *ev.ContentLength >= 0:
		e.Size, e.HTTP = *ev.ContentLength, true
	case ev.Size != nil && *ev.Size > 0:
		e.Size = *ev.Size
	}
	if ev.ContentDigest != nil {
		e.Digest = dashless(*ev.ContentDigest)
	}
	if a := dashless(ev.Annotations); a != "" {
		e.Annotations = strings.Split(a, ",")
	}
	if len(ev.ExtraInfo) > 0 {
		// Heritrix's JSONObject leaves <, > and & as they are.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(ev.ExtraInfo); err != nil {
			return Entry{}, fmt.Errorf(`crawled event %s field "extra_info": %w`, ev.URL, err)
		}
		e.Extra = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	return e, nil
}

// dashless maps Heritrix's "-" placeholder back to "".
func dashless(s string) string {
	if s == na {
		return ""
	}
	return s
}

// maxDurationMs is the longest duration a time.Duration holds, in ms.
const maxDurationMs = int64(1<<63-1) / int64(time.Millisecond)

// parseStartPlusDuration parses yyyyMMddHHmmssSSS+<ms>; "" and "-" mean no
// fetch happened.
func parseStartPlusDuration(s string) (time.Time, time.Duration, error) {
	if s == "" || s == na {
		return time.Time{}, 0, nil
	}
	startText, msText, ok := strings.Cut(s, "+")
	if !ok {
		return time.Time{}, 0, fmt.Errorf("%q: want yyyyMMddHHmmssSSS+<milliseconds>, no '+'", s)
	}
	start, ok := messages.Crawled{StartTimePlusDuration: startText}.FetchStart()
	if !ok {
		return time.Time{}, 0, fmt.Errorf("%q: start %q is not 17 digits yyyyMMddHHmmssSSS", s, startText)
	}
	ms, err := strconv.ParseInt(msText, 10, 64)
	if err != nil || ms < 0 || ms > maxDurationMs {
		return time.Time{}, 0, fmt.Errorf("%q: duration %q is not a non-negative count of milliseconds", s, msText)
	}
	return start, time.Duration(ms) * time.Millisecond, nil
}
