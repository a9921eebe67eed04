package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// cdxTestWARC writes three captures with the crawler's WARC writer and
// returns the file and the locations the writer reported.
func cdxTestWARC(t *testing.T) (string, []warcwriter.Location) {
	t.Helper()
	var closed []warcwriter.ClosedFile
	w, err := warcwriter.New(warcwriter.Config{Dir: t.TempDir(), Prefix: "CDXTEST", Hostname: "h"},
		warcwriter.WithBufferDir(t.TempDir()), warcwriter.WithOnClose(func(cf warcwriter.ClosedFile) { closed = append(closed, cf) }))
	if err != nil {
		t.Fatal(err)
	}
	var locs []warcwriter.Location
	for i, url := range []string{"http://b.example.org/", "http://a.example.org/x", "http://a.example.org/"} {
		resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\npage %d", i)
		loc, err := w.WriteCapture(context.Background(), warcwriter.Capture{
			URL: url, Date: time.Date(2024, 5, 6, 7, 8, 9+i, 0, time.UTC),
			Request:  []byte("GET / HTTP/1.1\r\n\r\n"),
			Response: strings.NewReader(resp), ResponseLength: int64(len(resp)),
			PayloadDigest: "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
		})
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, loc)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range locs {
		locs[i].Filename = closed[0].Name
	}
	return closed[0].Path, locs
}

func TestCDXIndexCommand(t *testing.T) {
	path, locs := cdxTestWARC(t)
	name := filepath.Base(path)
	code, out, errOut := runCLI(t, "cdx", "index", "--format", "cdx11", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := " CDX N b a m s k r M S V g\n"
	keys := []string{"org,example,b)/", "org,example,a)/x", "org,example,a)/"}
	for i, u := range []string{"http://b.example.org/", "http://a.example.org/x", "http://a.example.org/"} {
		want += fmt.Sprintf("%s 202405060708%02d %s text/html 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - %d %d %s\n",
			keys[i], 9+i, u, locs[i].Length, locs[i].Offset, name)
	}
	if out != want {
		t.Errorf("cdx11 output:\n%s\nwant\n%s", out, want)
	}

	code, out, _ = runCLI(t, "cdx", "index", "--sort", path)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "org,example,a)/ 20240506070811 {\"url\":\"http://a.example.org/\"") ||
		!strings.Contains(lines[0], fmt.Sprintf(`"offset":"%d","filename":"%s"}`, locs[2].Offset, name)) ||
		!strings.HasPrefix(lines[2], "org,example,b)/ ") {
		t.Errorf("sorted cdxj: %d\n%s", code, out)
	}
}

