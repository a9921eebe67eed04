package extract

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CSS extracts url() references, @import targets and image-set() strings
// from a stylesheet streamed from r, whose URL is base. All are embeds with
// Heritrix's "=EMBED_MISC" context. Extraction stops silently at MaxBytes or
// MaxLinks; the only error is a failed read of r.
func CSS(r io.Reader, base string, o Options) ([]Link, error) {
	o = o.withDefaults()
	lr := &limitReader{r: r, n: o.MaxBytes}
	data, err := readAll(lr)
	c := newCollector(o)
	scanCSS(data, func(ref string) bool {
		return c.add(base, ref, hopEmbed, ContextEmbedMisc)
	})
	return c.links, readErr("css", lr.read, err)
}

// scanCSS calls emit for every referenced URL in s, in order, until emit
// returns false. Comments and ordinary strings are skipped so that
// "url(" inside them is not mistaken for a reference.
func scanCSS(s string, emit func(string) bool) {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return
			}
			i += j + 4
		case c == '"' || c == '\'':
			_, i = cssString(s, i)
		case c == '\\':
			i += 2 // an escaped character is never the start of a token
		case c == '@' && hasPrefixFold(s[i+1:], "import"):
			i = skipSpace(s, i+len("@import"))
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				var ref string
				ref, i = cssString(s, i)
				if !emitRef(ref, emit) {
					return
				}
			}
		case (c == 'u' || c == 'U') && hasPrefixFold(s[i:], "url(") && !identBefore(s, i):
			var ref string
			ref, i = cssURL(s, i+len("url("))
			if !emitRef(ref, emit) {
				return
			}
		case (c == 'i' || c == 'I') && hasPrefixFold(s[i:], "image-set(") && !alnumBefore(s, i):
			var ok bool
			if i, ok = cssImageSet(s, i+len("image-set("), emit); !ok {
				return
			}
		default:
			i++
		}
	}
}

func emitRef(ref string, emit func(string) bool) bool {
	if strings.TrimSpace(ref) == "" {
		return true
	}
	return emit(ref)
}

// cssImageSet emits the string and url() candidates of image-set(...),
// returning the index after its closing parenthesis and whether to go on.
func cssImageSet(s string, i int, emit func(string) bool) (int, bool) {
	depth := 0
	for i < len(s) {
		switch c := s[i]; {
		case c == '"' || c == '\'':
			var ref string
			ref, i = cssString(s, i)
			// Strings nested in functions, as in type("image/avif"), are
			// not URLs.
			if depth == 0 && !emitRef(ref, emit) {
				return i, false
			}
		case (c == 'u' || c == 'U') && hasPrefixFold(s[i:], "url("):
			var ref string
			ref, i = cssURL(s, i+len("url("))
			if !emitRef(ref, emit) {
				return i, false
			}
		case c == '(':
			depth++
			i++
		case c == ')':
			i++
			if depth == 0 {
				return i, true
			}
			depth--
		default:
			i++
		}
	}
	return i, true
}

// cssString reads the quoted string starting at s[i] and returns its
// unescaped value and the index after the closing quote. An unescaped
// newline or the end of input ends a bad string.
func cssString(s string, i int) (string, int) {
	q := s[i]
	var b strings.Builder
	for i++; i < len(s); i++ {
		switch c := s[i]; {
		case c == q:
			return b.String(), i + 1
		case c == '\n':
			return b.String(), i
		case c == '\\':
			i = cssEscape(s, i, &b)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), i
}

// cssURL reads the argument of url( starting at s[i] and returns it and the
// index after the closing parenthesis.
func cssURL(s string, i int) (string, int) {
	i = skipSpace(s, i)
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		ref, j := cssString(s, i)
		j = skipSpace(s, j)
		if j < len(s) && s[j] == ')' {
			j++
		}
		return ref, j
	}
	var b strings.Builder
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c == ')':
			return b.String(), i + 1
		case isSpace(c):
			j := skipSpace(s, i)
			if j < len(s) && s[j] == ')' {
				return b.String(), j + 1
			}
			// A bad url: skip it up to its end.
			if k := strings.IndexByte(s[j:], ')'); k >= 0 {
				return "", j + k + 1
			}
			return "", len(s)
		case c == '\\':
			i = cssEscape(s, i, &b)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), i
}

// cssEscape decodes the escape at s[i] (a backslash) into b and returns the
// index of its last byte.
func cssEscape(s string, i int, b *strings.Builder) int {
	if i+1 >= len(s) {
		return i
	}
	if s[i+1] == '\n' {
		return i + 1 // line continuation
	}
	j := i + 1
	for j < len(s) && j < i+7 && isHex(s[j]) {
		j++
	}
	if j == i+1 {
		b.WriteByte(s[i+1])
		return i + 1
	}
	n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
	r := rune(n)
	if r == 0 || r > utf8.MaxRune || (r >= 0xD800 && r <= 0xDFFF) {
		r = utf8.RuneError
	}
	b.WriteRune(r)
	if j < len(s) && isSpace(s[j]) {
		return j
	}
	return j - 1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func alnumBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	c := s[i-1]
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// identBefore reports whether s[i] continues an identifier, so "myurl(" is
// not taken for "url(".
func identBefore(s string, i int) bool {
	return alnumBefore(s, i) || (i > 0 && s[i-1] == '-')
}
