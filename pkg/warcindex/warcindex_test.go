package warcindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/nlnwa/gowarc"
	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// written is a record written by warcwriter and the line it must index to.
type written struct {
	loc  warcwriter.Location
	want cdx.Line // without Offset, Length, Filename (taken from loc)
}

var date = time.Date(2024, 1, 17, 9, 0, 2, 801_000_000, time.UTC)

// writeWARC writes captures of every kind with pkg/warcwriter (gowarc
// underneath), the way the crawler writes them, and returns the file and
// what each indexed record must look like.
func writeWARC(t *testing.T) (string, []written) {
	t.Helper()
	dir := t.TempDir()
	var closed []warcwriter.ClosedFile
	w, err := warcwriter.New(warcwriter.Config{Dir: dir, Prefix: "TEST", Hostname: "testhost"},
		warcwriter.WithBufferDir(t.TempDir()), warcwriter.WithOnClose(func(cf warcwriter.ClosedFile) { closed = append(closed, cf) }))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var out []written
	capture := func(url, resp string, rev *warcwriter.Revisit, want cdx.Line) {
		t.Helper()
		c := warcwriter.Capture{
			URL: url, Date: date, IP: "192.0.2.1",
			Request:  []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
			Response: strings.NewReader(resp), ResponseLength: int64(len(resp)),
			PayloadDigest: "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
			Metadata:      &warcwriter.Metadata{Via: "http://example.org/", HopsFromSeed: "L"},
			Revisit:       rev,
		}
		loc, err := w.WriteCapture(ctx, c)
		if err != nil {
			t.Fatalf("write %s: %v", url, err)
		}
		want.Original, want.Timestamp, want.Digest = url, "20240117090002", "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
		out = append(out, written{loc, want})
	}
	capture("http://example.org/", "HTTP/1.1 200 OK\r\nContent-Type: Text/HTML; charset=utf-8\r\nContent-Length: 5\r\n\r\nhello",
		nil, cdx.Line{URLKey: "org,example)/", Mimetype: "text/html", Status: "200"})
	capture("http://example.org/old", "HTTP/1.1 301 Moved Permanently\r\nLocation: http://example.org/new\r\nContent-Length: 0\r\n\r\n",
		nil, cdx.Line{URLKey: "org,example)/old", Mimetype: "unk", Status: "301", Redirect: "http://example.org/new"})
	capture("http://example.org/missing?b=2&a=1", "HTTP/1.0 404 Not Found\r\nlocation: http://example.org/ignored\r\n\r\n"+strings.Repeat("x", 100000),
		nil, cdx.Line{URLKey: "org,example)/missing?a=1&b=2", Mimetype: "unk", Status: "404"})
	capture("https://www.example.org/", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		&warcwriter.Revisit{RefersToURI: "http://example.org/", RefersToDate: date.Add(-time.Hour)},
		cdx.Line{URLKey: "org,example)/", Mimetype: cdx.RevisitMime, Status: "200"})
	loc, err := w.WriteDNS(ctx, "example.org", date, "192.0.2.53", []byte("20240117090002\nexample.org. 300 IN A 192.0.2.1\n"))
	if err != nil {
		t.Fatal(err)
	}
	// A dns: line carries the digest of the answer (the block, which is
	// the payload), as the crawled event's content_digest does.
	out = append(out, written{loc, cdx.Line{URLKey: "dns:example.org", Original: "dns:example.org", Timestamp: "20240117090002", Mimetype: "text/dns",
		Status: "200", Digest: "BPV2MSSWCDTJGWAJYCYQSPONLUPHDJLN"}})
	// A renderer's screenshot: a resource without a status, and its
	// warc-fields metadata record, which gets no line.
	loc, err = w.WriteResource(ctx, warcwriter.Resource{URL: "screenshot:http://example.org/", Date: date, ContentType: "image/png",
		Block: []byte("png"), Fields: [][2]string{{"viewport", "1280x800"}}})
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, written{loc, cdx.Line{URLKey: "screenshot:http://example.org", Original: "screenshot:http://example.org/", Timestamp: "20240117090002",
		Mimetype: "image/png", Digest: "SBAKPVWN66QNNSVRQI4DDRWOW7IBV6L7"}}) // SHA-1 of "png"
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(closed) != 1 {
		t.Fatalf("%d files written, want 1", len(closed))
	}
	for i := range out {
		out[i].loc.Filename = closed[0].Name
	}
	return closed[0].Path, out
}

