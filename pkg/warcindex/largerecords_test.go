package warcindex

import (
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // SHA-1 is what WARC digests use
	"encoding/base32"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/surt"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// span is one gzip member of a file: where it is and what it holds.
type span struct {
	offset, length int64
	plain          []byte // the decompressed record
}

// spans splits a .warc.gz file into its members.
func spans(t *testing.T, data []byte) []span {
	t.Helper()
	br := bytes.NewReader(data)
	var out []span
	for br.Len() > 0 {
		start := int64(len(data) - br.Len())
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatalf("member at %d: %v", start, err)
		}
		zr.Multistream(false)
		m, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("member at %d: %v", start, err)
		}
		out = append(out, span{start, int64(len(data)-br.Len()) - start, m})
	}
	return out
}

func sha1B32(b []byte) string {
	sum := sha1.Sum(b) //nolint:gosec // SHA-1 is what WARC digests use
	return base32.StdEncoding.EncodeToString(sum[:])
}

// bigWARC is a file written by warcwriter with many small captures, then
// large ones, then small ones again, and the line each indexed record must
// give (Offset and Length are those of the member in the file as written).
type bigWARC struct {
	data  []byte
	spans []span
	want  map[int64]cdx.Line // by member offset
	// members of interest, by index into spans
	big, redirect int
}

// writeBigWARC writes the captures. Bodies are random bytes so that gzip
// cannot shrink them: compressed offsets then pass 256 KiB (the largest
// HTTP header peek) early and stay below bufferBytes until the large
// responses, so a test can move a chosen record onto that boundary.
func writeBigWARC(t *testing.T) bigWARC {
	t.Helper()
	var closed []warcwriter.ClosedFile
	w, err := warcwriter.New(warcwriter.Config{Dir: t.TempDir(), Prefix: "BIG", Hostname: "testhost"},
		warcwriter.WithBufferDir(t.TempDir()), warcwriter.WithOnClose(func(cf warcwriter.ClosedFile) { closed = append(closed, cf) }))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	body := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	when := time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC)
	bw := bigWARC{want: map[int64]cdx.Line{}}
	capture := func(url string, head string, payload []byte, rev *warcwriter.Revisit, digest string, want cdx.Line) {
		t.Helper()
		resp := append([]byte(head), payload...)
		if digest == "" {
			digest = sha1B32(payload)
		}
		loc, err := w.WriteCapture(ctx, warcwriter.Capture{
			URL: url, Date: when, IP: "192.0.2.7",
			Request:  []byte("GET / HTTP/1.1\r\nHost: example.org\r\n\r\n"),
			Response: bytes.NewReader(resp), ResponseLength: int64(len(resp)),
			PayloadDigest: "sha1:" + digest,
			Metadata:      &warcwriter.Metadata{Via: "http://example.org/", HopsFromSeed: "L"},
			Revisit:       rev,
		})
		if err != nil {
			t.Fatalf("write %s: %v", url, err)
		}
		key, err := surt.CDXKey(url)
		if err != nil {
			t.Fatal(err)
		}
		want.URLKey, want.Timestamp, want.Original, want.Digest = key, "20240304050607", url, digest
		want.Offset, want.Length = loc.Offset, loc.Length
		bw.want[loc.Offset] = want
	}
	page := func(i, size int) {
		capture(fmt.Sprintf("http://example.org/small/%d.html", i), "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n\r\n",
			body(size), nil, "", cdx.Line{Mimetype: "text/html", Status: "200"})
	}
	for i := range 70 {
		page(i, 3000+i)
	}
	capture("http://example.org/docs/a/old.html", "HTTP/1.1 301 Moved Permanently\r\nLocation: ../b/new.html?x=1\r\nContent-Type: text/html\r\nContent-Length: 3\r\n\r\n",
		[]byte("bye"), nil, "", cdx.Line{Mimetype: "text/html", Status: "301", Redirect: "http://example.org/docs/b/new.html?x=1"})
	for i := 70; i < 80; i++ {
		page(i, 3000)
	}
	// Large responses: over 1 MiB, over bufferBytes, between the peek
	// size and bufferBytes, and just over the peek size.
	big := body(1<<20 + 300<<10)
	capture("http://example.org/files/big.bin", "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 1355776\r\n\r\n",
		big, nil, "", cdx.Line{Mimetype: "application/octet-stream", Status: "200"})
	for i, n := range []int{bufferBytes + 1, 400 << 10, maxHTTPHeaderBytes + 1} {
		capture(fmt.Sprintf("http://example.org/files/%d.bin", i), "HTTP/1.1 200 OK\r\nContent-Type: Application/PDF\r\n\r\n",
			body(n), nil, "", cdx.Line{Mimetype: "application/pdf", Status: "200"})
	}
	capture("http://example.org/moved", "HTTP/1.1 302 Found\r\nLocation: /landing#top\r\n\r\n",
		nil, nil, "", cdx.Line{Mimetype: "unk", Status: "302", Redirect: "http://example.org/landing"})
	// A server-not-modified revisit carries the original's digest, the
	// way the worker writes a 304 to a conditional request.
	capture("http://example.org/files/big.bin", "HTTP/1.1 304 Not Modified\r\nETag: \"b\"\r\n\r\n", nil,
		&warcwriter.Revisit{RefersToURI: "http://example.org/files/big.bin", RefersToDate: when.Add(-time.Hour), NotModified: true},
		sha1B32(big), cdx.Line{Mimetype: cdx.RevisitMime, Status: "304"})
	answer := []byte("20240304050607\nexample.org.\t300\tIN\tA\t192.0.2.7\n")
	loc, err := w.WriteDNS(ctx, "example.org", when, "192.0.2.53", answer)
	if err != nil {
		t.Fatal(err)
	}
	bw.want[loc.Offset] = cdx.Line{URLKey: "dns:example.org", Timestamp: "20240304050607", Original: "dns:example.org",
		Mimetype: "text/dns", Status: "200", Digest: sha1B32(answer), Offset: loc.Offset, Length: loc.Length}
	for i := 80; i < 100; i++ {
		page(i, 2000)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(closed) != 1 {
		t.Fatalf("%d files written, want 1", len(closed))
	}
	if bw.data, err = os.ReadFile(closed[0].Path); err != nil {
		t.Fatal(err)
	}
	bw.spans = spans(t, bw.data)
	for i, s := range bw.spans {
		l, ok := bw.want[s.offset]
		switch {
		case !ok:
		case l.Original == "http://example.org/files/big.bin" && l.Status == "200":
			bw.big = i
		case l.Original == "http://example.org/docs/a/old.html":
			bw.redirect = i
		}
	}
	if bw.big == 0 || bw.redirect == 0 {
		t.Fatal("large or redirect record not found among the members")
	}
	return bw
}

