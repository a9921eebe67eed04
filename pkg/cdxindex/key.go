package cdxindex

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Key space. Capture keys start with prefixCapture, per-collection metadata
// (the entry count) with prefixMeta; see the package comment for the layout.
const (
	prefixMeta    byte = 0x00
	prefixCapture byte = 0x01
	valueVersion  byte = 1
)

// collectionPrefix is the start of every capture key of collection.
func collectionPrefix(collection string) []byte {
	b := make([]byte, 0, len(collection)+2)
	b = append(b, prefixCapture)
	b = append(b, collection...)
	return append(b, 0)
}

// metaKey is the key of collection's entry count.
func metaKey(collection string) []byte {
	return append([]byte{prefixMeta}, collection...)
}

// appendKey appends c's key under collection prefix cp.
func appendKey(dst, cp []byte, c *capture) []byte {
	dst = append(dst, cp...)
	dst = append(dst, c.urlkey...)
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.timestamp))
	dst = append(dst, c.filename...)
	dst = append(dst, 0)
	return binary.BigEndian.AppendUint64(dst, uint64(c.offset))
}

// urlTimeKey is the seek key for (urlkey, timestamp): before every capture
// of urlkey at that time, after every earlier one.
func urlTimeKey(cp []byte, urlkey string, ts int64) []byte {
	dst := make([]byte, 0, len(cp)+len(urlkey)+9)
	dst = append(dst, cp...)
	dst = append(dst, urlkey...)
	dst = append(dst, 0)
	return binary.BigEndian.AppendUint64(dst, uint64(ts))
}

var errBadKey = errors.New("malformed capture key")

// decodeKey fills c's key fields from key, which starts with a collection
// prefix of length cpLen.
func decodeKey(key []byte, cpLen int, c *capture) error {
	if len(key) < cpLen+1+8+1+8 {
		return fmt.Errorf("%w: %d bytes", errBadKey, len(key))
	}
	k := key[cpLen:]
	end := len(k) - 8
	off := binary.BigEndian.Uint64(k[end:])
	if k[end-1] != 0 {
		return fmt.Errorf("%w: no filename terminator", errBadKey)
	}
	i := indexByte(k[:end-1], 0)
	if i < 0 || i+9 > end-1 {
		return fmt.Errorf("%w: no urlkey terminator", errBadKey)
	}
	c.urlkey = string(k[:i])
	c.timestamp = int64(binary.BigEndian.Uint64(k[i+1 : i+9]))
	c.filename = string(k[i+9 : end-1])
	c.offset = int64(off)
	return nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// appendValue appends the encoding of c's non-key fields.
func appendValue(dst []byte, c *capture) []byte {
	dst = append(dst, valueVersion)
	dst = appendString(dst, c.original)
	dst = binary.AppendVarint(dst, c.status)
	dst = appendString(dst, c.mimetype)
	dst = binary.AppendVarint(dst, c.length)
	dst = binary.AppendUvarint(dst, uint64(len(c.digest)))
	dst = append(dst, c.digest...)
	dst = appendString(dst, c.redirect)
	dst = appendString(dst, c.robotflags)
	dst = binary.AppendVarint(dst, c.origLength)
	dst = binary.AppendVarint(dst, c.origOffset)
	return appendString(dst, c.origFile)
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// valueDecoder reads the fields appendValue wrote, remembering the first
// error so that decodeValue stays linear.
type valueDecoder struct {
	b   []byte
	err error
}

func (d *valueDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errors.New("truncated number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *valueDecoder) bytes() []byte {
	if d.err != nil {
		return nil
	}
	l, n := binary.Uvarint(d.b)
	if n <= 0 || uint64(len(d.b)-n) < l {
		d.err = errors.New("truncated string")
		return nil
	}
	out := d.b[n : n+int(l)]
	d.b = d.b[n+int(l):]
	return out
}

func (d *valueDecoder) string() string { return string(d.bytes()) }

// decodeValue fills c's non-key fields from v.
func decodeValue(v []byte, c *capture) error {
	if len(v) == 0 || v[0] != valueVersion {
		return fmt.Errorf("capture value: unknown encoding version")
	}
	d := valueDecoder{b: v[1:]}
	c.original = d.string()
	c.status = d.varint()
	c.mimetype = d.string()
	c.length = d.varint()
	if dg := d.bytes(); len(dg) > 0 {
		c.digest = append([]byte(nil), dg...)
	} else {
		c.digest = nil
	}
	c.redirect = d.string()
	c.robotflags = d.string()
	c.origLength = d.varint()
	c.origOffset = d.varint()
	c.origFile = d.string()
	if d.err != nil {
		return fmt.Errorf("capture value: %w", d.err)
	}
	return nil
}
