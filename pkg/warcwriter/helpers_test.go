package warcwriter

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeClock advances by step on every reading, so file names differ.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2025, 3, 4, 5, 6, 7, 123_000_000, time.UTC), step: time.Millisecond}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(c.step)
	return t
}

// versionCase is what one Config.Version setting makes of the records.
type versionCase struct {
	setting     string // Config.Version
	line        string // the version line of every record
	dateLayout  string // WARC-Date and WARC-Refers-To-Date
	identical   string // WARC-Profile of an identical-payload-digest revisit
	notModified string // WARC-Profile of a server-not-modified revisit
	format      string // warcinfo "format"
	conformsTo  string // warcinfo "conformsTo"
}

// versionCases are the default (WARC/1.0, as Heritrix writes) and both
// explicit settings.
func versionCases() []versionCase {
	v10 := versionCase{
		setting: "", line: "WARC/1.0", dateLayout: "2006-01-02T15:04:05Z",
		identical:   "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest",
		notModified: "http://netpreserve.org/warc/1.0/revisit/server-not-modified",
		format:      "WARC File Format 1.0",
		conformsTo:  "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.0/",
	}
	explicit := v10
	explicit.setting = "1.0"
	return []versionCase{v10, explicit, {
		setting: "1.1", line: "WARC/1.1", dateLayout: "2006-01-02T15:04:05.000Z",
		identical:   "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
		notModified: "http://netpreserve.org/warc/1.1/revisit/server-not-modified",
		format:      "WARC File Format 1.1",
		conformsTo:  "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
	}}
}

func (vc versionCase) name() string {
	if vc.setting == "" {
		return "default"
	}
	return vc.setting
}

func testConfig(dir string) Config {
	return Config{
		Dir: dir, Prefix: "TEST", Hostname: "testhost", CrawlName: "npld-2025",
		Operator: "Web Archive <wa@example.org>", RobotsPolicy: "obey",
		UserAgent: "trawler/1.0 (+https://example.org/crawler)", Software: "trawler/1.0",
	}
}

// closedLog collects OnClose notices.
type closedLog struct {
	mu    sync.Mutex
	files []ClosedFile
}

func (l *closedLog) add(cf ClosedFile) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.files = append(l.files, cf)
}

func (l *closedLog) all() []ClosedFile {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ClosedFile(nil), l.files...)
}

