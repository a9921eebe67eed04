package recentdb

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Entry is what the DB knows about one URL. Each part is nil when unknown.
type Entry struct {
	// Capture is the latest fetch that got an answer (a response or a
	// revisit): the input of recrawl decisions and conditional requests.
	Capture *Capture
	// Original is the latest full (non-revisit) record of the URL: what a
	// revisit record refers to.
	Original *Original
	// Failure is the latest fetch that ended in a Heritrix failure status.
	Failure *Failure
}

// Found reports whether anything is known about the URL.
func (e Entry) Found() bool { return e.Capture != nil || e.Original != nil || e.Failure != nil }

// LastCrawled is the time of the latest capture; zero when there is none.
// Failures do not count, as in UKWA's recently-seen lookup (which filters
// out failure-status-code lines), so a failed URL is retried when it is
// found again.
func (e Entry) LastCrawled() time.Time {
	if e.Capture == nil {
		return time.Time{}
	}
	return e.Capture.Time
}

// Capture is one fetch that got an answer.
type Capture struct {
	// Time is the fetch start, to the millisecond, UTC.
	Time time.Time
	// Status is the HTTP status code.
	Status int
	// Digest is the payload digest as the event carried it
	// ("sha1:BASE32"); empty when unknown.
	Digest string
	// Revisit is set when the record written was a revisit.
	Revisit bool
	// ETag and LastModified are the response's validators, for
	// conditional requests; empty when the event did not carry them.
	ETag, LastModified string
	// Filename, Offset and Length locate the record written for this
	// capture; Filename is empty when the event had no WARC location and
	// Length is -1 when unknown.
	Filename       string
	Offset, Length int64
	// Interval is the URL's adaptive recrawl interval after this capture
	// (see Schedule); zero when the URL is not under recrawl-adaptive.
	Interval time.Duration
}

// Original is a full response (or resource) record, the target of later
// revisit records (WARC-Refers-To-*).
type Original struct {
	// Time is the capture's fetch start (WARC-Refers-To-Date).
	Time time.Time
	// Digest is the payload digest ("sha1:BASE32").
	Digest string
	// Filename, Offset and Length locate the record; Length is -1 when
	// unknown.
	Filename       string
	Offset, Length int64
	// RecordID is the record's WARC-Record-ID when the event carried it
	// (WARC-writing proxies do); empty otherwise.
	RecordID string
	// Status and Mime are the record's HTTP status and content type (its
	// index line's), for the index line of a later 304 capture, which
	// points at this record (docs/architecture.md, "Replay of 304
	// captures"); zero and empty in entries written before they were kept.
	Status int
	Mime   string
}

// Failure is a fetch that ended with a negative Heritrix status code.
type Failure struct {
	// Time is the fetch start, or the event time when nothing was fetched.
	Time time.Time
	// Status is the negative Heritrix status code.
	Status int
}

// Update is the change one crawled event makes; FromCrawled builds it.
// Parts left nil are not touched.
type Update struct {
	// URL is the URL as crawled; the DB keys it by its normalised form.
	URL      string
	Capture  *Capture
	Original *Original
	Failure  *Failure
	// Outlinks are the links of a full capture, for following them when
	// a later fetch finds the page unchanged; the worker writes them.
	Outlinks *Outlinks
}

// Hash fields of an entry. Each holds "<yyyyMMddHHmmssSSS> <json>": the
// fixed-width time first, so the update script orders values by comparing
// strings, and a replayed older value never replaces a newer one.
const (
	fieldCapture  = "c"
	fieldOriginal = "o"
	fieldFailure  = "f"
	fieldOutlinks = "l"
)

// tsLayout is the 17-digit millisecond timestamp that starts every value.
const tsLayout = "20060102150405.000"