// layout is a variant of the file: gzipped or plain, with a padding record
// inserted before member at so that a chosen byte lands on a chosen offset.
type layout struct {
	plain bool
	at    int    // member index the padding goes before; -1 for none
	pad   []byte // the padding record (gzipped when !plain)
}

// build returns the file and the lines it must index to, in file order.
func (bw bigWARC) build(lay layout) ([]byte, []cdx.Line) {
	var out bytes.Buffer
	var lines []cdx.Line
	for i, s := range bw.spans {
		if i == lay.at {
			out.Write(lay.pad)
		}
		member := s.plain
		if !lay.plain {
			member = bw.data[s.offset : s.offset+s.length]
		}
		if l, ok := bw.want[s.offset]; ok {
			l.Offset, l.Length = int64(out.Len()), int64(len(member))
			lines = append(lines, l)
		}
		out.Write(member)
	}
	return out.Bytes(), lines
}

// offsetOf is where member i starts in the layout without padding.
func (bw bigWARC) offsetOf(i int, plain bool) int64 {
	if !plain {
		return bw.spans[i].offset
	}
	var off int64
	for _, s := range bw.spans[:i] {
		off += int64(len(s.plain))
	}
	return off
}

// padRecord is a warc-fields metadata record (not indexed) of exactly size
// bytes, or of size bytes once gzipped (stored, so the size can be hit
// exactly).
func padRecord(t *testing.T, size int64, gz bool) []byte {
	t.Helper()
	// The block length is solved for; a step in the size of the rest (one
	// more Content-Length digit, one more stored block) can make it jump
	// over size, and a longer URI then shifts the steps.
	for extra := range 10 {
		uri := "http://pad.example/" + strings.Repeat("x", extra)
		n := size / 2
		for range 20 {
			rec := []byte(rawRecord("metadata", uri, "2024-03-04T05:06:07Z", "application/warc-fields", strings.Repeat("p", int(max(n, 0)))))
			if gz {
				var buf bytes.Buffer
				zw, err := gzip.NewWriterLevel(&buf, gzip.NoCompression)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = zw.Write(rec)
				if err := zw.Close(); err != nil {
					t.Fatal(err)
				}
				rec = buf.Bytes()
			}
			diff := size - int64(len(rec))
			if diff == 0 {
				return rec
			}
			n += diff
		}
	}
	t.Fatalf("no padding record of %d bytes (gzip %v)", size, gz)
	return nil
}

// httpHeaderAt is where the HTTP header of the record in a plain member
// starts, relative to the member.
func httpHeaderAt(t *testing.T, rec []byte) int64 {
	t.Helper()
	i := bytes.Index(rec, []byte("\r\n\r\n"))
	if i < 0 || !bytes.HasPrefix(rec[i+4:], []byte("HTTP/1.1 ")) {
		t.Fatalf("member is no HTTP response record: %q", clip(string(rec)))
	}
	return int64(i + 4)
}

