package extract

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadAll reads whole inputs, sized or not, cut at the limit (and
// then marked truncated only when the input goes on), and keeps what came
// before a read error.
func TestReadAll(t *testing.T) {
	long := strings.Repeat("abcdefghij", 1000)
	boom := errors.New("boom")
	for _, tc := range []struct {
		name      string
		r         io.Reader
		limit     int64
		want      string
		truncated bool
		err       error
	}{
		{"sized", bytes.NewReader([]byte(long)), 1 << 20, long, false, nil},
		{"unsized", iotest.OneByteReader(strings.NewReader(long)), 1 << 20, long, false, nil},
		{"sized exactly the limit", strings.NewReader(long), int64(len(long)), long, false, nil},
		{"sized over the limit", strings.NewReader(long), 25, long[:25], true, nil},
		{"unsized over the limit", iotest.HalfReader(strings.NewReader(long)), 25, long[:25], true, nil},
		{"empty", strings.NewReader(""), 10, "", false, nil},
		{"error after data", io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), 10, "abc", false, boom},
		{"error at once", iotest.ErrReader(boom), 10, "", false, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr := &limitReader{r: tc.r, n: tc.limit}
			got, err := readAll(lr)
			if got != tc.want || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("readAll = %d bytes, %v; want %d bytes, %v", len(got), err, len(tc.want), tc.err)
			}
			if lr.truncated != tc.truncated {
				t.Errorf("truncated = %v, want %v", lr.truncated, tc.truncated)
			}
		})
	}
}

// BenchmarkReadAll compares reading a 200 KB script the way JS does now
// with io.ReadAll and a string copy.
func BenchmarkReadAll(b *testing.B) {
	data := []byte(strings.Repeat("var a = 'x/y.html';\n", 10000))
	b.Run("readAll", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := readAll(&limitReader{r: bytes.NewReader(data), n: DefaultMaxBytes}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("io.ReadAll+string", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			d, err := io.ReadAll(&limitReader{r: bytes.NewReader(data), n: DefaultMaxBytes})
			if err != nil {
				b.Fatal(err)
			}
			_ = string(d)
		}
	})
}