func TestCDXIndexBadInput(t *testing.T) {
	path, locs := cdxTestWARC(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the last capture's response member in half.
	bad := filepath.Join(t.TempDir(), "cut.warc.gz")
	if err := os.WriteFile(bad, data[:locs[2].Offset+locs[2].Length/2], 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.warc.gz")
	code, out, errOut := runCLI(t, "cdx", "index", missing, bad, path)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if n := strings.Count(out, "\n"); n != 2+3 {
		t.Errorf("%d lines, want 2 from the cut file and 3 from the good one:\n%s", n, out)
	}
	for _, w := range []string{"missing.warc.gz: no such file", fmt.Sprintf("cut.warc.gz: record at offset %d: ", locs[2].Offset), "unexpected EOF", "2 records or files could not be read"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	for _, args := range [][]string{{"cdx"}, {"cdx", "nope"}, {"cdx", "index"}, {"cdx", "index", "--format", "xml", path}, {"cdx", "load", path}} {
		if code, _, _ := runCLI(t, args...); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
	if code, _, errOut := runCLI(t, "cdx", "index", "--help"); code != 0 || !strings.Contains(errOut, "-format") {
		t.Errorf("help: %d %s", code, errOut)
	}
}

func TestCDXLoadCommand(t *testing.T) {
	path, locs := cdxTestWARC(t)
	dir := t.TempDir()
	cdxFile := filepath.Join(dir, "extra.cdx")
	if err := os.WriteFile(cdxFile, []byte(" CDX N b a m s k r M S V g\n"+
		"- 20230101000000 http://c.example.org/ text/html 200 - - - 10 0 old.warc.gz\n"+
		"this line is bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gzFile := filepath.Join(dir, "extra.cdxj.gz")
	f, err := os.Create(gzFile)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	fmt.Fprintln(zw, `org,example,d)/ 20230101000000 {"url":"http://d.example.org/","offset":"5","filename":"old.warc.gz"}`)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	idx := filepath.Join(dir, "index")
	code, _, errOut := runCLI(t, "cdx", "load", "--index", idx, "--collection", "fc", path, cdxFile, gzFile)
	if code != 1 || !strings.Contains(errOut, "extra.cdx: line 3: ") || !strings.Contains(errOut, "collection fc: 5 entries") {
		t.Fatalf("load: exit %d\n%s", code, errOut)
	}
	// Loading again changes nothing: the index is idempotent.
	if code, _, errOut := runCLI(t, "cdx", "load", "--index", idx, "--collection", "fc", path); code != 0 || !strings.Contains(errOut, "collection fc: 5 entries") {
		t.Fatalf("reload: exit %d\n%s", code, errOut)
	}
	ix, err := cdxindex.Open(idx, cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	rec := httptest.NewRecorder()
	ix.Handler(cdxindex.HandlerOptions{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/fc?url=example.org&matchType=domain&fl=url,offset,length", nil))
	want := fmt.Sprintf("http://a.example.org/ %d %d\nhttp://a.example.org/x %d %d\nhttp://b.example.org/ %d %d\nhttp://c.example.org/ 0 10\nhttp://d.example.org/ 5 -\n",
		locs[2].Offset, locs[2].Length, locs[1].Offset, locs[1].Length, locs[0].Offset, locs[0].Length)
	if rec.Body.String() != want {
		t.Errorf("index after load:\n%s\nwant\n%s", rec.Body.String(), want)
	}
	if code, _, errOut := runCLI(t, "cdx", "load", "--index", idx, "--collection", "bad name", path); code != 1 || !strings.Contains(errOut, "invalid collection name") {
		t.Errorf("bad collection: %d %s", code, errOut)
	}
}

// mixedTestWARC writes the records `cdx index` and `cdx load` must agree
// on: a response larger than the indexer's read buffer, a relative
// redirect, a server-not-modified revisit of the first (whose line points
// at it) and a dns: lookup.
func mixedTestWARC(t *testing.T) string {
	t.Helper()
	var closed []warcwriter.ClosedFile
	w, err := warcwriter.New(warcwriter.Config{Dir: t.TempDir(), Prefix: "MIXED", Hostname: "h"},
		warcwriter.WithBufferDir(t.TempDir()), warcwriter.WithOnClose(func(cf warcwriter.ClosedFile) { closed = append(closed, cf) }))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	big := strings.Repeat("0123456789abcdef", 80<<10) // 1.25 MiB
	for _, c := range []struct {
		url, resp string
		rev       *warcwriter.Revisit
	}{
		{"http://example.org/big.txt", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" + big, nil},
		{"http://example.org/a/old", "HTTP/1.1 301 Moved\r\nLocation: ../new\r\n\r\n", nil},
		{"http://example.org/big.txt", "HTTP/1.1 304 Not Modified\r\n\r\n",
			&warcwriter.Revisit{RefersToURI: "http://example.org/big.txt", RefersToDate: when, NotModified: true}},
	} {
		if _, err := w.WriteCapture(ctx, warcwriter.Capture{
			URL: c.url, Date: when, Request: []byte("GET / HTTP/1.1\r\n\r\n"),
			Response: strings.NewReader(c.resp), ResponseLength: int64(len(c.resp)),
			PayloadDigest: "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", Revisit: c.rev,
		}); err != nil {
			t.Fatal(err)
		}
		when = when.Add(time.Second)
	}
	if _, err := w.WriteDNS(ctx, "example.org", when, "192.0.2.53", []byte("20240506070812\nexample.org. 300 IN A 192.0.2.1\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return closed[0].Path
}

// `cdx load` of a WARC puts in the index exactly the lines `cdx index`
// prints for it, field by field.
func TestCDXLoadMatchesIndex(t *testing.T) {
	path := mixedTestWARC(t)
	code, out, errOut := runCLI(t, "cdx", "index", path)
	if code != 0 {
		t.Fatalf("index: exit %d: %s", code, errOut)
	}
	var indexed []cdx.Line
	for _, s := range strings.Split(strings.TrimSpace(out), "\n") {
		l, err := cdx.ParseCDXJ(s)
		if err != nil {
			t.Fatal(err)
		}
		indexed = append(indexed, l)
	}
	wantMimes := []string{"text/plain", "text/plain", "text/plain", "text/dns"}
	if len(indexed) != 4 || indexed[1].Redirect != "http://example.org/new" || indexed[3].Digest == "" ||
		indexed[2].Offset != indexed[0].Offset || indexed[2].Timestamp != "20240506070811" {
		t.Fatalf("cdx index output:\n%s", out)
	}
	for i, l := range indexed {
		if i != 1 && l.Mimetype != wantMimes[i] {
			t.Errorf("line %d mime %q, want %q", i, l.Mimetype, wantMimes[i])
		}
	}

	idx := filepath.Join(t.TempDir(), "index")
	if code, _, errOut := runCLI(t, "cdx", "load", "--index", idx, "--collection", "fc", path); code != 0 {
		t.Fatalf("load: exit %d: %s", code, errOut)
	}
	ix, err := cdxindex.Open(idx, cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	h := ix.Handler(cdxindex.HandlerOptions{})
	var loaded []cdx.Line
	for _, q := range []string{"url=example.org&matchType=domain", "url=dns:example.org"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/fc?output=cdxj&"+q, nil))
		for _, s := range strings.Split(strings.TrimSpace(rec.Body.String()), "\n") {
			l, err := cdx.ParseCDXJ(s)
			if err != nil {
				t.Fatalf("%s: %q: %v", q, s, err)
			}
			loaded = append(loaded, l)
		}
	}
	if len(loaded) != len(indexed) {
		t.Fatalf("loaded %d lines, indexed %d", len(loaded), len(indexed))
	}
	// A 304's line has its original's location: captures are told apart
	// by time too.
	byLoc := map[string]cdx.Line{}
	for _, l := range loaded {
		byLoc[fmt.Sprint(l.Filename, l.Offset, l.Timestamp)] = l
	}
	for _, l := range indexed {
		if got := byLoc[fmt.Sprint(l.Filename, l.Offset, l.Timestamp)]; got != l {
			t.Errorf("loaded\n%s\nindexed\n%s", got.CDX11(), l.CDX11())
		}
	}
}

// `cdx index` points the line of a 304 at its original response in
// another of the files given, keeps an ordinary revisit line for one whose
// original is not among them and says so on stderr (exit 0: the lines are
// still good), in file order or, with --sort, sorted.
func TestCDXIndexNotModified(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	t1 := t0.Add(24 * time.Hour)
	const digest = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
	writeFile := func(prefix string, caps ...warcwriter.Capture) (warcwriter.ClosedFile, []warcwriter.Location) {
		var closed []warcwriter.ClosedFile
		w, err := warcwriter.New(warcwriter.Config{Dir: t.TempDir(), Prefix: prefix, Hostname: "h"},
			warcwriter.WithBufferDir(t.TempDir()), warcwriter.WithOnClose(func(cf warcwriter.ClosedFile) { closed = append(closed, cf) }))
		if err != nil {
			t.Fatal(err)
		}
		var locs []warcwriter.Location
		for _, c := range caps {
			c.Request, c.PayloadDigest = []byte("GET / HTTP/1.1\r\n\r\n"), digest
			loc, err := w.WriteCapture(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			locs = append(locs, loc)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return closed[0], locs
	}
	resp := func(s string) (*strings.Reader, int64) { return strings.NewReader(s), int64(len(s)) }
	page, pageLen := resp("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\nhello")
	f1, l1 := writeFile("FIRST", warcwriter.Capture{URL: "http://example.org/", Date: t0, Response: page, ResponseLength: pageLen})
	nm1, nm1Len := resp("HTTP/1.1 304 Not Modified\r\n\r\n")
	nm2, nm2Len := resp("HTTP/1.1 304 Not Modified\r\n\r\n")
	f2, l2 := writeFile("SECOND",
		warcwriter.Capture{URL: "http://example.org/", Date: t1, Response: nm1, ResponseLength: nm1Len,
			Revisit: &warcwriter.Revisit{RefersToURI: "http://example.org/", RefersToDate: t0, RefersToRecordID: l1[0].RecordID, NotModified: true}},
		warcwriter.Capture{URL: "http://example.org/elsewhere", Date: t1, Response: nm2, ResponseLength: nm2Len,
			Revisit: &warcwriter.Revisit{RefersToURI: "http://example.org/elsewhere", RefersToDate: t0, NotModified: true}})

	code, out, errOut := runCLI(t, "cdx", "index", "--format", "cdx11", f2.Path, f1.Path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := " CDX N b a m s k r M S V g\n" +
		fmt.Sprintf("org,example)/ 20240507070809 http://example.org/ text/html 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - %d %d %s\n", l1[0].Length, l1[0].Offset, f1.Name) +
		fmt.Sprintf("org,example)/elsewhere 20240507070809 http://example.org/elsewhere warc/revisit 304 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - %d %d %s\n", l2[1].Length, l2[1].Offset, f2.Name) +
		fmt.Sprintf("org,example)/ 20240506070809 http://example.org/ text/html 200 3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - %d %d %s\n", l1[0].Length, l1[0].Offset, f1.Name)
	if out != want {
		t.Errorf("output:\n%s\nwant\n%s", out, want)
	}
	if wantErr := "warning: 1 server-not-modified revisits (304s) keep an ordinary revisit line (mime warc/revisit), not their original's: 1 because their original is not in the files given\n"; errOut != wantErr {
		t.Errorf("stderr %q, want %q", errOut, wantErr)
	}

	code, out, _ = runCLI(t, "cdx", "index", "--sort", "--format", "cdx11", f2.Path, f1.Path)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 4 || lines[1] != strings.Split(want, "\n")[3] || lines[2] != strings.Split(want, "\n")[1] ||
		!strings.HasPrefix(lines[3], "org,example)/elsewhere ") {
		t.Errorf("sorted: exit %d\n%s", code, out)
	}
}
