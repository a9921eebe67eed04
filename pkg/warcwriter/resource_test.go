package warcwriter

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/nlnwa/gowarc"
)

// TestWriteResource writes a screenshot-like resource with its metadata
// record and reads both back strictly: digests verified, the metadata
// linked to the resource, in each WARC version.
func TestWriteResource(t *testing.T) {
	for _, vc := range versionCases() {
		t.Run(vc.name(), func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(dir)
			cfg.Version = vc.setting
			w, _ := newTestWriter(t, cfg)
			date := newFakeClock().Now()
			png := body(7, 5000)
			loc, err := w.WriteResource(context.Background(), Resource{
				URL: "screenshot:http://example.com/", Date: date, ContentType: "image/png", Block: png,
				Fields: [][2]string{{"viewport", "1280x960"}, {"renderedAt", "2026-11-25T10:00:00Z"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			res := readMember(t, dir, loc)
			if res.typ != gowarc.Resource || string(res.block) != string(png) || !res.validation.Valid() {
				t.Fatalf("resource: %s, %d bytes, %v", res.typ, len(res.block), res.validation)
			}
			wantHeader(t, res, gowarc.WarcPayloadDigest, sha1Digest(png))
			wantHeader(t, res, gowarc.WarcBlockDigest, sha1Digest(png))
			wantHeader(t, res, gowarc.ContentType, "image/png")
			recs := readAll(t, filepath.Join(dir, loc.Filename), strictOptions()...)
			if len(recs) != 3 || recs[2].typ != gowarc.Metadata {
				t.Fatalf("records: %d", len(recs))
			}
			wantHeader(t, recs[2], gowarc.WarcConcurrentTo, "<"+res.id+">")
			if got := recs[2].fields.Get("viewport"); got != "1280x960" {
				t.Errorf("viewport field %q", got)
			}
		})
	}
}

func TestBadResource(t *testing.T) {
	w, _ := newTestWriter(t, testConfig(t.TempDir()))
	date := newFakeClock().Now()
	for _, r := range []Resource{
		{URL: "", Date: date, ContentType: "image/png"},
		{URL: "screenshot:http://x/ y", Date: date, ContentType: "image/png"},
		{URL: "screenshot:http://x/", ContentType: "image/png"},
		{URL: "screenshot:http://x/", Date: date},
		{URL: "screenshot:http://x/", Date: date, ContentType: "text/html", Fields: [][2]string{{"a:b", "c"}}},
	} {
		if _, err := w.WriteResource(context.Background(), r); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%+v: %v, want ErrInvalidInput", r, err)
		}
	}
}

// A metadata block (yt-dlp's JSON at youtube-dl:<url>) is written as a
// metadata record with its own type and digests, valid to a strict reader.
func TestWriteMetadataBlock(t *testing.T) {
	dir := t.TempDir()
	w, _ := newTestWriter(t, testConfig(dir))
	js := []byte(`{"id":"v","formats":[{"format_id":"hls-0","url":"http://example.com/v0/index.m3u8"}]}`)
	loc, err := w.WriteResource(context.Background(), Resource{URL: "youtube-dl:http://example.com/page", Date: newFakeClock().Now(),
		ContentType: "application/vnd.youtube-dl_formats+json;charset=utf-8", Block: js, Metadata: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rec := readMember(t, dir, loc)
	if rec.typ != gowarc.Metadata || string(rec.block) != string(js) || !rec.validation.Valid() {
		t.Fatalf("record: %s, %q, %v", rec.typ, rec.block, rec.validation)
	}
	wantHeader(t, rec, gowarc.WarcTargetURI, "youtube-dl:http://example.com/page")
	wantHeader(t, rec, gowarc.WarcBlockDigest, sha1Digest(js))
}
