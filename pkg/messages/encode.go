package messages

import (
	"bytes"
	"encoding/json"
	"maps"
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

// The append* helpers below write JSON by hand for the hot encoders, byte
// for byte as marshal would: same field order, map keys sorted, no HTML
// escaping, raw values compacted. They return an error only for an invalid
// json.RawMessage; callers then re-run marshal, so the error stays the one
// encoding/json gives.

// appendString appends s as a JSON string. Plain printable ASCII, by far the
// common case, is copied; anything else goes through encoding/json so
// escaping (control characters, invalid UTF-8, U+2028) stays identical.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			b, err := marshal(s)
			if err != nil { // cannot happen: every Go string encodes
				panic(err)
			}
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
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
func appendMapKey(dst []byte, comma bool, key string) []byte {
	if comma {
		dst = append(dst, ',')
	}
	dst = appendString(dst, key)
	return append(dst, ':')
}

func appendBool(dst []byte, v bool) []byte { return strconv.AppendBool(dst, v) }

// appendStrings appends a []string: null when nil.
func appendStrings(dst []byte, v []string) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range v {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// appendStringMap appends a map[string]string with sorted keys: null when nil.
func appendStringMap(dst []byte, m map[string]string) []byte {
	if m == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		dst = appendMapKey(dst, i > 0, k)
		dst = appendString(dst, m[k])
	}
	return append(dst, '}')
}

// appendRaw appends a raw value as encoding/json does: null when nil,
// otherwise validated and compacted.
func appendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	if !bytes.ContainsAny(raw, " \t\r\n") {
		if !json.Valid(raw) {
			return dst, errInvalidRaw
		}
		return append(dst, raw...), nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return dst, err
	}
	return append(dst, b.Bytes()...), nil
}

// errInvalidRaw makes the fast encoders fall back to marshal, which reports
// the problem in encoding/json's words.
const errInvalidRaw = errorString("invalid raw JSON value")

type errorString string

func (e errorString) Error() string { return string(e) }

// appendRawMap appends a map of raw values with sorted keys: null when nil.
func appendRawMap(dst []byte, m map[string]json.RawMessage) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '{')
	var err error
	for i, k := range slices.Sorted(maps.Keys(m)) {
		dst = appendMapKey(dst, i > 0, k)
		if dst, err = appendRaw(dst, m[k]); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}
