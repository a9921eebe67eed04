package replay

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// Each of pywb's cases, against the embedded index and against the same
// index over OutbackCDX's HTTP API.
func TestResolveFollowsPywb(t *testing.T) {
	f := newFixture(t)
	type want struct {
		status    int
		body      string
		via       Via
		from      string // WARC-Target-URI of the payload's record
		fromSec   int    // and its time
		header    [2]string
		capturSec int // the capture replayed
	}
	tests := []struct {
		name            string
		url             string
		sec             int
		resolveRevisits bool
		want            want
	}{
		{"response (case 2)", "http://a.test/page", 10, false,
			want{200, "page v1", ViaRecord, "http://a.test/page", 10, [2]string{"Content-Type", "text/html"}, 10}},
		{"same-URL revisit by Refers-To (case 1)", "http://a.test/page", 20, false,
			want{200, "page v1", ViaRefersTo, "http://a.test/page", 10, [2]string{"X-Fetch", "2"}, 20}},
		{"same-URL revisit by orig fields (case 3)", "http://a.test/page", 20, true,
			want{200, "page v1", ViaOrigFields, "http://a.test/page", 10, [2]string{"X-Fetch", "2"}, 20}},
		{"closest capture wins", "http://a.test/page", 16, false,
			want{200, "page v1", ViaRefersTo, "http://a.test/page", 10, [2]string{"X-Fetch", "2"}, 20}},
		{"different-URL revisit (case 1)", "http://b.test/copy", 30, false,
			want{200, "page v1", ViaRefersTo, "http://a.test/page", 10, [2]string{"Content-Type", "text/html"}, 30}},
		{"different-URL revisit with resolveRevisits still looks up", "http://b.test/copy", 30, true,
			want{200, "page v1", ViaRefersTo, "http://a.test/page", 10, [2]string{"Content-Type", "text/html"}, 30}},
		// pywb replays a 304 revisit as it is: its status starts with 3.
		{"server-not-modified revisit is a 304", "http://a.test/cond", 40, false,
			want{304, "", ViaRedirectRevisit, "http://a.test/cond", 40, [2]string{"Content-Length", "0"}, 40}},
		{"3xx revisit as it is", "http://a.test/moved", 50, false,
			want{301, "", ViaRedirectRevisit, "http://a.test/moved", 50, [2]string{"Content-Length", "0"}, 50}},
		{"3xx response", "http://a.test/moved", 10, false,
			want{301, "moved", ViaRecord, "http://a.test/moved", 10, [2]string{"Location", "http://a.test/page"}, 10}},
		{"empty-digest revisit is its own payload", "http://a.test/empty", 60, false,
			want{200, "", ViaEmptyDigest, "http://a.test/empty", 60, [2]string{"Content-Length", "0"}, 60}},
		{"self-redirect skipped for the next capture", "http://a.test/self", 70, false,
			want{200, "self ok", ViaRecord, "http://a.test/self", 10, [2]string{}, 10}},
		{"resource record replays as 200", "http://a.test/shot.png", 10, false,
			want{200, "not really a png", ViaRecord, "http://a.test/shot.png", 10, [2]string{"Content-Type", "image/png"}, 10}},
	}
	for _, b := range backends {
		for _, tc := range tests {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				r := f.resolver(t, b.index(t, f), tc.resolveRevisits)
				resp, err := r.Resolve(context.Background(), tc.url, ts(tc.sec))
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(resp.Body)
				if cerr := resp.Body.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					t.Fatal(err)
				}
				w := tc.want
				if resp.StatusCode != w.status || string(body) != w.body || resp.Via != w.via {
					t.Errorf("got %d %q via %s, want %d %q via %s", resp.StatusCode, body, resp.Via, w.status, w.body, w.via)
				}
				if resp.Payload.TargetURI != w.from || resp.Payload.Date != at(w.fromSec).Format("2006-01-02T15:04:05Z") {
					t.Errorf("payload from %s at %s, want %s at %s", resp.Payload.TargetURI, resp.Payload.Date, w.from, at(w.fromSec))
				}
				if w.header[0] != "" && resp.Header.Get(w.header[0]) != w.header[1] {
					t.Errorf("header %s: %q, want %q (all: %v)", w.header[0], resp.Header.Get(w.header[0]), w.header[1], resp.Header)
				}
				if resp.Capture.Timestamp != ts(w.capturSec) {
					t.Errorf("replayed the capture at %s, want %s", resp.Capture.Timestamp, ts(w.capturSec))
				}
			})
		}
	}
}

