package cdx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// CDX11 formats the line in the 11-field CDX format (Header11), with "-" for
// empty fields. A space inside a field would shift every field after it, so
// it is written as %20.
func (l Line) CDX11() string {
	fields := [11]string{
		l.URLKey, l.Timestamp, l.Original, l.Mimetype, l.Status, l.Digest,
		l.Redirect, l.RobotFlags, num(l.Length), num(l.Offset), l.Filename,
	}
	var b strings.Builder
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(' ')
		}
		if f == "" {
			f = "-"
		}
		b.WriteString(strings.ReplaceAll(f, " ", "%20"))
	}
	return b.String()
}

// CDXJ formats the line as "urlkey timestamp {json}" with the JSON keys url,
// mime, status, digest, redirect, robotflags, length, offset, filename in
// that order, empty ones left out and every value a string, as pywb and
// OutbackCDX write it.
func (l Line) CDXJ() string {
	var b bytes.Buffer
	b.WriteString(orDash(l.URLKey))
	b.WriteByte(' ')
	b.WriteString(orDash(l.Timestamp))
	b.WriteString(" {")
	first := true
	add := func(key, value string) {
		if value == "" || value == "-" {
			return
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeJSONString(&b, key)
		b.WriteByte(':')
		writeJSONString(&b, value)
	}
	add("url", l.Original)
	add("mime", l.Mimetype)
	add("status", l.Status)
	add("digest", l.Digest)
	add("redirect", l.Redirect)
	add("robotflags", l.RobotFlags)
	add("length", num(l.Length))
	add("offset", num(l.Offset))
	add("filename", l.Filename)
	b.WriteByte('}')
	return b.String()
}

// writeJSONString writes s as a JSON string without HTML escaping, so URLs
// with & < > stay readable.
func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // encoding a string cannot fail
	b.Truncate(b.Len() - 1) // Encode appends a newline
}

// Parse parses a CDX11 or CDXJ line, telling them apart by the "{" that
// starts CDXJ's third field.
func Parse(line string) (Line, error) {
	line = strings.TrimRight(line, "\r\n")
	parts := strings.SplitN(line, " ", 3)
	if len(parts) == 3 && strings.HasPrefix(parts[2], "{") {
		return ParseCDXJ(line)
	}
	return ParseCDX11(line)
}

// ParseCDX11 parses an 11-field CDX line; "-" fields become empty.
func ParseCDX11(line string) (Line, error) {
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, " CDX ") || strings.HasPrefix(line, "CDX ") {
		return Line{}, fmt.Errorf("cdx11: %q is a header line, not a capture", line)
	}
	f := strings.Split(line, " ")
	if len(f) != 11 {
		return Line{}, fmt.Errorf("cdx11: %d space-separated fields, want 11 (urlkey timestamp original mimetype status digest redirect robotflags length offset filename): %q", len(f), clip(line))
	}
	for i := range f {
		if f[i] == "-" {
			f[i] = ""
		}
	}
	l := Line{
		URLKey: f[0], Timestamp: f[1], Original: f[2], Mimetype: f[3], Status: f[4],
		Digest: stripDigestPrefix(f[5]), Redirect: f[6], RobotFlags: f[7], Filename: f[10],
	}
	var err error
	if l.Length, err = parseNum("length", f[8]); err != nil {
		return Line{}, fmt.Errorf("cdx11: %w: %q", err, clip(line))
	}
	if l.Offset, err = parseNum("offset", f[9]); err != nil {
		return Line{}, fmt.Errorf("cdx11: %w: %q", err, clip(line))
	}
	if err := l.validate(); err != nil {
		return Line{}, fmt.Errorf("cdx11: %w: %q", err, clip(line))
	}
	return l, nil
}

// ParseCDXJ parses a "urlkey timestamp {json}" line. JSON values may be
// strings or numbers; "url" is required, unknown keys are ignored, and
// "mimetype", "statuscode" and "redirecturl" are accepted as aliases.
func ParseCDXJ(line string) (Line, error) {
	line = strings.TrimRight(line, "\r\n")
	parts := strings.SplitN(line, " ", 3)
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "{") {
		return Line{}, fmt.Errorf("cdxj: want \"urlkey timestamp {json}\": %q", clip(line))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(parts[2]), &m); err != nil {
		return Line{}, fmt.Errorf("cdxj: JSON block: %v: %q", err, clip(line))
	}
	l := Line{URLKey: parts[0], Timestamp: parts[1], Length: -1, Offset: -1}
	for key, raw := range m {
		if !knownKey(key) {
			continue // extra CDXJ fields (method, requestBody, ...) are not modelled
		}
		v, err := jsonScalar(raw)
		if err != nil {
			return Line{}, fmt.Errorf("cdxj: key %q: %w: %q", key, err, clip(line))
		}
		if err := l.set(key, v); err != nil {
			return Line{}, fmt.Errorf("cdxj: %w: %q", err, clip(line))
		}
	}
	if l.Original == "" {
		return Line{}, fmt.Errorf("cdxj: missing \"url\": %q", clip(line))
	}
	if err := l.validate(); err != nil {
		return Line{}, fmt.Errorf("cdxj: %w: %q", err, clip(line))
	}
	return l, nil
}

func knownKey(key string) bool {
	switch key {
	case "url", "original", "mime", "mimetype", "status", "statuscode", "digest",
		"redirect", "redirecturl", "robotflags", "length", "offset", "filename":
		return true
	}
	return false
}

// set stores one CDXJ value; "-" means empty, as in CDX11.
func (l *Line) set(key, v string) error {
	if v == "-" {
		v = ""
	}
	var err error
	switch key {
	case "url", "original":
		l.Original = v
	case "mime", "mimetype":
		l.Mimetype = v
	case "status", "statuscode":
		l.Status = v
	case "digest":
		l.Digest = stripDigestPrefix(v)
	case "redirect", "redirecturl":
		l.Redirect = v
	case "robotflags":
		l.RobotFlags = v
	case "length":
		l.Length, err = parseNum("length", v)
	case "offset":
		l.Offset, err = parseNum("offset", v)
	case "filename":
		l.Filename = v
	}
	return err
}

// jsonScalar returns a JSON string's value or a number's literal text.
func jsonScalar(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	if string(raw) == "null" {
		return "", nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return "", fmt.Errorf("want a string or number, got %s", clip(string(raw)))
	}
	return n.String(), nil
}

// validate checks the fields every index needs: a key, a 14-digit (or
// shorter, for year/month precision) numeric timestamp, and a numeric status.
func (l Line) validate() error {
	if l.URLKey == "" {
		return fmt.Errorf("empty urlkey")
	}
	if l.Timestamp == "" || len(l.Timestamp) > 14 || strings.Trim(l.Timestamp, "0123456789") != "" {
		return fmt.Errorf("timestamp %q: want up to 14 digits", l.Timestamp)
	}
	if l.Status != "" {
		if _, err := strconv.Atoi(l.Status); err != nil {
			return fmt.Errorf("status %q is not a number", l.Status)
		}
	}
	return nil
}

func parseNum(name, s string) (int64, error) {
	if s == "" || s == "-" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %q is not a non-negative integer", name, s)
	}
	return n, nil
}

func stripDigestPrefix(d string) string {
	if _, after, ok := strings.Cut(d, ":"); ok {
		return after
	}
	return d
}

func num(n int64) string {
	if n < 0 {
		return ""
	}
	return itoa(n)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// clip shortens a line quoted in an error message.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
