// Package countio counts the bytes that pass through a reader.
package countio

import "io"

// Reader counts the bytes read through R in N.
type Reader struct {
	R io.Reader
	N int64
}

// Read reads from R and counts what it got.
func (c *Reader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}