// The JSON bodies, as decoded (valueWriter writes them). Short keys keep
// an entry small: the DB holds one per crawled URL.
type captureJSON struct {
	Status   int    `json:"s"`
	Digest   string `json:"d,omitempty"`
	Revisit  bool   `json:"r,omitempty"`
	ETag     string `json:"e,omitempty"`
	LastMod  string `json:"m,omitempty"`
	Filename string `json:"f,omitempty"`
	Offset   int64  `json:"o,omitempty"`
	Length   int64  `json:"n,omitempty"`
	Interval int64  `json:"a,omitempty"` // seconds
}

type originalJSON struct {
	Digest   string `json:"d,omitempty"`
	Filename string `json:"f"`
	Offset   int64  `json:"o"`
	Length   int64  `json:"n,omitempty"`
	RecordID string `json:"i,omitempty"`
	Status   int    `json:"s,omitempty"`
	Mime     string `json:"t,omitempty"`
}

type failureJSON struct {
	Status int `json:"s"`
}

// formatTS writes t as 17 digits, yyyyMMddHHmmssSSS, UTC.
func formatTS(t time.Time) string {
	s := t.UTC().Format(tsLayout)
	return s[:14] + s[15:]
}

// parseTS reads the 17-digit timestamp that starts a value.
func parseTS(s string) (time.Time, error) {
	if len(s) != 17 || strings.Trim(s, "0123456789") != "" {
		return time.Time{}, fmt.Errorf("timestamp %q: want 17 digits yyyyMMddHHmmssSSS", s)
	}
	return time.ParseInLocation(tsLayout, s[:14]+"."+s[14:], time.UTC)
}

// valueWriter builds "<timestamp> {json}" by hand: entries are written for
// every crawled URL, and encoding/json's reflection costs more than the rest
// of preparing an update. decode* read the values back with encoding/json.
type valueWriter struct {
	b     []byte
	first bool
}

func newValue(t time.Time) *valueWriter {
	w := &valueWriter{b: make([]byte, 0, 160), first: true}
	w.b = append(w.b, formatTS(t)...)
	w.b = append(w.b, ' ', '{')
	return w
}

func (w *valueWriter) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

// str writes a string field, left out when empty.
func (w *valueWriter) str(k, v string) {
	if v == "" {
		return
	}
	w.key(k)
	w.b = appendJSONString(w.b, v)
}

// num writes a number field; omitZero leaves out zero.
func (w *valueWriter) num(k string, v int64, omitZero bool) {
	if v == 0 && omitZero {
		return
	}
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
}

func (w *valueWriter) String() string { return string(append(w.b, '}')) }