func indexAll(t *testing.T, path string) ([]cdx.Line, []*RecordError) {
	t.Helper()
	var lines []cdx.Line
	var errs []*RecordError
	_, err := IndexFile(context.Background(), path, func(l cdx.Line) error {
		lines = append(lines, l)
		return nil
	}, func(e *RecordError) { errs = append(errs, e) })
	if err != nil {
		t.Fatal(err)
	}
	return lines, errs
}

func TestIndexWARCGz(t *testing.T) {
	path, recs := writeWARC(t)
	lines, errs := indexAll(t, path)
	if len(errs) != 0 {
		t.Fatalf("errors on a good file: %v", errs)
	}
	if len(lines) != len(recs) {
		t.Fatalf("%d lines, want %d:\n%v", len(lines), len(recs), lines)
	}
	for i, r := range recs {
		want := r.want
		want.Offset, want.Length, want.Filename = r.loc.Offset, r.loc.Length, r.loc.Filename
		if lines[i] != want {
			t.Errorf("record %d:\n%+v\nwant\n%+v", i, lines[i], want)
		}
	}
	checkReadBack(t, path, lines, true)
}

// versionLine matches the start of a WARC/1.0 or WARC/1.1 record.
var versionLine = regexp.MustCompile(`^WARC/1\.[01]\r\n`)

// checkReadBack reads the record at each line's offset with gowarc and
// checks its URL; for gzip it also checks that [offset, offset+length) is
// exactly one gzip member holding the whole record.
func checkReadBack(t *testing.T, path string, lines []cdx.Line, gz bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		wr, err := gowarc.NewWarcFileReader(path, l.Offset)
		if err != nil {
			t.Fatal(err)
		}
		rec, _, _, err := wr.Next()
		if err != nil {
			t.Fatalf("read record at %d: %v", l.Offset, err)
		}
		if got := rec.WarcHeader().Get(gowarc.WarcTargetURI); got != l.Original {
			t.Errorf("record at %d has URL %q, line says %q", l.Offset, got, l.Original)
		}
		_ = rec.Close()
		_ = wr.Close()
		section := io.NewSectionReader(f, l.Offset, l.Length)
		var data []byte
		if gz {
			zr, err := gzip.NewReader(section)
			if err != nil {
				t.Fatalf("member at %d: %v", l.Offset, err)
			}
			zr.Multistream(false)
			if data, err = io.ReadAll(zr); err != nil {
				t.Fatalf("member at %d: %v", l.Offset, err)
			}
			if rest, _ := io.ReadAll(section); len(rest) != 0 {
				t.Errorf("member at %d ends %d bytes before offset+length", l.Offset, len(rest))
			}
		} else if data, err = io.ReadAll(section); err != nil {
			t.Fatal(err)
		}
		if !versionLine.Match(data) || !bytes.HasSuffix(data, []byte("\r\n\r\n")) {
			t.Errorf("bytes at %d+%d are not one whole record", l.Offset, l.Length)
		}
	}
}

