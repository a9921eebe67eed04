package messages

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// scanner is the fast path of the decoders: a strict reader for the plain
// JSON producers actually write. Any construct it is unsure about (escapes in
// a decoded string, case-folded or non-ASCII keys, duplicate fields, values of
// the wrong type, bad syntax) makes it give up, and the caller decodes the
// message again with encoding/json, which gives the same value or the same
// error as before. So the fast path only has to be right when it succeeds.
type scanner struct {
	b   []byte
	i   int
	bad bool // set on the first give-up; every reader then returns zero values
}

// maxFastDepth bounds nesting in free-form values; deeper ones use the slow path.
const maxFastDepth = 32

func (s *scanner) fail() { s.bad = true }

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.bad || s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// consume expects c as the next non-space byte.
func (s *scanner) consume(c byte) {
	if s.peek() != c {
		s.fail()
		return
	}
	s.i++
}

// literal consumes the word w (null, true, false) when it is next.
func (s *scanner) literal(w string) bool {
	s.ws()
	if s.bad || len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

// rawString returns the decoded bytes of a string: the input itself when
// it has no escapes (encoding/json then hands it over unchanged too). It
// gives up on invalid UTF-8 and on \u escapes of surrogates, whose
// replacement rules it leaves to encoding/json.
func (s *scanner) rawString() []byte {
	if s.peek() != '"' {
		s.fail()
		return nil
	}
	start := s.i + 1
	high := false
	for i := start; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			v := s.b[start:i]
			if high && !utf8.Valid(v) {
				s.fail()
				return nil
			}
			s.i = i + 1
			return v
		case c == '\\':
			return s.unescape(start, i)
		case c < 0x20:
			s.fail()
			return nil
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	s.fail()
	return nil
}

// unescape decodes a string with escapes, from start (after the quote);
// the first backslash is at esc.
func (s *scanner) unescape(start, esc int) []byte {
	b := s.b
	out := make([]byte, 0, esc-start+16)
	out = append(out, b[start:esc]...)
	for i := esc; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				break
			}
			s.i = i + 1
			return out
		case c < 0x20:
		case c != '\\':
			out = append(out, c)
			i++
			continue
		case i+1 >= len(b):
		default:
			r, n := escaped(b[i+1:])
			if n == 0 {
				break
			}
			out = utf8.AppendRune(out, r)
			i += 1 + n
			continue
		}
		break
	}
	s.fail()
	return nil
}

// escaped decodes the escape after a backslash: the rune and the bytes it
// took, 0 when the fast path does not handle it.
func escaped(e []byte) (rune, int) {
	switch e[0] {
	case '"', '\\', '/':
		return rune(e[0]), 1
	case 'b':
		return '\b', 1
	case 'f':
		return '\f', 1
	case 'n':
		return '\n', 1
	case 'r':
		return '\r', 1
	case 't':
		return '\t', 1
	case 'u':
		if len(e) < 5 || !isHex4(e[1:5]) {
			return 0, 0
		}
		var r rune
		for _, c := range e[1:5] {
			r = r<<4 | rune(hexValue(c))
		}
		if r >= 0xD800 && r <= 0xDFFF {
			return 0, 0 // surrogates: left to encoding/json
		}
		return r, 5
	}
	return 0, 0
}

func hexValue(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

func (s *scanner) str() string { return string(s.rawString()) }

// nullableString decodes a string, leaving dst alone on null.
func (s *scanner) nullableString(dst *string) {
	if !s.literal("null") {
		*dst = s.str()
	}
}

// number returns the bytes of a JSON number, checked against the grammar.
func (s *scanner) number() []byte {
	s.ws()
	start, i, b := s.i, s.i, s.b
	digits := func() bool {
		n := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		s.fail()
		return nil
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			s.fail()
			return nil
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			s.fail()
			return nil
		}
	}
	s.i = i
	return b[start:i]
}

