package cdxindex

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// capture is one index entry with OutbackCDX's field model: absent strings
// are "-", absent numbers -1, the status an int and the timestamp a number.
// Keeping that model (rather than cdx.Line's) is what makes query output
// byte-identical to OutbackCDX's.
type capture struct {
	urlkey     string
	timestamp  int64
	original   string
	mimetype   string
	status     int64
	digest     []byte // base32-decoded, as OutbackCDX stores it
	length     int64
	offset     int64
	filename   string
	redirect   string
	robotflags string
	// CDX14 fields: the original record of a revisit.
	origLength int64
	origOffset int64
	origFile   string
}

// newCapture returns a capture with every field absent.
func newCapture() capture {
	return capture{
		original: "-", mimetype: "-", status: -1, length: -1, offset: -1, filename: "-",
		redirect: "-", robotflags: "-", origLength: -1, origOffset: -1, origFile: "-",
	}
}

// fieldNames are the names a query may use in fl=, filter= and collapse=,
// as OutbackCDX's Capture.get accepts them.
var fieldNames = map[string]bool{
	"urlkey": true, "timestamp": true, "url": true, "original": true, "mime": true,
	"mimetype": true, "statuscode": true, "status": true, "digest": true,
	"redirecturl": true, "redirect": true, "robotflags": true, "length": true,
	"offset": true, "filename": true, "originalLength": true, "originalOffset": true,
	"originalFilename": true, "range": true,
}

// value is a field value as OutbackCDX's Capture.get returns it: a string,
// a number, or null.
type value struct {
	kind valueKind
	s    string
	n    int64
}

type valueKind uint8

const (
	kindNull valueKind = iota
	kindString
	kindNumber
)

func str(s string) value { return value{kind: kindString, s: s} }
func num(n int64) value  { return value{kind: kindNumber, n: n} }
func optNum(n int64) value { // OutbackCDX returns null for an absent length
	if n == -1 {
		return value{}
	}
	return num(n)
}

// text is the value as Java's toString would print it; null is "".
func (v value) text() string {
	switch v.kind {
	case kindString:
		return v.s
	case kindNumber:
		return strconv.FormatInt(v.n, 10)
	}
	return ""
}

// get returns the named field; name must be in fieldNames.
func (c *capture) get(name string) value {
	switch name {
	case "urlkey":
		return str(c.urlkey)
	case "timestamp":
		return num(c.timestamp)
	case "url", "original":
		return str(c.original)
	case "mime", "mimetype":
		return str(c.mimetype)
	case "statuscode", "status":
		return num(c.status)
	case "digest":
		return str(encodeBase32(c.digest))
	case "redirecturl", "redirect":
		return str(c.redirect)
	case "robotflags":
		return str(c.robotflags)
	case "length":
		return optNum(c.length)
	case "offset":
		return num(c.offset)
	case "filename":
		return str(c.filename)
	case "originalLength":
		return optNum(c.origLength)
	case "originalOffset":
		return optNum(c.origOffset)
	case "originalFilename":
		return str(c.origFile)
	case "range":
		if c.length == -1 {
			return str("bytes=" + strconv.FormatInt(c.offset, 10) + "-")
		}
		return str("bytes=" + strconv.FormatInt(c.offset, 10) + "-" + strconv.FormatInt(c.offset+c.length-1, 10))
	}
	return value{}
}

// fromLine converts a cdx.Line as OutbackCDX would store the line's CDX11
// form: empty strings are "-", an empty status is 0 (CDX11 "-"). The URL key
// is the line's (cdx.Line.URLKey is surt.CDXKey of the URL by contract, and
// computing it again costs as much as the rest of a Put); an empty one is
// computed from the original URL.
func fromLine(l cdx.Line) (capture, error) {
	c := newCapture()
	c.original = dash(l.Original)
	c.urlkey = l.URLKey
	if c.urlkey == "" || c.urlkey == "-" {
		c.urlkey = urlKey(l.Original, "")
	}
	if c.urlkey == "" {
		return c, fmt.Errorf("no URL key: original %q cannot be keyed and urlkey is empty", l.Original)
	}
	ts, err := parseTimestamp(l.Timestamp)
	if err != nil {
		return c, err
	}
	c.timestamp = ts
	c.mimetype = dash(l.Mimetype)
	c.status = 0
	if l.Status != "" && l.Status != "-" {
		if c.status, err = parseStatus(l.Status); err != nil {
			return c, err
		}
	}
	c.digest = decodeBase32(stripDigestScheme(l.Digest))
	c.redirect = dash(l.Redirect)
	c.robotflags = dash(l.RobotFlags)
	c.length = l.Length
	c.offset = l.Offset
	c.filename = dash(l.Filename)
	return c, c.checkKeyFields()
}

// checkKeyFields rejects values the key encoding cannot hold.
func (c *capture) checkKeyFields() error {
	if strings.IndexByte(c.urlkey, 0) >= 0 {
		return fmt.Errorf("urlkey %q contains a NUL byte", c.urlkey)
	}
	if strings.IndexByte(c.filename, 0) >= 0 {
		return fmt.Errorf("filename %q contains a NUL byte", c.filename)
	}
	return nil
}

// urlKey is the index key for original, as OutbackCDX recomputes it on
// ingest; the supplied key is kept only when original cannot be keyed.
func urlKey(original, supplied string) string {
	if original != "" && original != "-" {
		if k, err := surt.CDXKey(original); err == nil {
			return k
		}
	}
	if supplied == "-" {
		return ""
	}
	return supplied
}

// parseTimestamp pads a CDX timestamp shorter than 14 digits with zeros, as
// OutbackCDX does, and rejects longer or non-numeric ones.
func parseTimestamp(s string) (int64, error) {
	if s == "" || len(s) > 14 || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("timestamp %q: want up to 14 digits", s)
	}
	s += "00000000000000"[len(s):]
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: %w", s, err)
	}
	return n, nil
}

func parseStatus(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 32) // Java's Integer.parseInt
	if err != nil {
		return 0, fmt.Errorf("status %q is not an integer", s)
	}
	return n, nil
}

func parseLong(field, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not an integer", field, s)
	}
	return n, nil
}

// stripDigestScheme drops "sha1:" the way OutbackCDX does (the part after
// the first colon, up to the next one).
func stripDigestScheme(d string) string {
	if _, after, ok := strings.Cut(d, ":"); ok {
		after, _, _ = strings.Cut(after, ":")
		return after
	}
	return d
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
