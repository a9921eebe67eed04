package warcwriter

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nlnwa/gowarc"
)

// A resource written from a reader is the same record a []byte block
// makes: same block, same digests, valid to a strict reader, whatever
// offset the reader starts at.
func TestWriteResourceFrom(t *testing.T) {
	for _, vc := range versionCases() {
		t.Run(vc.name(), func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(dir)
			cfg.Version = vc.setting
			w, _ := newTestWriter(t, cfg)
			date := newFakeClock().Now()
			block := body(3, 3<<20) // past gowarc's in-memory buffer
			src := bytes.NewReader(append([]byte("skipped"), block...))
			if _, err := src.Seek(7, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			loc, err := w.WriteResourceFrom(context.Background(), Resource{URL: "metadata://x/crawl.log", Date: date, ContentType: "text/plain"},
				src, int64(len(block)))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			res := readMember(t, dir, loc)
			if res.typ != gowarc.Resource || !bytes.Equal(res.block, block) || !res.validation.Valid() {
				t.Fatalf("resource: %s, %d bytes, %v", res.typ, len(res.block), res.validation)
			}
			wantHeader(t, res, gowarc.WarcPayloadDigest, sha1Digest(block))
			wantHeader(t, res, gowarc.WarcBlockDigest, sha1Digest(block))
			if recs := readAll(t, filepath.Join(dir, loc.Filename), strictOptions()...); len(recs) != 2 {
				t.Fatalf("records: %d", len(recs))
			}
		})
	}
}

// A reader shorter than the size given, a Block given too, or a bad URL
// are refused as invalid input, and nothing is written.
func TestWriteResourceFromBad(t *testing.T) {
	w, _ := newTestWriter(t, testConfig(t.TempDir()))
	date := newFakeClock().Now()
	for _, tc := range []struct {
		name string
		r    Resource
		src  string
		size int64
		want string
	}{
		{"short reader", Resource{URL: "metadata://x/a", Date: date, ContentType: "text/plain"}, "abc", 10, "size says 10"},
		{"block too", Resource{URL: "metadata://x/a", Date: date, ContentType: "text/plain", Block: []byte("x")}, "abc", 3, "Block"},
		{"bad URL", Resource{URL: "metadata://x/ a", Date: date, ContentType: "text/plain"}, "abc", 3, "URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.WriteResourceFrom(context.Background(), tc.r, strings.NewReader(tc.src), tc.size)
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want ErrInvalidInput mentioning %q", err, tc.want)
			}
		})
	}
}
