package warcwriter

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nlnwa/gowarc"
)

// failingRecord is a record whose block breaks off after a few bytes, as a
// failing disk or spill file would make it.
type failingRecord struct{ gowarc.WarcRecord }

func (r failingRecord) Block() gowarc.Block { return failingBlock{r.WarcRecord.Block()} }

type failingBlock struct{ gowarc.Block }

func (b failingBlock) RawBytes() (io.Reader, error) {
	return io.MultiReader(strings.NewReader("HTTP/1.1 200 OK\r\n"), errReader{}), nil
}

// TestFailedWriteIsCutOut checks that a capture failing half-way through
// its records leaves no trace in the file, and the file stays usable.
func TestFailedWriteIsCutOut(t *testing.T) {
	dir := t.TempDir()
	w, _ := newTestWriter(t, testConfig(dir))
	ctx := context.Background()
	first := newFetch("http://example.com/1", fetchDate, []byte("one"), false)
	if _, err := w.WriteCapture(ctx, withMeta(first).c); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, warcFiles(t, dir)[0])
	before := fileBytes(t, open)

	broken := withMeta(newFetch("http://example.com/broken", fetchDate, []byte("two"), false))
	recs, err := w.buildCapture(&broken.c)
	if err != nil {
		t.Fatal(err)
	}
	defer closeRecords(recs)
	recs[1] = failingRecord{recs[1]}
	if _, err := w.write(ctx, recs); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Fatalf("write of failing record: %v, want 'disk gone'", err)
	}
	if after := fileBytes(t, open); !bytes.Equal(before, after) {
		t.Fatalf("failed capture left %d bytes in the file", len(after)-len(before))
	}

	third := newFetch("http://example.com/3", fetchDate, []byte("three"), false)
	if _, err := w.WriteCapture(ctx, withMeta(third).c); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ix := indexDir(t, dir)
	if ix.responses["http://example.com/1"] != 1 || ix.responses["http://example.com/3"] != 1 || len(ix.responses) != 2 {
		t.Errorf("responses in file: %v, want captures 1 and 3 only", ix.responses)
	}
	name := filepath.Base(strings.TrimSuffix(open, openSuffix))
	if recs := ix.files[name]; len(recs) != 7 || recs[4].offset != int64(len(before)) {
		t.Errorf("capture 3 does not follow capture 1 directly")
	}
}

func withMeta(f testFetch) testFetch {
	f.c.Metadata = &Metadata{Via: "http://example.com/"}
	return f
}

// TestUnwritableFileIsAbandoned checks that when a failed capture cannot
// be cut out, the file is left ".open" for RecoverOpen, and writing goes on
// in a new file.
func TestUnwritableFileIsAbandoned(t *testing.T) {
	dir := t.TempDir()
	w, closed := newTestWriter(t, testConfig(dir))
	ctx := context.Background()
	first := newFetch("http://example.com/1", fetchDate, []byte("one"), false)
	if _, err := w.WriteCapture(ctx, withMeta(first).c); err != nil {
		t.Fatal(err)
	}
	s, err := w.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.f.Close() // the disk goes away under the writer
	w.release(s)

	second := newFetch("http://example.com/2", fetchDate, []byte("two"), false)
	if _, err := w.WriteCapture(ctx, second.c); err == nil {
		t.Fatal("write to a closed file succeeded")
	}
	third := newFetch("http://example.com/3", fetchDate, []byte("three"), false)
	loc, err := w.WriteCapture(ctx, withMeta(third).c)
	if err != nil {
		t.Fatalf("write after abandoning the file: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(closed.all()) != 1 || closed.all()[0].Name != loc.Filename || !strings.Contains(loc.Filename, "-00001-") {
		t.Fatalf("closed %+v, capture 3 in %s; want only the new file (serial 1) closed", closed.all(), loc.Filename)
	}
	got, err := RecoverOpen(dir, nil)
	if err != nil || len(got) != 1 || got[0].Records != 4 || !strings.Contains(got[0].Name, "-00000-") {
		t.Fatalf("RecoverOpen = %+v, %v; want the first file with warcinfo and capture 1", got, err)
	}
	ix := indexDir(t, dir)
	if len(ix.responses) != 2 || ix.where["http://example.com/1"] != got[0].Name || ix.where["http://example.com/3"] != loc.Filename {
		t.Errorf("responses %v in %v", ix.responses, ix.where)
	}
}