// appendJSONString appends s as a JSON string. Invalid UTF-8 is left to
// encoding/json, which replaces it as JSON requires.
func appendJSONString(b []byte, s string) []byte {
	if !utf8.ValidString(s) {
		q, _ := json.Marshal(s) // a string always marshals
		return append(b, q...)
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// splitValue parses the time and returns the JSON body.
func splitValue(v string) (time.Time, []byte, error) {
	ts, body, ok := strings.Cut(v, " ")
	if !ok {
		return time.Time{}, nil, fmt.Errorf("value %q: want \"<timestamp> <json>\"", clip(v))
	}
	t, err := parseTS(ts)
	if err != nil {
		return time.Time{}, nil, err
	}
	return t, []byte(body), nil
}

// encodeCapture encodes c. When shared is set (c and the original written
// with it are the same record) the digest and location are left to the
// original's value, which holds them too: entries are kept for every URL
// of a crawl, and this saves about a fifth of one. mergeShared puts them
// back.
func encodeCapture(c *Capture, shared bool) string {
	w := newValue(c.Time)
	w.num("s", int64(c.Status), false)
	w.num("a", int64(c.Interval/time.Second), true)
	if shared {
		w.str("e", c.ETag)
		w.str("m", c.LastModified)
		return w.String()
	}
	w.str("d", c.Digest)
	if c.Revisit {
		w.key("r")
		w.b = append(w.b, "true"...)
	}
	w.str("e", c.ETag)
	w.str("m", c.LastModified)
	if c.Filename != "" {
		w.str("f", c.Filename)
		w.num("o", c.Offset, true)
		w.num("n", max(c.Length, 0), true) // omitted when unknown; read back as -1
	}
	return w.String()
}

// sharesRecord reports whether c and o describe the same record, so c can
// be stored without its digest and location.
func sharesRecord(c *Capture, o *Original) bool {
	return c != nil && o != nil && !c.Revisit && c.Time.Equal(o.Time) && c.Digest == o.Digest &&
		c.Filename == o.Filename && c.Offset == o.Offset && c.Length == o.Length
}

// mergeShared restores the digest and location of a capture stored with
// shared set: its original has the same time (one event wrote both).
func mergeShared(e *Entry) {
	c, o := e.Capture, e.Original
	if c == nil || o == nil || c.Filename != "" || c.Digest != "" || c.Revisit || !c.Time.Equal(o.Time) {
		return
	}
	c.Digest, c.Filename, c.Offset, c.Length = o.Digest, o.Filename, o.Offset, o.Length
}

func decodeCapture(v string) (*Capture, error) {
	t, body, err := splitValue(v)
	if err != nil {
		return nil, err
	}
	var j captureJSON
	if err := json.Unmarshal(body, &j); err != nil {
		return nil, fmt.Errorf("capture %q: %w", clip(v), err)
	}
	c := &Capture{Time: t, Status: j.Status, Digest: j.Digest, Revisit: j.Revisit, ETag: j.ETag,
		LastModified: j.LastMod, Filename: j.Filename, Offset: j.Offset, Length: j.Length,
		Interval: time.Duration(j.Interval) * time.Second}
	if c.Length == 0 {
		c.Length = -1
	}
	return c, nil
}

func encodeOriginal(o *Original) string {
	w := newValue(o.Time)
	w.str("d", o.Digest)
	w.key("f")
	w.b = appendJSONString(w.b, o.Filename)
	w.num("o", o.Offset, false)
	w.num("n", max(o.Length, 0), true)
	w.str("i", o.RecordID)
	w.num("s", int64(o.Status), true)
	w.str("t", o.Mime)
	return w.String()
}

func decodeOriginal(v string) (*Original, error) {
	t, body, err := splitValue(v)
	if err != nil {
		return nil, err
	}
	var j originalJSON
	if err := json.Unmarshal(body, &j); err != nil {
		return nil, fmt.Errorf("original %q: %w", clip(v), err)
	}
	o := &Original{Time: t, Digest: j.Digest, Filename: j.Filename, Offset: j.Offset, Length: j.Length,
		RecordID: j.RecordID, Status: j.Status, Mime: j.Mime}
	if o.Length == 0 {
		o.Length = -1
	}
	return o, nil
}

func encodeFailure(f *Failure) string {
	w := newValue(f.Time)
	w.num("s", int64(f.Status), false)
	return w.String()
}

func decodeFailure(v string) (*Failure, error) {
	t, body, err := splitValue(v)
	if err != nil {
		return nil, err
	}
	var j failureJSON
	if err := json.Unmarshal(body, &j); err != nil {
		return nil, fmt.Errorf("failure %q: %w", clip(v), err)
	}
	return &Failure{Time: t, Status: j.Status}, nil
}

// latest returns the newest time among the update's parts; entries expire
// a TTL after it.
func (u Update) latest() time.Time {
	var t time.Time
	if u.Capture != nil && u.Capture.Time.After(t) {
		t = u.Capture.Time
	}
	if u.Original != nil && u.Original.Time.After(t) {
		t = u.Original.Time
	}
	if u.Failure != nil && u.Failure.Time.After(t) {
		t = u.Failure.Time
	}
	if u.Outlinks != nil && u.Outlinks.Time.After(t) {
		t = u.Outlinks.Time
	}
	return t
}

// clip shortens a value quoted in an error.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}
