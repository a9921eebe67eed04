package messages

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// marshal encodes v without HTML escaping, so URLs keep their "&", "<" and
// ">" as the UK Web Archive's producers write them.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// marshalAny is marshal, or json.Marshal when escapeHTML is set: the two
// encodings the hand-written encoders below reproduce.
func marshalAny(v any, escapeHTML bool) ([]byte, error) {
	if escapeHTML {
		return json.Marshal(v)
	}
	return marshal(v)
}

// The append* helpers below write JSON by hand for the hot encoders, byte
// for byte as encoding/json would: same field order, map keys sorted, raw
// values compacted. Without escapeHTML they match marshal; with it they match
// json.Marshal, which also escapes <, > and & everywhere (even inside raw
// values, which it re-compacts with escaping). They return an error only
// for a value they cannot write exactly; callers then re-run encoding/json,
// so the error stays the one encoding/json gives.

const hexDigits = "0123456789abcdef"

// byteClass classifies a byte for appendString: 2 is copied as is, 1 (<, >
// and &) is copied unless HTML is escaped, 0 needs a closer look (control
// characters, '"', '\\' and every non-ASCII byte). A constant, not a
// [256]bool variable, so the table cannot be changed at run time.
const byteClass = "" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x02\x02\x00\x02\x02\x02\x01\x02\x02\x02\x02\x02\x02\x02\x02\x02" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x01\x02\x01\x02" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x00\x02\x02\x02" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02" +
	"\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// appendString appends s as a JSON string. It is encoding/json's own
// appendString, ported so no call goes through reflection: control
// characters as \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd, U+2028
// and U+2029 always escaped, and <, > and & as \u00XX with escapeHTML.
func appendString(dst []byte, s string, escapeHTML bool) []byte {
	copyAbove := byte(0) // the lowest byteClass copied as is
	if escapeHTML {
		copyAbove = 1
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i < len(s) && byteClass[s[i]] > copyAbove {
			i++
		}
		if i == len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// Valid JSON, but they end a line in JavaScript (JSONP).
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendHTMLEscaped appends compact, valid JSON src with <, >, & and U+2028/9
// escaped, as json.Marshal post-processes a json.Marshaler's output. They can
// only occur inside strings, so a byte-wise pass is enough.
func appendHTMLEscaped(dst, src []byte) []byte {
	start := 0
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[src[i+2]&0xF])
			i += 2
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}

// appendKey appends "key": for a field name that needs no escaping.
func appendKey(dst []byte, comma bool, key string) []byte {
	if comma {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// appendMapKey appends "key": for a map key, escaped as needed.
func appendMapKey(dst []byte, comma bool, key string, escapeHTML bool) []byte {
	if comma {
		dst = append(dst, ',')
	}
	dst = appendString(dst, key, escapeHTML)
	return append(dst, ':')
}

func appendBool(dst []byte, v bool) []byte { return strconv.AppendBool(dst, v) }

// appendStrings appends a []string: null when nil.
func appendStrings(dst []byte, v []string, escapeHTML bool) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s, escapeHTML)
	}
	return append(dst, ']')
}

// appendStringMap appends a map[string]string with sorted keys: null when nil.
func appendStringMap(dst []byte, m map[string]string, escapeHTML bool) []byte {
	if m == nil {
		return append(dst, "null"...)
	}
	var buf [16]string // sort the few headers on the stack
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		dst = appendMapKey(dst, i > 0, k, escapeHTML)
		dst = appendString(dst, m[k], escapeHTML)
	}
	return append(dst, '}')
}

// appendRaw appends a raw value as encoding/json does: null when nil,
// otherwise validated and compacted.
func appendRaw(dst []byte, raw json.RawMessage, escapeHTML bool) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	compact := []byte(raw)
	if !bytes.ContainsAny(raw, " \t\r\n") {
		if !json.Valid(raw) {
			return dst, errInvalidRaw
		}
	} else {
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return dst, err
		}
		compact = b.Bytes()
	}
	if escapeHTML {
		return appendHTMLEscaped(dst, compact), nil
	}
	return append(dst, compact...), nil
}