// int64 decodes an integer of at most 18 digits (so it cannot overflow);
// anything else is left to encoding/json.
func (s *scanner) int64() int64 {
	n := s.number()
	if s.bad {
		return 0
	}
	neg := n[0] == '-'
	if neg {
		n = n[1:]
	}
	if len(n) > 18 {
		s.fail()
		return 0
	}
	var v int64
	for _, c := range n {
		if c < '0' || c > '9' {
			s.fail()
			return 0
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v
}

// int decodes an integer that fits an int.
func (s *scanner) int() int {
	v := s.int64()
	if int64(int(v)) != v {
		s.fail()
	}
	return int(v)
}

// nullableInt64 decodes a *int64: nil on null.
func (s *scanner) nullableInt64() *int64 {
	if s.literal("null") {
		return nil
	}
	v := s.int64()
	return &v
}

// nullableBool decodes a bool, leaving dst alone on null.
func (s *scanner) nullableBool(dst *bool) {
	switch {
	case s.literal("null"):
	case s.literal("true"):
		*dst = true
	case s.literal("false"):
		*dst = false
	default:
		s.fail()
	}
}

// stringList decodes a []string: nil on null, non-nil when empty.
func (s *scanner) stringList() []string {
	if s.literal("null") {
		return nil
	}
	out := []string{}
	s.consume('[')
	if s.peek() == ']' {
		s.i++
		return out
	}
	for !s.bad {
		out = append(out, s.str())
		if s.peek() == ',' {
			s.i++
			continue
		}
		s.consume(']')
		break
	}
	return out
}

// object calls field for each key of an object (the scanner then stands
// before the value, which field must read). It gives up on a repeated key:
// seen tracks keys by the bit field returns for them (0: not tracked).
func (s *scanner) object(field func(key []byte) uint64) {
	s.consume('{')
	if s.peek() == '}' {
		s.i++
		return
	}
	var seen uint64
	for !s.bad {
		key := s.rawString()
		s.consume(':')
		if s.bad {
			return
		}
		bit := field(key)
		if seen&bit != 0 {
			s.fail()
		}
		seen |= bit
		if s.peek() == ',' {
			s.i++
			continue
		}
		s.consume('}')
		return
	}
}

// raw returns the exact bytes of the next value (validated), as
// encoding/json gives them to a json.RawMessage.
func (s *scanner) raw() []byte {
	s.ws()
	start := s.i
	s.skip(0)
	if s.bad {
		return nil
	}
	return s.b[start:s.i]
}

// skip validates and passes over one value.
func (s *scanner) skip(depth int) {
	if depth > maxFastDepth {
		s.fail()
		return
	}
	switch s.peek() {
	case '{':
		s.object(func([]byte) uint64 { s.skip(depth + 1); return 0 })
	case '[':
		s.array(func() { s.skip(depth + 1) })
	case '"':
		s.skipString()
	case 'n':
		s.want(s.literal("null"))
	case 't':
		s.want(s.literal("true"))
	case 'f':
		s.want(s.literal("false"))
	default:
		s.number()
	}
}

func (s *scanner) want(ok bool) {
	if !ok {
		s.fail()
	}
}

// array calls elem for each element of an array.
func (s *scanner) array(elem func()) {
	s.consume('[')
	if s.peek() == ']' {
		s.i++
		return
	}
	for !s.bad {
		elem()
		if s.peek() == ',' {
			s.i++
			continue
		}
		s.consume(']')
		return
	}
}

// skipString passes over a string, escapes included, as the JSON grammar
// allows it (encoding/json does not check UTF-8 in skipped strings).
func (s *scanner) skipString() {
	b := s.b
	for i := s.i + 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return
		case c < 0x20:
			s.fail()
			return
		case c == '\\':
			i++
			if i >= len(b) {
				s.fail()
				return
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) || !isHex4(b[i+1:i+5]) {
					s.fail()
					return
				}
				i += 4
			default:
				s.fail()
				return
			}
		}
	}
	s.fail()
}

func isHex4(h []byte) bool {
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// value decodes a free-form value as encoding/json does into an any with
// UseNumber: maps, []any, strings, json.Number, bools and nil.
func (s *scanner) value(depth int) any {
	if depth > maxFastDepth {
		s.fail()
		return nil
	}
	switch s.peek() {
	case '{':
		m := map[string]any{}
		s.object(func(k []byte) uint64 {
			key := string(k)
			m[key] = s.value(depth + 1) // a repeated key: the last wins, as in encoding/json
			return 0
		})
		return m
	case '[':
		a := []any{}
		s.array(func() { a = append(a, s.value(depth+1)) })
		return a
	case '"':
		return s.str()
	case 'n':
		s.want(s.literal("null"))
		return nil
	case 't':
		s.want(s.literal("true"))
		return true
	case 'f':
		s.want(s.literal("false"))
		return false
	}
	return json.Number(s.number())
}

// end checks that only white space follows the message.
func (s *scanner) end() bool {
	s.ws()
	return !s.bad && s.i == len(s.b)
}

// fastDecode decodes one JSON object into a T with field, which decodes
// the value of a known field and returns its bit (0 when key is not one).
// names lists T's field names: any other key is skipped, while a key that
// only differs in case from one of them sends the message to encoding/json,
// whose matching is case-insensitive. ok is false when the message must go
// through encoding/json instead.
func fastDecode[T any](b []byte, names string, field func(*scanner, *T, []byte) uint64) (v T, ok bool) {
	s := scanner{b: b}
	s.object(func(key []byte) uint64 {
		if bit := field(&s, &v, key); bit != 0 {
			return bit
		}
		if unknownKey(key, names) {
			s.skip(0)
		} else {
			s.fail()
		}
		return 0
	})
	if !s.end() {
		var zero T
		return zero, false
	}
	return v, true
}

// unknownKey reports whether encoding/json would ignore key in a struct
// with the space-separated field names: it also matches keys that differ
// from a name only in case. The caller has already tried the exact names.
// Non-ASCII keys count as known (fold rules go beyond ASCII), so the caller
// gives up on them, as on case variants.
func unknownKey(key []byte, names string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	for rest := names; rest != ""; {
		var n string
		n, rest, _ = strings.Cut(rest, " ")
		if asciiEqualFold(key, n) {
			return false
		}
	}
	return true
}

func asciiEqualFold(a []byte, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
