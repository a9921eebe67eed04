package cdxindex

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// errAlias marks "@alias" lines, which OutbackCDX supports and this index
// does not.
var errAlias = errors.New("@alias lines are not supported by this index")

// parseIngestLine parses one line POSTed to a collection the way OutbackCDX's
// Capture.fromCdxLine does: CDXJ when the third space-separated field starts
// with "{", otherwise CDX with 9 (N b a m s k r V g), 10 (N b a m s k r M V
// g), 11 (N b a m s k r M S V g) or 14 fields (CDX11 plus the original
// record's length, offset and filename). The first field (urlkey) is
// recomputed from the original URL.
func parseIngestLine(line string) (capture, error) {
	if strings.HasPrefix(line, "@alias ") {
		return capture{}, errAlias
	}
	f := javaSplit(line)
	if len(f) > 2 && strings.HasPrefix(f[2], "{") {
		return parseCDXJLine(line)
	}
	if len(f) < 9 {
		return capture{}, fmt.Errorf("%d space-separated fields, want 9, 10, 11 or 14", len(f))
	}
	c := newCapture()
	var err error
	if c.timestamp, err = parseTimestamp(f[1]); err != nil {
		return c, err
	}
	c.original = f[2]
	c.urlkey = urlKey(f[2], f[0])
	c.mimetype = f[3]
	c.status = 0
	if f[4] != "-" {
		if c.status, err = parseStatus(f[4]); err != nil {
			return c, err
		}
	}
	c.digest = decodeBase32(stripDigestScheme(f[5]))
	c.redirect = f[6]
	if err := parseTail(f, &c); err != nil {
		return c, err
	}
	if c.urlkey == "" {
		return c, errors.New("no URL key")
	}
	return c, c.checkKeyFields()
}

// parseTail reads the fields after the redirect, whose meaning depends on
// the field count.
func parseTail(f []string, c *capture) error {
	var err error
	switch {
	case len(f) >= 11:
		c.robotflags = f[7]
		if f[8] != "-" {
			if c.length, err = parseLong("length", f[8]); err != nil {
				return err
			}
		}
		if c.offset, err = parseLong("offset", f[9]); err != nil {
			return err
		}
		c.filename = f[10]
		if len(f) == 14 {
			return parseCDX14(f, c)
		}
	case len(f) == 10:
		c.robotflags = f[7]
		if c.offset, err = parseLong("offset", f[8]); err != nil {
			return err
		}
		c.filename = f[9]
	default:
		if c.offset, err = parseLong("offset", f[7]); err != nil {
			return err
		}
		c.filename = f[8]
	}
	return nil
}

// parseCDX14 reads the original-record fields; OutbackCDX reads "-" as 0.
func parseCDX14(f []string, c *capture) error {
	var err error
	c.origLength, c.origOffset = 0, 0
	if f[11] != "-" {
		if c.origLength, err = parseLong("originalLength", f[11]); err != nil {
			return err
		}
	}
	if f[12] != "-" {
		if c.origOffset, err = parseLong("originalOffset", f[12]); err != nil {
			return err
		}
	}
	c.origFile = f[13]
	return nil
}

// parseCDXJLine parses "urlkey timestamp {json}". Values are coerced as
// OutbackCDX's Capture.put does: string fields must be JSON strings, number
// fields strings or integers, null means absent. Fields OutbackCDX keeps as
// "extra" (anything else) are dropped.
func parseCDXJLine(line string) (capture, error) {
	parts := strings.SplitN(line, " ", 3)
	c := newCapture()
	var err error
	if c.timestamp, err = parseTimestamp(parts[1]); err != nil {
		return c, err
	}
	dec := json.NewDecoder(strings.NewReader(parts[2]))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil { // like Jackson, ignore what follows the object
		return c, fmt.Errorf("invalid JSON in CDXJ line: %w", err)
	}
	c.original = ""
	for k, v := range m {
		if err := c.put(k, v); err != nil {
			return c, err
		}
	}
	if c.original == "" {
		return c, errors.New("missing 'url' field in CDXJ line")
	}
	c.urlkey = urlKey(c.original, parts[0])
	if c.urlkey == "" {
		return c, errors.New("no URL key")
	}
	return c, c.checkKeyFields()
}

// put sets one CDXJ field.
func (c *capture) put(field string, v any) error {
	var err error
	switch field {
	case "url", "original":
		c.original, err = coerceString(field, v)
	case "mime", "mimetype":
		c.mimetype, err = coerceString(field, v)
	case "status", "statuscode":
		c.status, err = coerceLong(field, v)
	case "digest":
		var d string
		d, err = coerceString(field, v)
		c.digest = decodeBase32(d)
	case "redirect", "redirecturl":
		c.redirect, err = coerceString(field, v)
	case "robotflags":
		c.robotflags, err = coerceString(field, v)
	case "length":
		c.length, err = coerceLong(field, v)
	case "offset":
		c.offset, err = coerceLong(field, v)
	case "filename":
		c.filename, err = coerceString(field, v)
	case "originalLength":
		c.origLength, err = coerceLong(field, v)
	case "originalOffset":
		c.origOffset, err = coerceLong(field, v)
	case "originalFilename":
		c.origFile, err = coerceString(field, v)
	}
	return err
}

func coerceString(field string, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "-", nil
	case string:
		return x, nil
	}
	return "", fmt.Errorf("field %s: want a string, got %s", field, jsonText(v))
}

func coerceLong(field string, v any) (int64, error) {
	switch x := v.(type) {
	case nil:
		return -1, nil
	case string:
		return parseLong(field, x)
	case json.Number:
		return parseLong(field, x.String())
	}
	return 0, fmt.Errorf("field %s: want a number, got %s", field, jsonText(v))
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(bytes.TrimSpace(b))
}

// javaSplit splits on single spaces like Java's String.split(" "): empty
// fields in between are kept, trailing empty fields dropped.
func javaSplit(s string) []string {
	f := strings.Split(s, " ")
	for len(f) > 0 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	return f
}
