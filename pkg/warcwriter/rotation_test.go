package warcwriter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"
)

var namePattern = regexp.MustCompile(`^TEST-(\d{17})-(\d{5})-testhost\.warc\.gz$`)

// fileIndex is what a test learns from reading every file of a directory.
type fileIndex struct {
	files     map[string][]readRecord // by file name
	responses map[string]int          // response/revisit count by target URI
	where     map[string]string       // file holding the response of a URI
	offset    map[string]int64        // offset of that response
}

// indexDir reads every file strictly and checks the invariants that hold
// for any directory a Writer produced: warcinfo first and named after the
// file, every other record pointing at it, and the request and metadata
// record of a capture next to its response, linked by WARC-Concurrent-To.
func indexDir(t *testing.T, dir string) fileIndex {
	t.Helper()
	ix := fileIndex{files: map[string][]readRecord{}, responses: map[string]int{},
		where: map[string]string{}, offset: map[string]int64{}}
	for _, name := range warcFiles(t, dir) {
		if !namePattern.MatchString(name) {
			t.Fatalf("file %q does not match %s", name, namePattern)
		}
		recs := readAll(t, filepath.Join(dir, name), strictOptions()...)
		ix.files[name] = recs
		if len(recs) == 0 || recs[0].typ != gowarc.Warcinfo {
			t.Fatalf("%s does not start with warcinfo", name)
		}
		wantHeader(t, recs[0], gowarc.WarcFilename, name)
		for i, r := range recs[1:] {
			wantHeader(t, r, gowarc.WarcWarcinfoID, "<"+recs[0].id+">")
			if r.typ == gowarc.Response || r.typ == gowarc.Revisit {
				uri := r.h.Get(gowarc.WarcTargetURI)
				ix.responses[uri]++
				ix.where[uri], ix.offset[uri] = name, r.offset
				checkNeighbours(t, recs, i+1)
			}
		}
	}
	return ix
}

// checkNeighbours checks that the request before the response at i, and
// the metadata record after it, belong to the same capture.
func checkNeighbours(t *testing.T, recs []readRecord, i int) {
	t.Helper()
	resp := recs[i]
	if i < 1 || recs[i-1].typ != gowarc.Request {
		t.Errorf("response %s is not preceded by its request", resp.id)
		return
	}
	wantHeader(t, recs[i-1], gowarc.WarcConcurrentTo, "<"+resp.id+">")
	wantHeader(t, recs[i-1], gowarc.WarcTargetURI, resp.h.Get(gowarc.WarcTargetURI))
	if i+1 >= len(recs) || recs[i+1].typ != gowarc.Metadata {
		t.Errorf("response %s is not followed by its metadata", resp.id)
		return
	}
	wantHeader(t, recs[i+1], gowarc.WarcConcurrentTo, "<"+resp.id+">")
	wantHeader(t, recs[i+1], gowarc.WarcTargetURI, resp.h.Get(gowarc.WarcTargetURI))
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.MaxFileSize = 5000
	w, closed := newTestWriter(t, cfg)
	locs := map[string]Location{}
	for i := range 12 {
		f := newFetch(fmt.Sprintf("http://example.com/%d", i), fetchDate, body(uint64(i), 1500), i%2 == 0)
		f.c.Metadata = &Metadata{FetchTimeMs: int64(i)}
		loc, err := w.WriteCapture(context.Background(), f.c)
		if err != nil {
			t.Fatalf("capture %d: %v", i, err)
		}
		locs[f.c.URL] = loc
	}
	closedBeforeClose := len(closed.all())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	names := warcFiles(t, dir)
	if len(names) < 3 || closedBeforeClose < len(names)-1 {
		t.Fatalf("files = %v, %d closed by rotation; want >= 3 files, all but the last closed by rotation", names, closedBeforeClose)
	}
	// Chunked captures are read strictly too: their payload digest is
	// checked in TestChunkedPayloadDigest, here only the framing matters.
	ix := indexDirLenient(t, dir)
	checkSerials(t, names, true)
	for uri, loc := range locs {
		if ix.responses[uri] != 1 || ix.where[uri] != loc.Filename || ix.offset[uri] != loc.Offset {
			t.Errorf("%s: %d responses, in %s at %d; location %+v", uri, ix.responses[uri], ix.where[uri], ix.offset[uri], loc)
		}
	}
	checkClosed(t, dir, closed.all(), ix, cfg.MaxFileSize)
}