// members splits a .warc.gz file into its decompressed records.
func members(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	br := bytes.NewReader(data)
	var out [][]byte
	for br.Len() > 0 {
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		m, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func TestIndexPlainWARC(t *testing.T) {
	gzPath, recs := writeWARC(t)
	ms := members(t, gzPath)
	plain := filepath.Join(t.TempDir(), "plain.warc")
	if err := os.WriteFile(plain, bytes.Join(ms, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	gzLines, _ := indexAll(t, gzPath)
	lines, errs := indexAll(t, plain)
	if len(errs) != 0 || len(lines) != len(recs) {
		t.Fatalf("%d lines, errors %v", len(lines), errs)
	}
	// Offsets in the plain file are sums of record lengths.
	var offsets []int64
	var off int64
	for _, m := range ms {
		offsets = append(offsets, off)
		off += int64(len(m))
	}
	for i, l := range lines {
		g := gzLines[i]
		g.Filename = "plain.warc"
		g.Offset, g.Length = l.Offset, l.Length
		if l != g {
			t.Errorf("plain line %d differs from gz line:\n%+v\n%+v", i, l, g)
		}
		found := false
		for j, o := range offsets {
			if o == l.Offset && int64(len(ms[j])) == l.Length {
				found = true
			}
		}
		if !found {
			t.Errorf("line %d: offset %d length %d is no record boundary", i, l.Offset, l.Length)
		}
	}
	checkReadBack(t, plain, lines, false)
}

// rawRecord is a WARC record with the given fields and block.
func rawRecord(warcType, uri, warcDate, contentType, block string) string {
	return fmt.Sprintf("WARC/1.1\r\nWARC-Type: %s\r\nWARC-Target-URI: %s\r\nWARC-Date: %s\r\nWARC-Record-ID: <urn:uuid:1>\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n",
		warcType, uri, warcDate, contentType, len(block), block)
}

func gzipped(t *testing.T, parts ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, p := range parts {
		if _, err := zw.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const okResponse = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nok"

func TestCorruptWARCs(t *testing.T) {
	rec := func(n int) string {
		return rawRecord("response", fmt.Sprintf("http://example.org/%d", n), "2024-01-17T09:00:02Z", "application/http;msgtype=response", okResponse)
	}
	m0, m1, m2 := gzipped(t, rec(0)), gzipped(t, rec(1)), gzipped(t, rec(2))
	corrupt := append([]byte(nil), m1...)
	for i := 20; i < len(corrupt)-10; i++ {
		corrupt[i] ^= 0x55
	}
	badDate := gzipped(t, rawRecord("response", "http://example.org/d", "yesterday", "application/http;msgtype=response", okResponse))
	noURI := gzipped(t, strings.Replace(rec(9), "WARC-Target-URI: http://example.org/9\r\n", "", 1))
	shortBlock := strings.Replace(rec(1), fmt.Sprintf("Content-Length: %d", len(okResponse)), "Content-Length: 10", 1)
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	l0 := int64(len(m0))

	type wantErr struct {
		offset int64
		text   string
	}
	tests := []struct {
		name     string
		data     []byte
		wantURLs []string
		wantOffs []int64
		wantErrs []wantErr
	}{
		{"good", join(m0, m1, m2), []string{"/0", "/1", "/2"}, []int64{0, l0, l0 + int64(len(m1))}, nil},
		{"corrupt member", join(m0, corrupt, m2), []string{"/0", "/2"}, []int64{0, l0 + int64(len(corrupt))},
			[]wantErr{{l0, ""}}}, // a flate or checksum error, depending on the damage
		{"truncated", join(m0, m1[:len(m1)/2]), []string{"/0"}, []int64{0}, []wantErr{{l0, "unexpected EOF"}}},
		{"garbage between members", join(m0, []byte("garbage!"), m2), []string{"/0", "/2"}, []int64{0, l0 + 8},
			[]wantErr{{l0, "gzip member header"}}},
		{"bad date", join(m0, badDate, m2), []string{"/0", "/2"}, []int64{0, l0 + int64(len(badDate))},
			[]wantErr{{l0, `WARC-Date "yesterday"`}}},
		{"no target uri", join(noURI, m0), []string{"/0"}, []int64{int64(len(noURI))}, []wantErr{{0, "no WARC-Target-URI"}}},
		{"two records in one member", join(gzipped(t, rec(0), rec(1)), m2), []string{"/2"}, []int64{int64(len(gzipped(t, rec(0), rec(1))))},
			[]wantErr{{0, "more bytes after the record"}}},
		{"empty member", join(gzipped(t), m0), []string{"/0"}, []int64{int64(len(gzipped(t)))}, []wantErr{{0, "empty gzip member"}}},
		{"not a warc", gzipped(t, "hello world\n"), nil, nil, []wantErr{{0, "WARC/ version line"}}},
		{"empty file", nil, nil, nil, nil},
		{"plain short block", []byte(rec(0) + shortBlock + rec(2)), []string{"/0", "/2"}, []int64{0, int64(len(rec(0)) + len(shortBlock))},
			[]wantErr{{int64(len(rec(0))), "CRLF CRLF"}}},
		{"plain garbage", []byte(rec(0) + "junk\r\n" + rec(2)), []string{"/0", "/2"}, []int64{0, int64(len(rec(0))) + 6},
			[]wantErr{{int64(len(rec(0))), "WARC/ version line"}}},
		{"plain header without colon", []byte(strings.Replace(rec(0), "WARC-Record-ID: <urn:uuid:1>", "WARC-Record-ID <urn-uuid-1>", 1) + rec(2)), []string{"/2"}, []int64{int64(len(rec(0))) - 1},
			[]wantErr{{0, "has no colon"}}},
		{"plain truncated", []byte(rec(0) + rec(1)[:40]), []string{"/0"}, []int64{0}, []wantErr{{int64(len(rec(0))), "unexpected EOF"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.warc.gz")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			lines, errs := indexAll(t, path)
			var urls []string
			var offs []int64
			for _, l := range lines {
				urls = append(urls, strings.TrimPrefix(l.Original, "http://example.org"))
				offs = append(offs, l.Offset)
			}
			if fmt.Sprint(urls) != fmt.Sprint(tc.wantURLs) || fmt.Sprint(offs) != fmt.Sprint(tc.wantOffs) {
				t.Errorf("lines %v at %v, want %v at %v", urls, offs, tc.wantURLs, tc.wantOffs)
			}
			if len(errs) != len(tc.wantErrs) {
				t.Fatalf("errors %v, want %v", errs, tc.wantErrs)
			}
			for i, w := range tc.wantErrs {
				e := errs[i]
				if e.Offset != w.offset || !strings.Contains(e.Error(), w.text) || !strings.HasPrefix(e.Error(), "x.warc.gz: record at offset ") {
					t.Errorf("error %q (offset %d), want offset %d and %q", e, e.Offset, w.offset, w.text)
				}
			}
			if len(lines) > 0 && tc.data[0] == 0x1f {
				checkReadBack(t, path, lines, true)
			}
		})
	}
}

func TestIndexFileErrors(t *testing.T) {
	if _, err := IndexFile(context.Background(), filepath.Join(t.TempDir(), "none.warc.gz"), nil, nil); err == nil {
		t.Error("missing file: no error")
	}
	path, _ := writeWARC(t)
	stop := errors.New("stop")
	if _, err := IndexFile(context.Background(), path, func(cdx.Line) error { return stop }, nil); !errors.Is(err, stop) {
		t.Errorf("emit error not returned: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := IndexFile(ctx, path, func(cdx.Line) error { return nil }, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	st, err := IndexFile(context.Background(), path, func(cdx.Line) error { return nil }, nil)
	// warcinfo, 4 x (request, response or revisit, metadata), dns,
	// resource and its metadata
	if err != nil || st.Indexed != 6 || st.Records != 16 || st.Errors != 0 {
		t.Errorf("stats %+v, %v; want 6 indexed of 16 records", st, err)
	}
}

func TestIsWARC(t *testing.T) {
	gzPath, _ := writeWARC(t)
	dir := t.TempDir()
	files := map[string][]byte{
		"plain.warc": []byte(rawRecord("resource", "http://x/", "2024-01-01T00:00:00Z", "text/plain", "x")),
		"lines.cdx":  []byte("org,x)/ 20240101000000 http://x/ text/html 200 - - - 1 0 f\n"),
		"lines.gz":   gzipped(t, "org,x)/ 20240101000000 http://x/\n"),
		"empty":      nil,
	}
	want := map[string]bool{"plain.warc": true, "lines.cdx": false, "lines.gz": false, "empty": false}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := IsWARC(f)
		if err != nil || got != want[name] {
			t.Errorf("%s: %v %v, want %v", name, got, err, want[name])
		}
		if pos, _ := f.Seek(0, io.SeekCurrent); pos != 0 {
			t.Errorf("%s: IsWARC moved the file to %d", name, pos)
		}
		f.Close()
	}
	f, err := os.Open(gzPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := IsWARC(f); !ok || err != nil {
		t.Errorf("warc.gz: %v %v", ok, err)
	}
}

// buildRecord builds a WARC record from a version line, fields and a block.
func buildRecord(version string, fields [][2]string, block string) string {
	var b strings.Builder
	b.WriteString(version + "\r\n")
	for _, f := range fields {
		b.WriteString(f[0] + ": " + f[1] + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s\r\n\r\n", len(block), block)
	return b.String()
}

// Each record shape the indexer meets (both WARC versions, both spellings
// of the msgtype parameter, second-precision, fractional and 14-digit
// dates, relative redirects, dns: answers, revisits of both profiles,
// resource and metadata records) gives the line ARCHITECTURE.md section 11
// sets out: pywb's indexer's, except where that table says otherwise.
// Records pywb's indexer leaves out (request, warcinfo, warc-fields
// resource and metadata, text/anvl metadata) get no line.
func TestRecordFields(t *testing.T) {
	const (
		target = "http://example.org/docs/a/page.html?q=1"
		pd     = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
		bd     = "sha1:BPV2MSSWCDTJGWAJYCYQSPONLUPHDJLN"
	)
	redirect := func(status, location string) string {
		return "HTTP/1.1 " + status + "\r\nLocation: " + location + "\r\nContent-Type: text/html\r\nContent-Length: 0\r\n\r\n"
	}
	tests := []struct {
		name    string
		version string
		typ     string
		uri     string
		date    string
		ctype   string
		block   string
		extra   [][2]string
		// noPayloadDigest leaves out WARC-Payload-Digest, which the
		// test adds to every response and revisit otherwise.
		noPayloadDigest bool
		// notIndexed: the record gets no line.
		notIndexed bool
		mime       string
		status     string
		digest     string
		redirect   string
		ts         string
	}{
		{name: "WARC/1.0, msgtype with a space, 14-digit date", version: "WARC/1.0", ctype: "application/http; msgtype=response",
			date: "2024-01-17T09:00:02Z", block: okResponse, mime: "text/plain", status: "200", digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
		{name: "WARC/1.1, msgtype without a space, fractional date", version: "WARC/1.1", ctype: "application/http;msgtype=response",
			date: "2024-01-17T09:00:02.999Z", block: okResponse, mime: "text/plain", status: "200", digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
		{name: "bare 14-digit date", date: "20240117090002", block: okResponse, mime: "text/plain", status: "200", digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
		{name: "date with an offset", date: "2024-01-17T10:00:02+01:00", block: okResponse, mime: "text/plain", status: "200", digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
		{name: "relative redirect", block: redirect("301 Moved", "../b/new.html"), mime: "text/html", status: "301",
			digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", redirect: "http://example.org/docs/b/new.html"},
		{name: "root-relative redirect with a fragment", block: redirect("302 Found", "/login?next=%2F#form"), mime: "text/html", status: "302",
			digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", redirect: "http://example.org/login?next=%2F"},
		{name: "query-only redirect", block: redirect("307 Temporary Redirect", "?q=2"), mime: "text/html", status: "307",
			digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", redirect: "http://example.org/docs/a/page.html?q=2"},
		{name: "protocol-relative redirect", block: redirect("308 Permanent Redirect", "//www.example.org/x"), mime: "text/html", status: "308",
			digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", redirect: "http://www.example.org/x"},
		{name: "absolute redirect to https", block: redirect("301 Moved", "https://example.org/"), mime: "text/html", status: "301",
			digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", redirect: "https://example.org/"},
		{name: "redirect to another scheme kept as sent", block: redirect("302 Found", "ftp://example.org/f"), mime: "text/html", status: "302",
			digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", redirect: "ftp://example.org/f"},
		{name: "the first of two Locations", block: "HTTP/1.1 302 Found\r\nLocation: /first\r\nLocation: /second\r\n\r\n", mime: "unk", status: "302",
			digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", redirect: "http://example.org/first"},
		{name: "Location on a 200 is no redirect", block: redirect("200 OK", "/elsewhere"), mime: "text/html", status: "200",
			digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
		{name: "3xx without Location", block: "HTTP/1.1 300 Multiple Choices\r\n\r\n", mime: "unk", status: "300",
			digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
		{name: "dns answer: status 200, the block digest", uri: "dns:example.org", ctype: "text/dns", block: "20240117090002\nexample.org. 300 IN A 192.0.2.1\n",
			extra: [][2]string{{"WARC-Block-Digest", bd}}, mime: "text/dns", status: "200", digest: "BPV2MSSWCDTJGWAJYCYQSPONLUPHDJLN"},
		{name: "dns answer: a block digest that is not SHA-1 is no digest", uri: "dns:example.org", ctype: "text/dns", block: "x",
			extra: [][2]string{{"WARC-Block-Digest", "sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}}, mime: "text/dns", status: "200"},
		{name: "other non-HTTP response: status 200", uri: "whois://whois.example/example.org", ctype: "text/plain", block: "Domain: example.org\n",
			extra: [][2]string{{"WARC-Block-Digest", bd}}, mime: "text/plain", status: "200", digest: "BPV2MSSWCDTJGWAJYCYQSPONLUPHDJLN"},
		{name: "resource: no status, the block digest", typ: "resource", ctype: "image/png", block: "png",
			extra: [][2]string{{"WARC-Block-Digest", bd}}, mime: "image/png", digest: "BPV2MSSWCDTJGWAJYCYQSPONLUPHDJLN"},
		{name: "resource: the payload digest first", typ: "resource", uri: "screenshot:http://example.org/", ctype: "Image/PNG; x=1", block: "png",
			extra: [][2]string{{"WARC-Payload-Digest", pd}, {"WARC-Block-Digest", bd}}, mime: "image/png", digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
		{name: "resource of warc-fields: no line", typ: "resource", ctype: "application/warc-fields", block: "a: b\r\n", notIndexed: true},
		{name: "metadata: no status, the block digest", typ: "metadata", uri: "metadata://gnu.org/software/wget/warc/wget.log", ctype: "text/plain", block: "log",
			extra: [][2]string{{"WARC-Block-Digest", bd}}, mime: "text/plain", digest: "BPV2MSSWCDTJGWAJYCYQSPONLUPHDJLN"},
		{name: "metadata of warc-fields: no line", typ: "metadata", ctype: "application/warc-fields", block: "via: http://example.org/\r\n", notIndexed: true},
		{name: "Heritrix 1 metadata of text/anvl: no line", typ: "metadata", ctype: "text/anvl", block: "via: http://example.org/\r\n", notIndexed: true},
		{name: "request: no line", typ: "request", ctype: "application/http; msgtype=request", block: "GET / HTTP/1.1\r\n\r\n", notIndexed: true},
		{name: "warcinfo: no line", typ: "warcinfo", ctype: "application/warc-fields", block: "software: x\r\n", notIndexed: true},
		{name: "identical-payload-digest revisit", typ: "revisit", block: "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
			mime: cdx.RevisitMime, status: "200", digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
			extra: [][2]string{{"WARC-Profile", "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"}, {"WARC-Block-Digest", bd}}},
		{name: "server-not-modified revisit", typ: "revisit", block: "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n",
			mime: cdx.RevisitMime, status: "304", digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
			extra: [][2]string{{"WARC-Profile", "http://netpreserve.org/warc/1.0/revisit/server-not-modified"}, {"WARC-Block-Digest", bd}}},
		{name: "revisit without a payload digest", typ: "revisit", block: "HTTP/1.1 304 Not Modified\r\n\r\n", noPayloadDigest: true,
			mime: cdx.RevisitMime, status: "304", extra: [][2]string{{"WARC-Block-Digest", bd}}},
		{name: "revisit of a redirect keeps its redirect", typ: "revisit", block: redirect("301 Moved", "/new"),
			mime: cdx.RevisitMime, status: "301", digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", redirect: "http://example.org/new",
			extra: [][2]string{{"WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"}, {"WARC-Block-Digest", bd}}},
		{name: "revisit with an empty block", typ: "revisit", block: "", mime: cdx.RevisitMime, digest: "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			version, typ, uri, date, ctype, ts := tc.version, tc.typ, tc.uri, tc.date, tc.ctype, tc.ts
			if version == "" {
				version = "WARC/1.0"
			}
			if typ == "" {
				typ = "response"
			}
			if uri == "" {
				uri = target
			}
			if date == "" {
				date = "2024-01-17T09:00:02Z"
			}
			if ctype == "" {
				ctype = "application/http; msgtype=response"
			}
			if ts == "" {
				ts = "20240117090002"
			}
			fields := [][2]string{{"WARC-Type", typ}, {"WARC-Target-URI", uri}, {"WARC-Date", date},
				{"WARC-Record-ID", "<urn:uuid:1>"}, {"Content-Type", ctype}}
			if (typ == "response" || typ == "revisit") && strings.HasPrefix(ctype, "application/http") && !tc.noPayloadDigest {
				fields = append(fields, [2]string{"WARC-Payload-Digest", pd})
			}
			fields = append(fields, tc.extra...)
			data := gzipped(t, buildRecord(version, fields, tc.block))
			path := filepath.Join(t.TempDir(), "r.warc.gz")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			lines, errs := indexAll(t, path)
			if tc.notIndexed {
				if len(errs) != 0 || len(lines) != 0 {
					t.Errorf("lines %v, errors %v; want neither", lines, errs)
				}
				return
			}
			if len(errs) != 0 || len(lines) != 1 {
				t.Fatalf("lines %v, errors %v", lines, errs)
			}
			got := lines[0]
			if got.Mimetype != tc.mime || got.Status != tc.status || got.Digest != tc.digest || got.Redirect != tc.redirect ||
				got.Timestamp != ts || got.Original != uri || got.Offset != 0 || got.Length != int64(len(data)) {
				t.Errorf("line %s\nwant mime %q status %q digest %q redirect %q timestamp %s", got.CDX11(), tc.mime, tc.status, tc.digest, tc.redirect, ts)
			}
		})
	}
}
