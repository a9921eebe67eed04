package extract

import (
	"bytes"

	"golang.org/x/net/html/atom"
)

// linkAttrNeedles are lower-case fragments, one of which appears in the
// name of every attribute kindOf does not ignore: src covers srcset,
// lowsrc, datasrc and the data-*src variants; data covers data-*; code
// covers codebase; on event handlers are matched after a separator.
var linkAttrNeedles = [...][]byte{
	[]byte("href"), []byte("cite"), []byte("code"), []byte("src"), []byte("background"), []byte("longdesc"),
	[]byte("usemap"), []byte("profile"), []byte("poster"), []byte("data"), []byte("classid"), []byte("archive"),
	[]byte("style"), []byte("action"), []byte("method"), []byte("rel"), []byte("name"), []byte("http-equiv"),
	[]byte("content"), []byte("property"),
}

// maxPrefilterTag is the longest raw tag the prefilter lowers on the stack;
// longer ones always take the full path.
const maxPrefilterTag = 512

// mayHoldLinks reports whether a start tag's raw bytes could carry an
// attribute the extractor reads. It errs towards true: a tag it rejects has
// no valued attribute at all, or none whose name (in any case) contains
// one of the needles, so nothing in it but its name matters.
func mayHoldLinks(raw []byte) bool {
	if bytes.IndexByte(raw, '=') < 0 {
		return false
	}
	if len(raw) > maxPrefilterTag {
		return true
	}
	var buf [maxPrefilterTag]byte
	low := buf[:len(raw)]
	for i, c := range raw {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	for _, n := range linkAttrNeedles {
		if bytes.Contains(low, n) {
			return true
		}
	}
	// on* event handlers: "on" starting an attribute name, after
	// whitespace or a slash (which the tokenizer treats as a separator).
	for i := 1; i+1 < len(low); i++ {
		if low[i] == 'o' && low[i+1] == 'n' {
			switch low[i-1] {
			case ' ', '\t', '\n', '\r', '\f', '/':
				return true
			}
		}
	}
	return false
}

// rawTagName returns the tag name of a raw start tag ("<P class=x>" gives
// "p") when it is a known element, "" otherwise: the run loop only needs
// to recognise style, script and the raw-text-like elements.
func rawTagName(raw []byte) string {
	if len(raw) < 2 || raw[0] != '<' {
		return ""
	}
	var buf [16]byte
	n := 0
	for _, c := range raw[1:] {
		switch c {
		case ' ', '\t', '\n', '\r', '\f', '/', '>':
			return atom.Lookup(buf[:n]).String()
		}
		if n == len(buf) {
			return ""
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return atom.Lookup(buf[:n]).String()
}