// indexDirLenient is indexDir for files with chunked responses, where
// gowarc's payload digest check must only warn.
func indexDirLenient(t *testing.T, dir string) fileIndex {
	t.Helper()
	ix := fileIndex{files: map[string][]readRecord{}, responses: map[string]int{},
		where: map[string]string{}, offset: map[string]int64{}}
	for _, name := range warcFiles(t, dir) {
		recs := readAll(t, filepath.Join(dir, name), gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail),
			gowarc.WithSpecViolationPolicy(gowarc.ErrWarn), gowarc.WithFixDigest(false))
		ix.files[name] = recs
		wantHeader(t, recs[0], gowarc.WarcFilename, name)
		for i, r := range recs {
			for _, e := range r.validation {
				if r.typ != gowarc.Response || !strings.HasPrefix(e.Error(), "payload: ") {
					t.Errorf("%s record %d: %v", name, i, e)
				}
			}
			if r.typ == gowarc.Response {
				uri := r.h.Get(gowarc.WarcTargetURI)
				ix.responses[uri]++
				ix.where[uri], ix.offset[uri] = name, r.offset
				checkNeighbours(t, recs, i)
			}
		}
	}
	return ix
}

// checkSerials checks that the serial numbers are 0..len(names)-1 and, if
// ordered, that they count up in name order (the order of the timestamps).
func checkSerials(t *testing.T, names []string, ordered bool) {
	t.Helper()
	seen := map[int]bool{}
	for i, name := range names {
		m := namePattern.FindStringSubmatch(name)
		if m == nil {
			t.Fatalf("file %q does not match %s", name, namePattern)
		}
		serial, _ := strconv.Atoi(m[2])
		if seen[serial] || serial >= len(names) || (ordered && serial != i) {
			t.Errorf("file %d of %d has serial %d (seen before: %v): %s", i, len(names), serial, seen[serial], name)
		}
		seen[serial] = true
	}
}

// checkClosed checks the OnClose notices against the files, and that every
// file was rotated at the first capture that reached maxSize (the last file
// may have been closed by Close before reaching it).
func checkClosed(t *testing.T, dir string, closed []ClosedFile, ix fileIndex, maxSize int64) {
	t.Helper()
	if len(closed) != len(ix.files) {
		t.Fatalf("%d OnClose notices for %d files", len(closed), len(ix.files))
	}
	for i, cf := range closed {
		st, err := os.Stat(cf.Path)
		if err != nil {
			t.Fatalf("notice %+v: %v", cf, err)
		}
		recs := ix.files[cf.Name]
		if cf.Size != st.Size() || cf.Records != int64(len(recs)) || filepath.Dir(cf.Path) != dir {
			t.Errorf("notice %+v; file has size %d and %d records", cf, st.Size(), len(recs))
		}
		if !cf.Opened.Equal(openedFromName(cf.Name)) {
			t.Errorf("notice opened %v, name says %v", cf.Opened, openedFromName(cf.Name))
		}
		lastStart := recs[len(recs)-3].offset // request of the last capture
		if lastStart >= maxSize || (cf.Size < maxSize && i < len(closed)-1) {
			t.Errorf("%s: size %d, last capture starts at %d; want rotation right after crossing %d",
				cf.Name, cf.Size, lastStart, maxSize)
		}
	}
}

// TestSerialCounterShared checks that writers sharing a counter never reuse
// a serial number.
func TestSerialCounterShared(t *testing.T) {
	dir := t.TempDir()
	serials := &SerialCounter{}
	var wg sync.WaitGroup
	for i := range 2 {
		cfg := testConfig(dir)
		cfg.MaxFileSize = 1 // every capture closes its file
		w, _ := newTestWriter(t, cfg, WithSerialCounter(serials), WithClock(func() time.Time { return fetchDate }))
		wg.Go(func() {
			for j := range 5 {
				f := newFetch(fmt.Sprintf("http://example.com/%d/%d", i, j), fetchDate, []byte("x"), false)
				if _, err := w.WriteCapture(context.Background(), f.c); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	names := warcFiles(t, dir)
	if len(names) != 10 {
		t.Fatalf("files = %v, want 10", names)
	}
	checkSerials(t, names, true) // same timestamp, so name order is serial order
}
