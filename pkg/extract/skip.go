package extract

import (
	"bytes"
	"io"
)

// textSkipper is the HTML tokenizer's reader. Extraction reads tags with
// attributes, comments, the names of raw-text elements and the text of
// <style> and <script>; yet x/net/html reads every byte of a page one call
// at a time, which on a text-heavy page costs as much as the rest of
// extraction. So the skipper hands the tokenizer its input a chunk at a
// time, each ending with a '>', and when the tokenizer has consumed exactly
// up to the end of a token that leaves it in the data state (skipNext), it
// drops what follows up to the next tag that matters: text, and tags
// without attributes ("<p>", "</td>") other than raw-text elements. In the
// data state such text and tags become tokens the extractor ignores and
// leave the tokenizer in the data state, so every token it does return is
// the same as without the skipper. With direct set, the tag that stops the
// skipping is read without the tokenizer when it is written plainly enough
// (direct.go).
type textSkipper struct {
	r        io.Reader
	buf      []byte
	pos, end int
	err      error // from r, returned once buf is drained
	skip     bool
	// direct, when set, reads a tag the tokenizer need not see (direct.go)
	// and says how long it was and whether extraction is over; over ends
	// the input.
	direct func(b []byte) (n int, over bool)
	over   bool
}

// skipBufSize is the skipper's read size from the underlying reader.
const skipBufSize = 4 << 10

// minSkip is the shortest text worth ending a chunk for: a shorter run
// between two tags costs the tokenizer less than the extra read call.
const minSkip = 16

// maxPlainName bounds the tag names the skipper recognises.
const maxPlainName = 16

func newTextSkipper(r io.Reader) *textSkipper {
	return &textSkipper{r: r, buf: make([]byte, skipBufSize)}
}

// skipNext says the tokenizer has nothing buffered and is in the data
// state, so what follows may be dropped up to the next tag that matters.
func (s *textSkipper) skipNext() { s.skip = true }

// fill reads more input when the buffer is drained, up to want bytes. It
// reports false at the end of the input (or on a read error, kept in
// s.err).
//
// The buffer grows to what the tokenizer asks for: inside a long token it
// asks for twice its buffer each time, and handing it less would have it
// copy the token so far on every read, quadratic in the token's length.
func (s *textSkipper) fill(want int) bool {
	for s.pos == s.end {
		if s.err != nil {
			return false
		}
		if want > len(s.buf) {
			s.buf = make([]byte, want)
		}
		s.pos = 0
		s.end, s.err = s.r.Read(s.buf)
	}
	return true
}

func (s *textSkipper) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if s.skip {
		s.skip = false
		s.skipIgnored()
	}
	if s.over {
		return 0, io.EOF
	}
	if !s.fill(len(p)) {
		return 0, s.err
	}
	avail := s.buf[s.pos:min(s.end, s.pos+len(p))]
	n := chunkEnd(avail, s.direct != nil)
	copy(p, avail[:n])
	s.pos += n
	return n, nil
}

// skipIgnored drops text and plain tags up to the next other '<'. A plain
// tag cut by the end of the buffer is left to the tokenizer.
func (s *textSkipper) skipIgnored() {
	for s.fill(0) {
		i := bytes.IndexByte(s.buf[s.pos:s.end], '<')
		if i < 0 {
			s.pos = s.end
			continue
		}
		s.pos += i
		n := plainTag(s.buf[s.pos:s.end])
		if n == 0 && s.direct != nil {
			n, s.over = s.direct(s.buf[s.pos:s.end])
		}
		if n == 0 || s.over {
			s.pos += n
			return
		}
		s.pos += n
	}
}

// plainTag returns the length of the tag b starts with when the extractor
// ignores it: "</name>", or "<name>" with only attributes written
// name="value" (or 'value') whose names kindOf ignores (class, id, title...:
// the thousands of <span class="n"> of highlighted code), and not the start
// of a raw-text element; 0 otherwise, and for anything written another way,
// which the tokenizer then reads.
func plainTag(b []byte) int {
	j := 1
	end := len(b) > 1 && b[1] == '/'
	if end {
		j = 2
	}
	if j >= len(b) || !isLetter(b[j]) {
		return 0
	}
	var name [maxPlainName]byte
	k := 0
	for ; j < len(b) && (isLetter(b[j]) || '0' <= b[j] && b[j] <= '9'); j++ {
		if k == len(name) {
			return 0
		}
		name[k] = b[j] | 0x20 // lower case; digits are unchanged
		k++
	}
	if j >= len(b) || !end && rawTextElement(string(name[:k])) {
		return 0
	}
	if b[j] == '>' {
		return j + 1
	}
	if end {
		return 0
	}
	n := ignoredAttrs(b[j:])
	if n == 0 {
		return 0
	}
	return j + n
}

// maxIgnoredAttrName bounds the attribute names ignoredAttrs reads.
const maxIgnoredAttrName = 32

// ignoredAttrs returns the length of b through the '>' ending a start tag
// when b is a run of ` name="value"` attributes that kindOf ignores, then
// optional spaces and an optional '/'; 0 otherwise.
func ignoredAttrs(b []byte) int {
	i := 0
	for {
		sp := i
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i >= len(b) {
			return 0
		}
		switch {
		case b[i] == '>':
			return i + 1
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '>':
			return i + 2
		case i == sp:
			return 0 // an attribute not after a space
		}
		var key [maxIgnoredAttrName]byte
		n := 0
		for ; i < len(b) && (isLetter(b[i]) || '0' <= b[i] && b[i] <= '9' || b[i] == '-' || b[i] == '_'); i++ {
			if n == len(key) {
				return 0
			}
			key[n] = b[i]
			if isLetter(b[i]) {
				key[n] |= 0x20
			}
			n++
		}
		if n == 0 || i+1 >= len(b) || b[i] != '=' || (b[i+1] != '"' && b[i+1] != '\'') || kindOf(key[:n]) != attrIgnored {
			return 0
		}
		q := b[i+1]
		i += 2
		v := bytes.IndexByte(b[i:], q)
		if v < 0 {
			return 0
		}
		i += v + 1
	}
}

// directStart reports whether b starts with a direct tag.
func directStart(b []byte) bool {
	n, _ := parseDirect(b, nil)
	return n > 0
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// chunkEnd returns how much of b to hand over: through the first '>'
// followed by something to skip (minSkip bytes of text, a plain tag, or
// with direct a direct tag), or by the end of b; all of b when there is
// no such '>'.
func chunkEnd(b []byte, direct bool) int {
	from := 0
	for {
		i := bytes.IndexByte(b[from:], '>')
		if i < 0 {
			return len(b)
		}
		gt := from + i + 1
		lt := gt
		for lt < len(b) && lt-gt < minSkip && b[lt] != '<' {
			lt++
		}
		if lt == len(b) || lt-gt >= minSkip || plainTag(b[lt:]) > 0 || direct && directStart(b[lt:]) {
			return gt
		}
		from = lt
	}
}
