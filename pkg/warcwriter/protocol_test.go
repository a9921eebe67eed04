package warcwriter

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
)

// Capture.Protocols become one WARC-Protocol field per value, in order and
// spelled as other writers spell it, on the request record and on the
// response or revisit record, whichever way the block is written; gowarc
// reads them back strictly.
func TestWARCProtocolFields(t *testing.T) {
	protocols := []string{"h2", "tls/1.3"}
	cases := []struct {
		name   string
		change func(f *testFetch)
		typ    gowarc.RecordType
	}{
		{"held response", func(*testFetch) {}, gowarc.Response},
		{"streamed response", func(f *testFetch) { f.c.Response = struct{ io.Reader }{bytes.NewReader(f.raw)} }, gowarc.Response},
		{"caller's block digest", func(f *testFetch) { f.c.BlockDigest = sha1Digest(f.raw) }, gowarc.Response},
		{"revisit", func(f *testFetch) {
			f.c.Revisit = &Revisit{RefersToURI: f.c.URL, RefersToDate: fetchDate.Add(-time.Hour)}
		}, gowarc.Revisit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w, _ := newTestWriter(t, testConfig(dir))
			f := newFetch("https://example.com/h2", fetchDate, []byte("payload"), false)
			f.c.Protocols = protocols
			tc.change(&f)
			if _, err := w.WriteCapture(context.Background(), f.c); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, warcFiles(t, dir)[0])
			recs := readAll(t, path, strictOptions()...)
			seen := 0
			for _, r := range recs {
				got := r.h.GetAll("WARC-Protocol")
				switch r.typ {
				case gowarc.Request, tc.typ:
					seen++
					if !slices.Equal(got, protocols) {
						t.Errorf("%s record: WARC-Protocol %q, want %q", r.typ, got, protocols)
					}
				default:
					if len(got) > 0 {
						t.Errorf("%s record has WARC-Protocol %q", r.typ, got)
					}
				}
				if !r.validation.Valid() {
					t.Errorf("%s record: %s", r.typ, r.validation.String())
				}
			}
			if seen != 2 {
				t.Fatalf("%d request/%s records", seen, tc.typ)
			}
			text := gunzipFile(t, path)
			if n := strings.Count(text, "\r\nWARC-Protocol: h2\r\nWARC-Protocol: tls/1.3\r\n"); n != 2 {
				t.Fatalf("the two fields appear in that spelling and order in %d records, want 2", n)
			}
		})
	}
}

func gunzipFile(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A protocol value that would not be one field value is refused before
// anything is written.
func TestWARCProtocolBadInput(t *testing.T) {
	for _, bad := range []string{"", "h2 tls/1.3", "h2,tls/1.3", "h2\r\nWARC-Type: resource"} {
		w, _ := newTestWriter(t, testConfig(t.TempDir()))
		f := newFetch("https://example.com/h2", fetchDate, []byte("payload"), false)
		f.c.Protocols = []string{"h2", bad}
		_, err := w.WriteCapture(context.Background(), f.c)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "Protocols[1]") {
			t.Errorf("Protocols %q: err %v, want ErrInvalidInput naming Protocols[1]", f.c.Protocols, err)
		}
	}
}
