package countio

import (
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	r := &Reader{R: strings.NewReader("hello, world")}
	b, err := io.ReadAll(io.LimitReader(r, 5))
	if err != nil || string(b) != "hello" || r.N != 5 {
		t.Fatalf("read %q (%v), counted %d", b, err, r.N)
	}
}
