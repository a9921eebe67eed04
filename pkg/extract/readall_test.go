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
		{"size only", io.NewSectionReader(strings.NewReader(long), 0, int64(len(long))), 1 << 20, long, false, nil},
		{"size understated", sizeOnly{strings.NewReader(long), 10}, 1 << 20, long, false, nil},
		{"size overstated", sizeOnly{strings.NewReader(long), 1 << 19}, 1 << 20, long, false, nil},
		{"size over the limit", sizeOnly{strings.NewReader(long), int64(len(long))}, 25, long[:25], true, nil},
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

// sizeOnly tells a size, right or wrong, but not a length, as the
// worker's bodies and spooled files do.
type sizeOnly struct {
	io.Reader
	size int64
}

func (s sizeOnly) Size() int64 { return s.size }

// TestReadAllSizedAllocatesOnce: a reader that tells its size, and not
// its length, is read into one buffer, not one doubled up from 512 bytes
// (a 3.6 MB script cost 9% of a crawl's CPU that way).
func TestReadAllSizedAllocatesOnce(t *testing.T) {
	data := strings.Repeat("x", 1<<20)
	allocs := testing.AllocsPerRun(5, func() {
		lr := &limitReader{r: sizeOnly{strings.NewReader(data), int64(len(data))}, n: DefaultMaxBytes}
		if got, err := readAll(lr); err != nil || len(got) != len(data) {
			t.Fatalf("readAll = %d bytes, %v", len(got), err)
		}
	})
	if allocs > 4 {
		t.Errorf("readAll of a sized 1 MiB reader made %v allocations, want at most 4 (the buffer, the readers)", allocs)
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
