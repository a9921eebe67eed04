package crawllog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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
// Heritrix writes every value as it is, so a value holding a space (clamd's
// "stream: Eicar-Test-Signature FOUND", a source tag typed with spaces) or
// a line break adds columns or splits the line. Trawler keeps every line at
// its fixed columns instead (the field rules in the package comment):
//
//   - In the URL, hop path, via, MIME type, digest, source tag and each
//     annotation, a space, a control character (below 0x20) or DEL is
//     written %XX (upper-case hex), as the WARC metadata record writes
//     outlinks; so is each UTF-8 byte of a non-ASCII space or control
//     character (U+0085, U+00A0, U+2028 ...), at which Go's strings.Fields
//     and Python's str.split also split. An annotation's ',' is written
//     %2C, since the column is the annotations joined by ','.
//   - Empty values print "-"; empty and repeated annotations are left out
//     (Heritrix keeps annotations in a set); none at all prints "-".
//   - The extra-info JSON is written without white space between tokens and
//     with spaces and control characters inside strings as \uXXXX escapes,
//     so it is one column and still the same JSON value.
//
// Values from a well-formed crawl hold none of these bytes, so such lines
// are Heritrix's byte for byte. '%' itself is not escaped: the URL's own
// escapes stay as they are, and the crawled event keeps the original text.
func AppendLine(dst []byte, e Entry) []byte {
	dst = e.Logged.UTC().AppendFormat(dst, logTimeLayout)
	dst = append(dst, ' ')
	dst = appendStatus(dst, e.Status)
	dst = append(dst, ' ')
	dst = appendSize(dst, e)
	dst = append(dst, ' ')
	dst = appendField(dst, e.URL, noComma)
	dst = append(dst, ' ')
	dst = appendField(dst, e.HopPath, noComma)
	dst = append(dst, ' ')
	dst = appendField(dst, e.Via, noComma)
	dst = append(dst, ' ')
	dst = appendField(dst, TruncateMIME(e.MIME), noComma)
	dst = append(dst, " #"...)
	dst = appendThread(dst, e.Thread)
	dst = append(dst, ' ')
	dst = appendStartPlusDuration(dst, e.FetchStart, e.Duration)
	dst = append(dst, ' ')
	dst = appendField(dst, e.Digest, noComma)
	dst = append(dst, ' ')
	dst = appendField(dst, e.Source, noComma)
	dst = append(dst, ' ')
	dst = appendAnnotations(dst, e.Annotations)
	if len(e.Extra) > 0 {
		dst = append(dst, ' ')
		dst = appendJSON(dst, e.Extra)
	}
	return append(dst, '\n')
}

// escapeComma selects whether appendField also escapes ','.
type escapeComma bool

const (
	noComma   escapeComma = false
	withComma escapeComma = true
)

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

// appendAnnotations joins the non-empty, distinct annotations with ','.
// Repeats are found by comparing with the earlier ones: lists are short,
// and this keeps AppendLine free of allocations.
func appendAnnotations(dst []byte, anns []string) []byte {
	n := 0
	for i, a := range anns {
		if a == "" || slices.Contains(anns[:i], a) {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = appendField(dst, a, withComma)
		n++
	}
	if n == 0 {
		return append(dst, na...)
	}
	return dst
}

const hexDigits = "0123456789ABCDEF"

// mustEscape reports whether the ASCII byte c would break the line's
// columns: a space, a control character or DEL (and ',' inside an
// annotation).
func mustEscape(c byte, comma escapeComma) bool {
	return c <= ' ' || c == 0x7f || (c == ',' && bool(comma))
}

// breaksColumns reports whether a non-ASCII rune is one that line and
// field splitters treat as white space or a line end.
func breaksColumns(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// appendField copies one column's value, "-" when it is empty, writing
// each byte of what would break the columns as %XX.
func appendField(dst []byte, s string, comma escapeComma) []byte {
	if s == "" {
		return append(dst, na...)
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if mustEscape(c, comma) {
				dst = append(dst, '%', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !breaksColumns(r) {
			dst = append(dst, s[i:i+n]...)
			i += n
			continue
		}
		for end := i + n; i < end; i++ {
			dst = append(dst, '%', hexDigits[s[i]>>4], hexDigits[s[i]&0xf])
		}
	}
	return dst
}

// appendJSON copies a JSON value as one column: white space between tokens
// is dropped, and inside strings spaces and control characters (ASCII or
// not) become \uXXXX escapes, which any JSON reader decodes to the same
// text. Input that is not JSON is still kept to one column by these rules.
func appendJSON(dst, js []byte) []byte {
	inString, escaped := false, false
	for i := 0; i < len(js); {
		c := js[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRune(js[i:])
			if breaksColumns(r) {
				dst = appendUnicodeEscape(dst, r, !escaped)
			} else {
				dst = append(dst, js[i:i+n]...)
			}
			escaped = false
			i += n
			continue
		}
		i++
		switch {
		case !inString:
			if c <= ' ' || c == 0x7f {
				continue
			}
			inString = c == '"'
		case escaped:
			escaped = false
			if c <= ' ' || c == 0x7f { // a backslash before raw white space
				dst = appendUnicodeEscape(dst, rune(c), false)
				continue
			}
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case c <= ' ' || c == 0x7f:
			dst = appendUnicodeEscape(dst, rune(c), true)
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// appendUnicodeEscape writes r (a rune of the Basic Multilingual Plane,
// as every rune breaksColumns names is) as JSON's uXXXX, with the leading
// backslash unless one was already written.
func appendUnicodeEscape(dst []byte, r rune, backslash bool) []byte {
	if backslash {
		dst = append(dst, '\\')
	}
	return append(dst, 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
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

// EventTime is the time a crawled event's line is logged at: the event's
// own timestamp, so that a line can be found from its event (a launch's
// lines in its metadata WARC, pkg/metawarc); the present when the event
// has no usable timestamp.
func EventTime(ev messages.Crawled) time.Time {
	if t, err := ev.Time(); err == nil && !t.IsZero() {
		return t
	}
	return time.Now()
}
