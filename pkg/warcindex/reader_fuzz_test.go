package warcindex

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// fuzzRecord is one WARC record as a writer frames it.
func fuzzRecord(typ, uri, contentType, block string, extra ...string) string {
	var b strings.Builder
	b.WriteString("WARC/1.0\r\nWARC-Type: " + typ + "\r\nWARC-Target-URI: " + uri +
		"\r\nWARC-Date: 2024-01-17T09:00:02Z\r\nWARC-Payload-Digest: sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ\r\n")
	for _, e := range extra {
		b.WriteString(e + "\r\n")
	}
	b.WriteString("Content-Type: " + contentType + "\r\nContent-Length: ")
	b.WriteString(strconv.Itoa(len(block)) + "\r\n\r\n" + block + "\r\n\r\n")
	return b.String()
}

// gzipMembers compresses each record as its own member.
func gzipMembers(f *testing.F, recs ...string) []byte {
	var out bytes.Buffer
	for _, r := range recs {
		zw := gzip.NewWriter(&out)
		if _, err := zw.Write([]byte(r)); err != nil {
			f.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			f.Fatal(err)
		}
	}
	return out.Bytes()
}

// FuzzReader indexes fuzzed bytes as a WARC file (plain, or gzipped when
// the bytes start with the gzip magic), as `trawler cdx index` does. The
// reader must reach the end in bounded work whatever the file holds; every
// skipped record is a *RecordError with an offset inside the file; every
// line points inside the file, after the previous one, and formats as a
// well-formed CDX11 line that parses back to itself with a lower-case key.
func FuzzReader(f *testing.F) {
	resp := fuzzRecord("response", "http://Example.org/a?b=2&a=1", "application/http; msgtype=response",
		"HTTP/1.1 301 Moved\r\nLocation: /new\r\nContent-Type: Text/HTML\r\n\r\nbody")
	revisit := fuzzRecord("revisit", "<https://www.example.org/>", "application/http;msgtype=response",
		"HTTP/1.1 200 OK\r\n\r\n")
	dns := fuzzRecord("resource", "dns:example.org", "text/dns", "20240117090002\nexample.org. 300 IN A 192.0.2.1\n",
		"WARC-Block-Digest: sha1:AAAA")
	req := fuzzRecord("request", "http://example.org/", "application/http; msgtype=request", "GET / HTTP/1.1\r\n\r\n")
	plain := resp + req + revisit + dns
	f.Add([]byte(plain))
	f.Add([]byte(resp + "garbage\r\n" + dns))
	f.Add([]byte(strings.Replace(plain, "Content-Length: ", "Content-Length: 9", 1)))
	f.Add([]byte(strings.Replace(resp, "\r\n", "\n", 8)))
	f.Add(gzipMembers(f, resp, req, revisit, dns))
	f.Add(gzipMembers(f, resp+dns))
	z := gzipMembers(f, resp, dns)
	f.Add(append(z[:len(z)/2:len(z)/2], z...))
	f.Add([]byte{0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte("WARC/1.0\r\nContent-Length: -1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), "fuzz.warc.gz")
		if err != nil {
			t.Fatal(err)
		}
		last := int64(-1)
		// Every call moves on by at least a byte: len(b)+2 calls are
		// enough to reach the end of anything.
		for i := 0; ; i++ {
			if i > len(b)+2 {
				t.Fatalf("no end after %d calls of Next on %d bytes", i, len(b))
			}
			l, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			var rerr *RecordError
			if errors.As(err, &rerr) {
				if rerr.Offset < 0 || rerr.Offset >= int64(len(b)) || rerr.Err == nil {
					t.Fatalf("record error %v at offset %d of %d bytes", rerr, rerr.Offset, len(b))
				}
				continue
			}
			if err != nil {
				t.Fatalf("reading from memory failed: %v", err)
			}
			if l.Offset <= last || l.Length <= 0 || l.Offset+l.Length > int64(len(b)) {
				t.Fatalf("line at %d+%d after %d in %d bytes", l.Offset, l.Length, last, len(b))
			}
			last = l.Offset
			checkCDXLine(t, l)
		}
		st := r.Stats()
		if st.Indexed > st.Records || st.Errors < 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

func checkCDXLine(t *testing.T, l cdx.Line) {
	t.Helper()
	s := l.CDX11()
	if strings.ContainsAny(s, "\n") {
		t.Fatalf("CDX line holds a newline: %q", s)
	}
	back, err := cdx.ParseCDX11(s)
	if err != nil {
		t.Fatalf("line %q does not parse back: %v", s, err)
	}
	want := l
	for _, p := range []*string{&want.URLKey, &want.Original, &want.Mimetype, &want.Status, &want.Digest, &want.Redirect, &want.RobotFlags, &want.Filename} {
		*p = strings.ReplaceAll(*p, " ", "%20")
		if *p == "-" {
			*p = ""
		}
	}
	want.Digest = back.Digest // ParseCDX11 strips anything up to a colon
	if back != want {
		t.Fatalf("line %q parses back as %+v, want %+v", s, back, want)
	}
	if strings.Contains(l.URLKey, ")/") && l.URLKey != strings.ToLower(l.URLKey) {
		t.Fatalf("urlkey %q is not lower-case", l.URLKey)
	}
}