// Responses over 1 MiB, responses whose HTTP header starts a few bytes
// before the reader's buffer boundary (and whose gzip member starts there),
// many small records before the large ones and records past 256 KiB all
// index to the lines written, field by field. Before the fix, every
// response whose block was longer than what the buffer held after the
// header peek came out as application/http with no status.
func TestLargeRecordsAndBufferBoundaries(t *testing.T) {
	bw := writeBigWARC(t)
	if off := bw.offsetOf(bw.big, false); off <= maxHTTPHeaderBytes || off >= bufferBytes-4096 {
		t.Fatalf("large record at %d: the captures before it must end between %d and %d", off, maxHTTPHeaderBytes, bufferBytes-4096)
	}
	type variant struct {
		name string
		lay  layout
	}
	variants := []variant{{"gzip as written", layout{at: -1}}, {"plain", layout{plain: true, at: -1}}}
	for _, k := range []int64{1, 2, 7, 300} {
		for _, target := range []struct {
			name string
			i    int
		}{{"large response", bw.big}, {"small redirect", bw.redirect}} {
			// Plain: the HTTP header's first byte lands k bytes before the
			// end of the first buffer fill. Gzip: the member does.
			at := bufferBytes - k - bw.offsetOf(target.i, true) - httpHeaderAt(t, bw.spans[target.i].plain)
			variants = append(variants, variant{fmt.Sprintf("plain, %s header %d bytes before the buffer end", target.name, k),
				layout{plain: true, at: target.i, pad: padRecord(t, at, false)}})
			at = bufferBytes - k - bw.offsetOf(target.i, false)
			variants = append(variants, variant{fmt.Sprintf("gzip, %s member %d bytes before the buffer end", target.name, k),
				layout{at: target.i, pad: padRecord(t, at, true)}})
		}
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			data, want := bw.build(v.lay)
			path := filepath.Join(t.TempDir(), "big.warc.gz")
			if v.lay.plain {
				path = strings.TrimSuffix(path, ".gz")
			}
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			lines, errs := indexAll(t, path)
			if len(errs) != 0 {
				t.Fatalf("errors: %v", errs)
			}
			if len(lines) != len(want) {
				t.Fatalf("%d lines, want %d", len(lines), len(want))
			}
			for i := range want {
				want[i].Filename = filepath.Base(path)
				if lines[i] != want[i] {
					t.Errorf("line %d:\n got %s\nwant %s", i, lines[i].CDX11(), want[i].CDX11())
				}
			}
		})
	}
}

// A corrupt or cut-off large record in the middle of a file is reported
// with the file, its offset and the reason, and the records after it are
// indexed.
func TestLargeRecordDamagedMidFile(t *testing.T) {
	bw := writeBigWARC(t)
	big := bw.spans[bw.big]
	tests := []struct {
		name   string
		plain  bool
		damage func(member []byte) []byte
		reason string
	}{
		{"gzip, corrupt deflate data", false, func(m []byte) []byte {
			m = bytes.Clone(m)
			for i := len(m) / 2; i < len(m)/2+64; i++ {
				m[i] ^= 0xa5
			}
			return m
		}, "gzip"},
		{"gzip, member cut short", false, func(m []byte) []byte { return m[:len(m)/2] }, ""},
		{"plain, block cut short", true, func(m []byte) []byte {
			return append(bytes.Clone(m[:len(m)/2]), m[len(m)/2+1000:]...)
		}, "CRLF CRLF"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, want := bw.build(layout{plain: tc.plain, at: -1})
			start := bw.offsetOf(bw.big, tc.plain)
			member := data[start : start+big.length]
			if tc.plain {
				member = data[start : start+int64(len(big.plain))]
			}
			damaged := tc.damage(member)
			data = append(append(bytes.Clone(data[:start]), damaged...), data[start+int64(len(member)):]...)
			shift := int64(len(damaged) - len(member))
			var kept []cdx.Line
			for _, l := range want {
				switch {
				case l.Offset == start:
					continue
				case l.Offset > start:
					l.Offset += shift
				}
				kept = append(kept, l)
			}
			path := filepath.Join(t.TempDir(), "damaged.warc")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			lines, errs := indexAll(t, path)
			if len(errs) != 1 {
				t.Fatalf("errors %v, want one", errs)
			}
			e := errs[0]
			if e.Filename != "damaged.warc" || e.Offset != start || !strings.Contains(e.Error(), "damaged.warc: record at offset ") ||
				!strings.Contains(e.Error(), tc.reason) {
				t.Errorf("error %q at %d, want damaged.warc, offset %d and %q", e, e.Offset, start, tc.reason)
			}
			if len(lines) != len(kept) {
				t.Fatalf("%d lines, want %d", len(lines), len(kept))
			}
			for i := range kept {
				kept[i].Filename = "damaged.warc"
				if lines[i] != kept[i] {
					t.Errorf("line %d:\n got %s\nwant %s", i, lines[i].CDX11(), kept[i].CDX11())
				}
			}
		})
	}
}