// errInvalidRaw makes the fast encoders fall back to encoding/json, which
// reports the problem in its own words.
const errInvalidRaw = errorString("invalid raw JSON value")

// errFallback marks a value the hand-written encoder leaves to encoding/json.
const errFallback = errorString("value needs encoding/json")

type errorString string

func (e errorString) Error() string { return string(e) }

// appendRawMap appends a map of raw values with sorted keys: null when nil.
func appendRawMap(dst []byte, m map[string]json.RawMessage, escapeHTML bool) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '{')
	var err error
	for i, k := range slices.Sorted(maps.Keys(m)) {
		dst = appendMapKey(dst, i > 0, k, escapeHTML)
		if dst, err = appendRaw(dst, m[k], escapeHTML); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// maxAnyDepth bounds appendAny's recursion: deeper (or cyclic) values go
// through encoding/json, which has its own cycle detection.
const maxAnyDepth = 32

// appendAny appends a decoded-JSON-shaped value (what json.Unmarshal into
// any produces, plus int, int64 and json.Number). Other types go through
// encoding/json one value at a time, which writes them exactly as it would
// inside the enclosing map. It fails with errFallback for what encoding/json
// would reject (NaN, infinities, a malformed json.Number) and for nesting
// deeper than maxAnyDepth.
func appendAny(dst []byte, v any, escapeHTML bool, depth int) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return appendString(dst, v, escapeHTML), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case float64:
		return appendFloat64(dst, v)
	case json.Number:
		s := string(v)
		if s == "" {
			s = "0" // encoding/json's long-standing reading of the zero Number
		}
		if !isValidNumber(s) {
			return dst, errFallback
		}
		return append(dst, s...), nil
	case map[string]any:
		return appendAnyMap(dst, v, escapeHTML, depth+1)
	case []any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		if depth+1 > maxAnyDepth {
			return dst, errFallback
		}
		dst = append(dst, '[')
		var err error
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendAny(dst, e, escapeHTML, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	b, err := marshalAny(v, escapeHTML)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// appendAnyMap appends m with sorted keys: null when nil.
func appendAnyMap(dst []byte, m map[string]any, escapeHTML bool, depth int) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	if depth > maxAnyDepth {
		return dst, errFallback
	}
	var buf [8]string // extra_info has a handful of keys; sort them on the stack
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	var err error
	for i, k := range keys {
		dst = appendMapKey(dst, i > 0, k, escapeHTML)
		if dst, err = appendAny(dst, m[k], escapeHTML, depth); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendFloat64 formats f as encoding/json does (ES6 number formatting):
// 'f' form, or 'e' form below 1e-6 or from 1e21 on with the exponent's
// leading zero dropped; NaN and infinities are errors there.
func appendFloat64(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, errFallback
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if n := len(dst); format == 'e' && n-start >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1]
		dst = dst[:n-1]
	}
	return dst, nil
}

// isValidNumber reports whether s is a JSON number literal; it is
// encoding/json's check for json.Number.
func isValidNumber(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '-' {
		if s = s[1:]; s == "" {
			return false
		}
	}
	switch {
	case s[0] == '0':
		s = s[1:]
	case '1' <= s[0] && s[0] <= '9':
		s = skipDigits(s[1:])
	default:
		return false
	}
	if len(s) >= 2 && s[0] == '.' && '0' <= s[1] && s[1] <= '9' {
		s = skipDigits(s[2:])
	}
	if len(s) >= 2 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		if s[0] == '+' || s[0] == '-' {
			if s = s[1:]; s == "" {
				return false
			}
		}
		s = skipDigits(s)
	}
	return s == ""
}

func skipDigits(s string) string {
	for len(s) > 0 && '0' <= s[0] && s[0] <= '9' {
		s = s[1:]
	}
	return s
}
