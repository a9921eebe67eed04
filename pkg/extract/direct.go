package extract

import (
	"bytes"

	"golang.org/x/net/html/atom"
)

// Direct tags: after the skipper has dropped text and plain tags, the tag
// that stops it is most often a link (<a class="reference" href="...">)
// written in the plainest way: a lower- or upper-case name, attributes
// name="value" or name='value' or bare names, one space apart. The
// tokenizer would return exactly those names (lower-cased) and values
// (unchanged when they hold no character reference, carriage return or
// NUL) and stay in the data state after a start tag that opens no
// raw-text element, so the skipper hands such a tag to the extractor
// itself and the tokenizer never reads it. Anything written another way
// is left to the tokenizer; the differential tests hold the two ways to
// the same links.

// attrSpan is where one attribute's name and value lie in a direct tag;
// the value is b[vs:ve] (empty for a bare name).
type attrSpan struct{ ks, ke, vs, ve int }

// maxDirectAttrs bounds the attributes of a direct tag.
const maxDirectAttrs = 32

// parseDirect returns the length of the direct tag b starts with and the
// length of its name (b[1:1+name]), appending its attributes to spans
// when spans is not nil; 0, 0 when b does not start with one, or the tag
// runs past the end of b.
func parseDirect(b []byte, spans *[]attrSpan) (n, name int) {
	if len(b) < 3 || b[0] != '<' || !isLetter(b[1]) {
		return 0, 0
	}
	j := 1
	for j < len(b) && (isLetter(b[j]) || '0' <= b[j] && b[j] <= '9') {
		j++
	}
	name = j - 1
	if name > maxPlainName || j >= len(b) || rawTextName(b[1:j]) {
		return 0, 0
	}
	count := 0
	for {
		sp := j
		for j < len(b) && isSpace(b[j]) {
			j++
		}
		switch {
		case j >= len(b):
			return 0, 0
		case b[j] == '>':
			return j + 1, name
		case b[j] == '/':
			if j+1 < len(b) && b[j+1] == '>' {
				return j + 2, name
			}
			return 0, 0
		case j == sp, count == maxDirectAttrs:
			return 0, 0
		}
		a, ok := directAttr(b, j)
		if !ok {
			return 0, 0
		}
		if spans != nil {
			*spans = append(*spans, a)
		}
		count++
		j = max(a.ke, a.ve)
		if a.vs > 0 {
			j++ // the closing quote
		}
	}
}

// directAttr reads the attribute at b[i:]: a name of letters, digits, '-',
// '_', ':' or '.', then a quoted value without '&', '\r' or NUL, or
// nothing (a bare name, followed by a space, '/' or '>').
func directAttr(b []byte, i int) (attrSpan, bool) {
	a := attrSpan{ks: i}
	for i < len(b) && attrNameByte(b[i]) {
		i++
	}
	a.ke = i
	if a.ke == a.ks || i >= len(b) {
		return a, false
	}
	if b[i] != '=' {
		return a, isSpace(b[i]) || b[i] == '/' || b[i] == '>'
	}
	if i+1 >= len(b) || b[i+1] != '"' && b[i+1] != '\'' {
		return a, false
	}
	a.vs = i + 2
	e := bytes.IndexByte(b[a.vs:], b[i+1])
	if e < 0 {
		return a, false
	}
	a.ve = a.vs + e
	return a, !bytes.ContainsAny(b[a.vs:a.ve], "&\r\x00")
}

func attrNameByte(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9' || c == '-' || c == '_' || c == ':' || c == '.'
}

// rawTextName reports whether name (in any case) opens a raw-text element.
func rawTextName(name []byte) bool {
	if len(name) > len("plaintext") {
		return false
	}
	var low [16]byte
	for i, c := range name {
		low[i] = c | 0x20
	}
	return rawTextElement(string(low[:len(name)]))
}

// directTag extracts the links of the direct tag b starts with, as
// startTag would from the tokenizer. It returns how many bytes it took (0:
// none, the tokenizer reads the tag) and whether extraction is over (a
// robots nofollow obeyed, or MaxLinks reached).
func (h *htmlExtractor) directTag(b []byte) (int, bool) {
	h.spans = h.spans[:0]
	n, name := parseDirect(b, &h.spans)
	if n == 0 || !mayHoldLinks(b[:n]) {
		return n, false
	}
	var low [maxPlainName]byte
	for i, c := range b[1 : 1+name] {
		low[i] = c | 0x20 // letters lower-cased; digits are unchanged
	}
	tag := atom.Lookup(low[:name]).String()
	if tag == "" {
		tag = string(low[:name])
	}
	h.attrs = h.attrs[:0]
	var key [maxIgnoredAttrName]byte
	for i, s := range h.spans {
		k := b[s.ks:s.ke]
		if len(k) > len(key) {
			return 0, false // an on* handler can be that long: the tokenizer reads it
		}
		if repeated(b, h.spans[:i], k) {
			continue // the tokenizer keeps an attribute's first value only
		}
		for i, c := range k {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			key[i] = c
		}
		v := b[s.vs:s.ve]
		kind := kindOf(key[:len(k)])
		if kind == attrIgnored || h.droppable(kind, v) {
			continue
		}
		h.attrs = append(h.attrs, attr{key: string(key[:len(k)]), val: string(v), kind: kind})
	}
	h.element(tag)
	return n, h.stop || h.c.full
}

// repeated reports whether an attribute of before has the name k (in any
// case).
func repeated(b []byte, before []attrSpan, k []byte) bool {
	for _, s := range before {
		if bytes.EqualFold(b[s.ks:s.ke], k) {
			return true
		}
	}
	return false
}