func newTestWriter(t *testing.T, cfg Config, opts ...Option) (*Writer, *closedLog) {
	t.Helper()
	log := &closedLog{}
	opts = append([]Option{WithClock(newFakeClock().Now), WithOnClose(log.add),
		WithBufferDir(t.TempDir())}, opts...)
	w, err := New(cfg, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w, log
}

func sha1Digest(b []byte) string {
	sum := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// body returns n pseudo-random bytes (incompressible, so file sizes grow).
func body(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func chunk(b []byte, size int) []byte {
	var out bytes.Buffer
	for len(b) > 0 {
		n := min(size, len(b))
		fmt.Fprintf(&out, "%x\r\n", n)
		out.Write(b[:n])
		out.WriteString("\r\n")
		b = b[n:]
	}
	out.WriteString("0\r\n\r\n")
	return out.Bytes()
}

// testFetch is a capture together with what the test expects of it.
type testFetch struct {
	c       Capture
	raw     []byte // raw response
	header  []byte // raw response header, up to and including the blank line
	entity  []byte // de-chunked body
	request []byte
}

func newFetch(url string, date time.Time, entity []byte, chunked bool) testFetch {
	header := "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
	wire := entity
	if chunked {
		header += "Transfer-Encoding: chunked\r\n\r\n"
		wire = chunk(entity, 100)
	} else {
		header += fmt.Sprintf("Content-Length: %d\r\n\r\n", len(entity))
	}
	raw := append([]byte(header), wire...)
	req := []byte("GET " + url + " HTTP/1.1\r\nHost: example.com\r\nUser-Agent: test\r\n\r\n")
	return testFetch{
		c: Capture{URL: url, Date: date, IP: "192.0.2.10", Request: req,
			Response: bytes.NewReader(raw), ResponseLength: int64(len(raw)),
			PayloadDigest: sha1Digest(entity)},
		raw: raw, header: []byte(header), entity: entity, request: req,
	}
}

// readRecord is a record read back with gowarc.
type readRecord struct {
	version    string // "WARC/1.0" or "WARC/1.1"
	typ        gowarc.RecordType
	id         string
	h          *gowarc.WarcFields
	block      []byte
	fields     *gowarc.WarcFields // warc-fields blocks only
	offset     int64
	validation gowarc.Validation
}

// strictOptions fail on every finding gowarc can make.
func strictOptions() []gowarc.WarcRecordOption {
	return []gowarc.WarcRecordOption{gowarc.WithStrictValidation(), gowarc.WithBlockErrorPolicy(gowarc.ErrFail)}
}

// readAll reads every record of path with opts and fails the test on any error.
func readAll(t *testing.T, path string, opts ...gowarc.WarcRecordOption) []readRecord {
	t.Helper()
	r, err := gowarc.NewWarcFileReader(path, 0, opts...)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer func() { _ = r.Close() }()
	var out []readRecord
	for {
		rec, off, v, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s record %d at %d: %v", filepath.Base(path), len(out), off, err)
		}
		rr := readRecord{version: rec.Version().String(), typ: rec.Type(), id: rec.RecordId(), h: rec.WarcHeader(), offset: off}
		if v != nil {
			rr.validation = *v
		}
		raw, err := rec.Block().RawBytes()
		if err != nil {
			t.Fatalf("%s record %d block: %v", filepath.Base(path), len(out), err)
		}
		if rr.block, err = io.ReadAll(raw); err != nil {
			t.Fatalf("%s record %d block: %v", filepath.Base(path), len(out), err)
		}
		if fb, ok := rec.Block().(gowarc.WarcFieldsBlock); ok {
			rr.fields = fb.WarcFields()
		}
		out = append(out, rr)
	}
}

// readMember reads the gzip member at loc and checks that it is exactly
// loc.Length bytes long; it returns the record parsed strictly.
func readMember(t *testing.T, dir string, loc Location) readRecord {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, loc.Filename))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	member := make([]byte, loc.Length)
	if _, err := f.ReadAt(member, loc.Offset); err != nil {
		t.Fatalf("read member %+v: %v", loc, err)
	}
	br := bytes.NewReader(member)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatalf("member %+v is not gzip: %v", loc, err)
	}
	zr.Multistream(false)
	if _, err := io.Copy(io.Discard, zr); err != nil {
		t.Fatalf("member %+v: %v", loc, err)
	}
	if br.Len() != 0 {
		t.Fatalf("member %+v ends %d bytes before Offset+Length", loc, br.Len())
	}
	rec, _, v, err := gowarc.NewUnmarshaler(strictOptions()...).Unmarshal(bufio.NewReader(bytes.NewReader(member)))
	if err != nil {
		t.Fatalf("member %+v: %v", loc, err)
	}
	defer func() { _ = rec.Close() }()
	raw, err := rec.Block().RawBytes()
	if err != nil {
		t.Fatal(err)
	}
	block, err := io.ReadAll(raw)
	if err != nil {
		t.Fatal(err)
	}
	return readRecord{version: rec.Version().String(), typ: rec.Type(), id: rec.RecordId(), h: rec.WarcHeader(),
		block: block, validation: *v}
}

// warcFiles lists the files in dir, sorted by name.
func warcFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func wantHeader(t *testing.T, r readRecord, name, want string) {
	t.Helper()
	if got := r.h.Get(name); got != want {
		t.Errorf("%s record %s: %s = %q, want %q", r.typ, r.id, name, got, want)
	}
}

// gzipBytes returns s as one gzip member.
func gzipBytes(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
