package replay

import (
	"context"
	"crypto/sha1" //nolint:gosec // WARC digests are SHA-1
	"encoding/base32"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the first capture time of the fixture; captures are seconds apart.
var t0 = time.Date(2025, 5, 6, 7, 8, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

// ts is the 14-digit timestamp of at(sec).
func ts(sec int) string { return at(sec).Format("20060102150405") }

func sha1Digest(b []byte) string {
	sum := sha1.Sum(b) //nolint:gosec // WARC digests are SHA-1
	return base32.StdEncoding.EncodeToString(sum[:])
}

// httpResponse is a raw HTTP/1.1 response with the given status line,
// extra header lines and body.
func httpResponse(status string, body string, header ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %s\r\n", status)
	for _, h := range header {
		b.WriteString(h + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return []byte(b.String())
}

// bigBody is 200 KB of pseudo-random bytes.
var bigBody = func() string {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 200_000)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return string(b)
}()

// fetch is one capture the fixture writes.
type fetch struct {
	url, status, body string
	sec               int
	header            []string
	// revisitOf, when set, writes a revisit of the capture at that URL
	// and second, with the digest of digestOf (the body of this fetch
	// when empty).
	revisitOf    string
	revisitSec   int
	notModified  bool
	digestOfBody string
}

// fixture is a set of WARC files written by pkg/warcwriter in two
// directories (as a crawl's normal and viral WARCs are), indexed by
// pkg/warcindex into an embedded index, and the same index served over
// HTTP as an OutbackCDX.
type fixture struct {
	dirs  []string
	files map[string]string // name -> path
	lines []cdx.Line
	ix    *cdxindex.Index
	api   string // base URL of the index's OutbackCDX API
}

// The captures of the fixture. Bodies are distinct unless a revisit
// shares them on purpose.
var fixtureFetches = []fetch{
	// A page, then an identical-payload-digest revisit of it.
	{url: "http://a.test/page", status: "200 OK", body: "page v1", sec: 10, header: []string{"Content-Type: text/html"}},
	{url: "http://a.test/page", status: "200 OK", body: "page v1", sec: 20, header: []string{"Content-Type: text/html", "X-Fetch: 2"},
		revisitOf: "http://a.test/page", revisitSec: 10},
	// Another URL whose payload is the page's: a cross-URL revisit.
	{url: "http://b.test/copy", status: "200 OK", body: "page v1", sec: 30, header: []string{"Content-Type: text/html"},
		revisitOf: "http://a.test/page", revisitSec: 10},
	// A conditional refetch answered 304: a server-not-modified revisit.
	{url: "http://a.test/cond", status: "200 OK", body: "cond body", sec: 10, header: []string{"Content-Type: text/plain"}},
	{url: "http://a.test/cond", status: "304 Not Modified", body: "", sec: 40, digestOfBody: "cond body",
		revisitOf: "http://a.test/cond", revisitSec: 10, notModified: true},
	// A redirect, then a revisit of it.
	{url: "http://a.test/moved", status: "301 Moved Permanently", body: "moved", sec: 10, header: []string{"Location: http://a.test/page"}},
	{url: "http://a.test/moved", status: "301 Moved Permanently", body: "moved", sec: 50, header: []string{"Location: http://a.test/page"},
		revisitOf: "http://a.test/moved", revisitSec: 10},
	// An empty page, then a revisit of the empty payload.
	{url: "http://a.test/empty", status: "200 OK", body: "", sec: 10},
	{url: "http://a.test/empty", status: "200 OK", body: "", sec: 60, revisitOf: "http://a.test/empty", revisitSec: 10},
	// A page that later redirects to itself.
	{url: "http://a.test/self", status: "200 OK", body: "self ok", sec: 10},
	{url: "http://a.test/self", status: "302 Found", body: "", sec: 70, header: []string{"Location: http://a.test/self/"}},
	// A revisit whose original is in no index.
	{url: "http://a.test/lost", status: "200 OK", body: "lost body", sec: 80, revisitOf: "http://a.test/gone", revisitSec: 5},
	// A payload larger than the buffers, incompressible.
	{url: "http://a.test/big", status: "200 OK", body: bigBody, sec: 10},
	// Two captures of one URL with different bodies.
	{url: "http://a.test/two", status: "200 OK", body: "two v1", sec: 10},
	{url: "http://a.test/two", status: "200 OK", body: "two v2", sec: 90},
}

// newFixture writes fixtureFetches (odd ones to the second directory),
// a resource record, indexes the files and serves the index.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{dirs: []string{t.TempDir(), t.TempDir()}, files: map[string]string{}}
	var ws [2]*warcwriter.Writer
	for i := range ws {
		w, err := warcwriter.New(warcwriter.Config{Dir: f.dirs[i], Prefix: "TEST", Name: fmt.Sprintf("TEST-%d.warc.gz", i), Hostname: "test"})
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	ctx := context.Background()
	for i, fe := range fixtureFetches {
		c := warcwriter.Capture{
			URL: fe.url, Date: at(fe.sec), Request: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
			PayloadDigest: "sha1:" + sha1Digest([]byte(fe.body)),
		}
		resp := httpResponse(fe.status, fe.body, fe.header...)
		c.Response, c.ResponseLength = strings.NewReader(string(resp)), int64(len(resp))
		if fe.digestOfBody != "" {
			c.PayloadDigest = "sha1:" + sha1Digest([]byte(fe.digestOfBody))
		}
		if fe.revisitOf != "" {
			c.Revisit = &warcwriter.Revisit{RefersToURI: fe.revisitOf, RefersToDate: at(fe.revisitSec), NotModified: fe.notModified}
		}
		if _, err := ws[i%2].WriteCapture(ctx, c); err != nil {
			t.Fatalf("write %s: %v", fe.url, err)
		}
	}
	if _, err := ws[0].WriteResource(ctx, warcwriter.Resource{URL: "http://a.test/shot.png", Date: at(10),
		ContentType: "image/png", Block: []byte("not really a png")}); err != nil {
		t.Fatal(err)
	}
	for i, w := range ws {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("TEST-%d.warc.gz", i)
		f.files[name] = filepath.Join(f.dirs[i], name)
		if _, err := warcindex.IndexFile(ctx, f.files[name], func(l cdx.Line) error {
			f.lines = append(f.lines, l)
			return nil
		}, func(e *warcindex.RecordError) { t.Errorf("index %s: %v", name, e) }); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := cdxindex.Open(t.TempDir(), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	if err := ix.Put(ctx, "fc", f.lines); err != nil {
		t.Fatal(err)
	}
	f.ix = ix
	srv := httptest.NewServer(ix.Handler(cdxindex.HandlerOptions{ReadOnly: true}))
	t.Cleanup(srv.Close)
	f.api = srv.URL
	return f
}

// line returns the fixture's index line of url at sec.
func (f *fixture) line(t *testing.T, url string, sec int) cdx.Line {
	t.Helper()
	for _, l := range f.lines {
		if l.Original == url && l.Timestamp == ts(sec) {
			return l
		}
	}
	t.Fatalf("no index line for %s at %s", url, ts(sec))
	return cdx.Line{}
}

// backend is one way of asking the fixture's index.
type backend struct {
	name  string
	index func(t *testing.T, f *fixture) Index
}

var backends = []backend{
	{"embedded", func(t *testing.T, f *fixture) Index { return NewCDXIndex(f.ix, "fc") }},
	{"outbackcdx", func(t *testing.T, f *fixture) Index {
		o, err := NewOutbackCDX(OutbackCDXOptions{URL: f.api, Collection: "fc"})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}},
}

// resolver builds a Resolver over the fixture's WARC directories.
func (f *fixture) resolver(t *testing.T, ix Index, resolveRevisits bool) *Resolver {
	t.Helper()
	r, err := New(Options{Index: ix, Records: NewDirs(f.dirs...), ResolveRevisits: resolveRevisits})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// copyFile writes the first n bytes of src (all when n < 0) to dir/name.
func copyFile(t *testing.T, src, dir, name string, n int) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if n >= 0 {
		b = b[:n]
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// indexOf is an embedded index holding lines only.
func indexOf(t *testing.T, lines []cdx.Line) Index {
	t.Helper()
	ix, err := cdxindex.Open(t.TempDir(), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	if err := ix.Put(context.Background(), "fc", lines); err != nil {
		t.Fatal(err)
	}
	return NewCDXIndex(ix, "fc")
}

// plainWARC is an uncompressed WARC file written by hand, with what
// pkg/warcwriter never writes.
type plainWARC struct {
	noRefers     cdx.Line // a revisit without WARC-Refers-To-Target-URI
	emptyRevisit cdx.Line // an old-style revisit of a.test/page without HTTP header
	cutHeader    cdx.Line // a record whose header the file's end cuts
}

func writePlainWARC(t *testing.T, dir string) plainWARC {
	t.Helper()
	const name = "plain.warc"
	block := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"
	revisit := "WARC/1.0\r\nWARC-Type: revisit\r\nWARC-Target-URI: http://c.test/old\r\n" +
		"WARC-Date: 2025-05-06T07:08:10Z\r\nWARC-Profile: http://netpreserve.org/warc/1.0/revisit/identical-payload-digest\r\n" +
		"WARC-Payload-Digest: sha1:" + sha1Digest([]byte("old")) + "\r\n" +
		fmt.Sprintf("Content-Type: application/http; msgtype=response\r\nContent-Length: %d\r\n\r\n", len(block)) +
		block + "\r\n\r\n"
	empty := "WARC/1.0\r\nWARC-Type: revisit\r\nWARC-Target-URI: http://c.test/empty-revisit\r\n" +
		"WARC-Date: 2025-05-06T07:08:15Z\r\nWARC-Refers-To-Target-URI: http://a.test/page\r\n" +
		"WARC-Refers-To-Date: " + at(10).Format(time.RFC3339) + "\r\n" +
		"WARC-Payload-Digest: sha1:" + sha1Digest([]byte("page v1")) + "\r\nContent-Length: 0\r\n\r\n\r\n\r\n"
	cut := "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://c.test/cut\r\nWARC-Da"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(revisit+empty+cut), 0o644); err != nil {
		t.Fatal(err)
	}
	return plainWARC{
		noRefers: cdx.Line{URLKey: "test,c)/old", Timestamp: "20250506070810", Original: "http://c.test/old",
			Mimetype: cdx.RevisitMime, Status: "200", Digest: sha1Digest([]byte("old")), Length: int64(len(revisit)), Offset: 0, Filename: name},
		emptyRevisit: cdx.Line{URLKey: "test,c)/empty-revisit", Timestamp: "20250506070815", Original: "http://c.test/empty-revisit",
			Mimetype: cdx.RevisitMime, Digest: sha1Digest([]byte("page v1")), Length: int64(len(empty)), Offset: int64(len(revisit)), Filename: name},
		cutHeader: cdx.Line{URLKey: "test,c)/cut", Timestamp: "20250506070820", Original: "http://c.test/cut",
			Mimetype: "text/plain", Status: "200", Length: -1, Offset: int64(len(revisit + empty)), Filename: name},
	}
}