// Every way a lookup or a load can fail says so, and Resolve tries the
// next closest capture when one fails, as pywb does.
func TestResolveErrors(t *testing.T) {
	f := newFixture(t)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ix := b.index(t, f)
			r := f.resolver(t, ix, false)
			tests := []struct {
				name, url, ts string
				is            error
				text          string
			}{
				{"no capture", "http://a.test/nothing", ts(10), ErrNotFound, "no capture of the URL"},
				{"original in no index", "http://a.test/lost", ts(80), ErrMissingOriginal, "no capture of http://a.test/gone with digest"},
				{"bad timestamp", "http://a.test/page", "2025-05", nil, `timestamp "2025-05": want 1 to 14 digits`},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					resp, err := r.Resolve(context.Background(), tc.url, tc.ts)
					if err == nil {
						_ = resp.Body.Close()
						t.Fatalf("replayed %d, want an error", resp.StatusCode)
					}
					if (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.text) {
						t.Errorf("error %q, want %v saying %q", err, tc.is, tc.text)
					}
				})
			}

			t.Run("next closest when the closest file is missing", func(t *testing.T) {
				// The directory with the capture at 90 is gone; the one at
				// 10 is in the other.
				gone := filepath.Dir(f.files[f.line(t, "http://a.test/two", 90).Filename])
				kept := slices.DeleteFunc(slices.Clone(f.dirs), func(d string) bool { return d == gone })
				if filepath.Dir(f.files[f.line(t, "http://a.test/two", 10).Filename]) == gone {
					t.Fatal("the fixture wrote both captures to one directory")
				}
				only, err := New(Options{Index: ix, Records: NewDirs(kept...)})
				if err != nil {
					t.Fatal(err)
				}
				resp, err := only.Resolve(context.Background(), "http://a.test/two", ts(90))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if string(body) != "two v1" || len(resp.Skipped) != 1 || !errors.Is(resp.Skipped[0], ErrUnknownFile) {
					t.Errorf("got %q, skipped %v; want the capture at 10 after one ErrUnknownFile", body, resp.Skipped)
				}
			})
		})
	}
}

// The record loader's errors, through an index holding lines that point
// at files and offsets that are wrong on purpose.
func TestResolveBadRecords(t *testing.T) {
	f := newFixture(t)
	page := f.line(t, "http://a.test/page", 10)
	revisit := f.line(t, "http://a.test/page", 20)
	big := f.line(t, "http://a.test/big", 10)
	broken := t.TempDir()
	// A copy of the big page's file cut in the middle of its payload.
	copyFile(t, f.files[big.Filename], broken, "cut-body.warc.gz", int(big.Offset+big.Length/2))
	plain := writePlainWARC(t, broken)
	edit := func(l cdx.Line, change func(*cdx.Line)) cdx.Line { change(&l); return l }
	tests := []struct {
		name   string
		lines  []cdx.Line // the first is replayed
		is     error
		text   string
		atRead bool // the error comes from reading the body
	}{
		{"unknown filename", []cdx.Line{edit(page, func(l *cdx.Line) { l.Filename = "nowhere.warc.gz" })},
			ErrUnknownFile, "nowhere.warc.gz", false},
		{"filename with a directory", []cdx.Line{edit(page, func(l *cdx.Line) { l.Filename = "../" + l.Filename })},
			ErrUnknownFile, "not a plain file name", false},
		{"offset not at a record", []cdx.Line{edit(page, func(l *cdx.Line) { l.Offset++ })},
			ErrNotRecord, "offset is not at a WARC record", false},
		{"offset past the end", []cdx.Line{edit(page, func(l *cdx.Line) { l.Offset = 1 << 40 })},
			ErrNotRecord, "the file has", false},
		{"record longer than its index length", []cdx.Line{edit(page, func(l *cdx.Line) { l.Length = 40 })},
			ErrTruncated, "WARC header", false},
		{"file cut inside the payload", []cdx.Line{edit(big, func(l *cdx.Line) { l.Filename, l.Length = "cut-body.warc.gz", -1 })},
			ErrTruncated, "cut-body.warc.gz at offset", true},
		{"revisit without Refers-To-Target-URI", []cdx.Line{plain.noRefers},
			ErrMissingOriginal, "Original for revisit record could not be loaded: the revisit record has no WARC-Refers-To-Target-URI", false},
		{"plain WARC cut inside its header", []cdx.Line{plain.cutHeader},
			ErrTruncated, "WARC header", false},
		{"revisit whose original's file is missing", []cdx.Line{revisit, edit(page, func(l *cdx.Line) { l.Filename = "nowhere.warc.gz" })},
			ErrMissingOriginal, "nowhere.warc.gz", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(Options{Index: indexOf(t, tc.lines), Records: NewDirs(append([]string{broken}, f.dirs...)...)})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := r.Resolve(context.Background(), tc.lines[0].Original, tc.lines[0].Timestamp)
			if tc.atRead {
				if err != nil {
					t.Fatalf("Resolve: %v, want the error when reading", err)
				}
				_, err = io.ReadAll(resp.Body)
				_ = resp.Body.Close()
			} else if err == nil {
				_ = resp.Body.Close()
				t.Fatalf("replayed %d, want an error", resp.StatusCode)
			}
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %q, want %v saying %q", err, tc.is, tc.text)
			}
		})
	}
}

// An old-style revisit with no HTTP header of its own replays with its
// original's header and payload.
func TestResolveRevisitWithoutHTTPHeader(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	plain := writePlainWARC(t, dir)
	r, err := New(Options{Index: indexOf(t, []cdx.Line{plain.emptyRevisit, f.line(t, "http://a.test/page", 10)}),
		Records: NewDirs(append([]string{dir}, f.dirs...)...)})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.Resolve(context.Background(), plain.emptyRevisit.Original, plain.emptyRevisit.Timestamp)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || string(body) != "page v1" || resp.Header.Get("Content-Type") != "text/html" || resp.Via != ViaRefersTo {
		t.Errorf("got %d %q %v via %s, want the page's 200, header and body", resp.StatusCode, body, resp.Header, resp.Via)
	}
}
