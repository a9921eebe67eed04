package cdxindex

import (
	"bufio"
	"strconv"
	"unicode/utf8"
)

// outputFormat writes captures in one of OutbackCDX's output formats.
type outputFormat interface {
	begin(w *bufio.Writer, fields []string)
	capture(w *bufio.Writer, fields []string, c *capture)
	end(w *bufio.Writer)
}

// formatFor returns the format and content type for output=; anything
// unknown is the plain CDX text format, as in OutbackCDX.
func formatFor(output string) (outputFormat, string) {
	switch output {
	case "json":
		return &jsonFormat{}, "application/json"
	case "jsondict":
		return &jsonDictFormat{}, "application/json"
	case "cdxj":
		return cdxjFormat{}, "text/x-cdxj"
	}
	return textFormat{}, "text/plain"
}

// textFormat is space-separated fields, null as "-", one capture a line.
type textFormat struct{}

func (textFormat) begin(*bufio.Writer, []string) {}
func (textFormat) end(*bufio.Writer)             {}

func (textFormat) capture(w *bufio.Writer, fields []string, c *capture) {
	for i, f := range fields {
		if i > 0 {
			w.WriteByte(' ')
		}
		v := c.get(f)
		if v.kind == kindNull {
			w.WriteByte('-')
			continue
		}
		writeText(w, v)
	}
	w.WriteByte('\n')
}

func writeText(w *bufio.Writer, v value) {
	if v.kind == kindNumber {
		var buf [20]byte
		w.Write(strconv.AppendInt(buf[:0], v.n, 10))
		return
	}
	w.WriteString(v.s)
}

// jsonFormat is a JSON array whose first element is the field names and
// each further element one capture's values (numbers as numbers, absent
// length as null), written compactly as Jackson does.
type jsonFormat struct{}

func (f *jsonFormat) begin(w *bufio.Writer, fields []string) {
	w.WriteString("[[")
	for i, name := range fields {
		if i > 0 {
			w.WriteByte(',')
		}
		writeJSONString(w, name)
	}
	w.WriteByte(']')
}

func (f *jsonFormat) capture(w *bufio.Writer, fields []string, c *capture) {
	w.WriteString(",[")
	for i, name := range fields {
		if i > 0 {
			w.WriteByte(',')
		}
		writeJSONValue(w, c.get(name))
	}
	w.WriteByte(']')
}

func (f *jsonFormat) end(w *bufio.Writer) { w.WriteByte(']') }

// jsonDictFormat is a JSON array of objects, leaving out null and "-".
type jsonDictFormat struct{ rows int }

func (f *jsonDictFormat) begin(w *bufio.Writer, _ []string) { w.WriteByte('[') }

func (f *jsonDictFormat) capture(w *bufio.Writer, fields []string, c *capture) {
	if f.rows > 0 {
		w.WriteByte(',')
	}
	f.rows++
	w.WriteByte('{')
	first := true
	for _, name := range fields {
		v := c.get(name)
		if v.kind == kindNull || (v.kind == kindString && v.s == "-") {
			continue
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		writeJSONString(w, name)
		w.WriteByte(':')
		writeJSONValue(w, v)
	}
	w.WriteByte('}')
}

func (f *jsonDictFormat) end(w *bufio.Writer) { w.WriteByte(']') }

// cdxjFormat is "urlkey timestamp {json}" with every value a string and
// null or "-" values left out, as pywb expects.
type cdxjFormat struct{}

func (cdxjFormat) begin(*bufio.Writer, []string) {}
func (cdxjFormat) end(*bufio.Writer)             {}

func (cdxjFormat) capture(w *bufio.Writer, fields []string, c *capture) {
	w.WriteString(c.urlkey)
	w.WriteByte(' ')
	w.WriteString(strconv.FormatInt(c.timestamp, 10))
	w.WriteString(" {")
	first := true
	for _, name := range fields {
		if name == "urlkey" || name == "timestamp" {
			continue
		}
		v := c.get(name)
		if v.kind == kindNull || (v.kind == kindString && v.s == "-") {
			continue
		}
		if !first {
			w.WriteByte(',')
		}
		first = false
		writeJSONString(w, name)
		w.WriteByte(':')
		writeJSONString(w, v.text())
	}
	w.WriteString("}\n")
}

func writeJSONValue(w *bufio.Writer, v value) {
	switch v.kind {
	case kindNull:
		w.WriteString("null")
	case kindNumber:
		writeText(w, v)
	default:
		writeJSONString(w, v.s)
	}
}

const hexUpper = "0123456789ABCDEF"

// writeJSONString quotes s as Jackson does: only '"', '\\' and control
// characters are escaped (\b \t \n \f \r short, others \u00XX in upper
// case); "/", non-ASCII, U+2028 and U+2029 are written as they are.
// Invalid UTF-8 becomes U+FFFD, as Java's decoder would have made it.
func writeJSONString(w *bufio.Writer, s string) {
	w.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				w.WriteString("\uFFFD")
			} else {
				w.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			w.WriteByte('\\')
			w.WriteByte(c)
		case c == '\b':
			w.WriteString(`\b`)
		case c == '\t':
			w.WriteString(`\t`)
		case c == '\n':
			w.WriteString(`\n`)
		case c == '\f':
			w.WriteString(`\f`)
		case c == '\r':
			w.WriteString(`\r`)
		case c < 0x20:
			w.WriteString(`\u00`)
			w.WriteByte(hexUpper[c>>4])
			w.WriteByte(hexUpper[c&0xf])
		default:
			w.WriteByte(c)
		}
		i++
	}
	w.WriteByte('"')
}
