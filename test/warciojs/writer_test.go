package warciojs

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

func sha1Digest(b []byte) string {
	sum := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// httpResponse is a raw response as the fetcher keeps it, and the entity
// its payload digest is over (de-chunked, content coding kept).
type httpResponse struct {
	raw, entity []byte
}

func plainResponse(status, headers string, body []byte) httpResponse {
	head := fmt.Sprintf("HTTP/1.1 %s\r\n%sContent-Length: %d\r\n\r\n", status, headers, len(body))
	return httpResponse{raw: append([]byte(head), body...), entity: body}
}

// chunkedResponse sends body in chunks of n bytes with Transfer-Encoding
// chunked, so the block digest covers the framing and the payload digest
// does not.
func chunkedResponse(headers string, body []byte, n int) httpResponse {
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 200 OK\r\n" + headers + "Transfer-Encoding: chunked\r\n\r\n")
	for rest := body; len(rest) > 0; {
		c := rest[:min(n, len(rest))]
		rest = rest[len(c):]
		fmt.Fprintf(&b, "%x\r\n%s\r\n", len(c), c)
	}
	b.WriteString("0\r\n\r\n")
	return httpResponse{raw: b.Bytes(), entity: body}
}

// Every kind of record pkg/warcwriter writes, in both WARC versions:
// warcinfo, request, response (plain, chunked with a gzip content coding,
// a redirect, one larger than the indexers' read buffers), metadata, dns,
// a resource (a renderer's screenshot) and revisits of both profiles
// (identical-payload-digest and server-not-modified). warcio.js reads them
// all, every digest it can compute matches, its index agrees with `trawler
// cdx index`, and each revisit resolves to its original.
func TestWriterRecordKindsReadInWarcio(t *testing.T) {
	w := findWarcio(t)
	for _, version := range []string{warcwriter.Version10, warcwriter.Version11} {
		t.Run("WARC/"+version, func(t *testing.T) {
			files := writeEveryKind(t, version)
			rep := w.run(t, files)
			rep.writeTo(t)
			recs := checkRecords(t, rep)
			kinds := map[string]int{}
			for _, r := range recs {
				if r.Version != "WARC/"+version {
					t.Errorf("%s: version %q, want WARC/%s", r, r.Version, version)
				}
				k := recordKind(r)
				if r.Type == "revisit" {
					k += " " + r.Profile[strings.LastIndex(r.Profile, "/")+1:]
				}
				kinds[k]++
			}
			want := map[string]int{"warcinfo": 1, "request": 6, "response": 4, "metadata": 7, "dns": 1, "resource": 1,
				"revisit identical-payload-digest": 1, "revisit server-not-modified": 1}
			if fmt.Sprint(kinds) != fmt.Sprint(want) {
				t.Errorf("records by kind %v, want %v", kinds, want)
			}
			if n := compareCDX(t, rep); n != 8 {
				t.Errorf("%d index lines compared, want 8 (4 responses, 2 revisits, dns, resource)", n)
			}
			checkRevisits(t, recs)
		})
	}
}

// writeEveryKind writes the captures of TestWriterRecordKindsReadInWarcio
// to a new directory and returns the finished files.
func writeEveryKind(t *testing.T, version string) []string {
	t.Helper()
	dir := t.TempDir()
	wr, err := warcwriter.New(warcwriter.Config{Dir: dir, Prefix: "WARCIOJS", Hostname: "test-host", CrawlName: "warciojs",
		Operator: "Trawler tests", RobotsPolicy: "obey", UserAgent: "trawler-test/1.0", Version: version})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = wr.Close()
		}
	})
	ctx := context.Background()
	start := time.Date(2024, 5, 1, 12, 0, 0, 250e6, time.UTC)
	request := func(u string) []byte {
		host := strings.SplitN(strings.TrimPrefix(u, "http://"), "/", 2)[0]
		return []byte("GET " + u[len("http://")+len(host):] + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: trawler-test/1.0\r\n\r\n")
	}
	write := func(u string, at time.Time, resp httpResponse, rv *warcwriter.Revisit, digest string) warcwriter.Location {
		t.Helper()
		if digest == "" {
			digest = sha1Digest(resp.entity)
		}
		loc, err := wr.WriteCapture(ctx, warcwriter.Capture{
			URL: u, Date: at, IP: "127.0.0.2", Request: request(u),
			Response: bytes.NewReader(resp.raw), ResponseLength: int64(len(resp.raw)), PayloadDigest: digest,
			Metadata: &warcwriter.Metadata{Via: "http://www.example.test/", HopsFromSeed: "L", SourceTag: "http://www.example.test/",
				FetchTimeMs: 12, Outlinks: []warcwriter.Outlink{{URL: "http://www.example.test/next", Hop: "L", Context: "a/@href"}}},
			Revisit: rv,
		})
		if err != nil {
			t.Fatalf("write %s: %v", u, err)
		}
		return loc
	}
	if _, err := wr.WriteDNS(ctx, "www.example.test", start, "127.0.0.53",
		[]byte("20240501120000\nwww.example.test.\t300\tIN\tA\t127.0.0.2\n")); err != nil {
		t.Fatal(err)
	}
	page := plainResponse("200 OK", "Content-Type: text/html; charset=utf-8\r\nETag: \"v1\"\r\n",
		[]byte("<html><body><a href=\"/next\">next</a></body></html>\n"))
	orig := write("http://www.example.test/", start, page, nil, "")

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(bytes.Repeat([]byte("body { color: black }\n"), 200))
	_ = zw.Close()
	write("http://www.example.test/style.css", start, chunkedResponse("Content-Type: text/css\r\nContent-Encoding: gzip\r\n", gz.Bytes(), 100), nil, "")
	write("http://www.example.test/old", start, plainResponse("301 Moved Permanently",
		"Location: /new\r\nContent-Type: text/html\r\n", []byte("<a href=\"/new\">moved</a>")), nil, "")
	// Larger than the buffers both indexers read a record's start through.
	big := bytes.Repeat([]byte("0123456789abcdef"), 700<<10/16)
	write("http://www.example.test/big.bin", start, plainResponse("200 OK", "Content-Type: application/octet-stream\r\n", big), nil, "")

	// The same page a second later, unchanged: identical-payload-digest.
	later := start.Add(2 * time.Second)
	write("http://www.example.test/", later, page,
		&warcwriter.Revisit{RefersToURI: "http://www.example.test/", RefersToDate: start, RefersToRecordID: orig.RecordID}, "")
	// And once more, answered 304 to a conditional request: the block is
	// the 304's header, the payload digest the original's.
	notModified := plainResponse("304 Not Modified", "ETag: \"v1\"\r\n", nil)
	write("http://www.example.test/", later.Add(2*time.Second), notModified,
		&warcwriter.Revisit{RefersToURI: "http://www.example.test/", RefersToDate: start, RefersToRecordID: orig.RecordID, NotModified: true},
		sha1Digest(page.entity))

	// A renderer's screenshot: a resource and its warc-fields metadata.
	if _, err := wr.WriteResource(ctx, warcwriter.Resource{URL: "screenshot:http://www.example.test/", Date: later,
		ContentType: "image/png", Block: []byte("\x89PNG\r\n\x1a\n"), Fields: [][2]string{{"viewport", "1280x800"}}}); err != nil {
		t.Fatal(err)
	}

	closed = true
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	if len(files) != 1 {
		t.Fatalf("want one WARC file in %s, have %v", dir, files)
	}
	return files
}
