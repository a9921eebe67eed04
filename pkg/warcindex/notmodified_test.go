package warcindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
)

// notModifiedSet is a crawl and a recrawl written by pkg/warcwriter the way
// the worker writes them, in two files, and the lines IndexFiles must give.
type notModifiedSet struct {
	first, second string     // paths
	want          []cdx.Line // in file order: the first file's lines, then the second's
	wantStats     NotModified
}

// writeNotModifiedSet writes the first crawl as WARC/1.1 (dates to the
// millisecond) and the recrawl as WARC/1.0 (to the second), so that an
// original found by URI and date is matched across precisions.
func writeNotModifiedSet(t *testing.T) notModifiedSet {
	t.Helper()
	ctx := context.Background()
	const (
		pageDigest  = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
		movedDigest = "sha1:BPV2MSSWCDTJGWAJYCYQSPONLUPHDJLN"
		goneDigest  = "sha1:LCEWW6ZKJ3UEBNBBJTUM7N7J4V5LFI4L"
	)
	t0 := time.Date(2024, 1, 17, 9, 0, 2, 801_000_000, time.UTC)
	t1 := time.Date(2024, 2, 17, 9, 0, 5, 0, time.UTC)
	open := func(version string) (*warcwriter.Writer, *[]warcwriter.ClosedFile) {
		var closed []warcwriter.ClosedFile
		w, err := warcwriter.New(warcwriter.Config{Dir: t.TempDir(), Prefix: "NM", Hostname: "h", Version: version},
			warcwriter.WithBufferDir(t.TempDir()), warcwriter.WithOnClose(func(cf warcwriter.ClosedFile) { closed = append(closed, cf) }))
		if err != nil {
			t.Fatal(err)
		}
		return w, &closed
	}
	write := func(w *warcwriter.Writer, url string, at time.Time, resp, digest string, rev *warcwriter.Revisit) warcwriter.Location {
		t.Helper()
		loc, err := w.WriteCapture(ctx, warcwriter.Capture{URL: url, Date: at, Request: []byte("GET / HTTP/1.1\r\n\r\n"),
			Response: strings.NewReader(resp), ResponseLength: int64(len(resp)), PayloadDigest: digest,
			Metadata: &warcwriter.Metadata{Via: "http://example.org/"}, Revisit: rev})
		if err != nil {
			t.Fatalf("write %s: %v", url, err)
		}
		return loc
	}
	finish := func(w *warcwriter.Writer, closed *[]warcwriter.ClosedFile) warcwriter.ClosedFile {
		t.Helper()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if len(*closed) != 1 {
			t.Fatalf("%d files, want 1", len(*closed))
		}
		return (*closed)[0]
	}
	line := func(url, ts, mime, status, digest, redirect string, loc warcwriter.Location, file string) cdx.Line {
		key := strings.TrimPrefix(strings.TrimPrefix(url, "http://"), "example.org")
		return cdx.Line{URLKey: "org,example)" + key, Timestamp: ts, Original: url, Mimetype: mime, Status: status,
			Digest: strings.TrimPrefix(digest, "sha1:"), Redirect: redirect, Length: loc.Length, Offset: loc.Offset, Filename: file}
	}
	const ts0, ts1 = "20240117090002", "20240217090005"

	w1, c1 := open(warcwriter.Version11)
	page := write(w1, "http://example.org/page", t0, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: \"p\"\r\n\r\nhello", pageDigest, nil)
	moved := write(w1, "http://example.org/moved", t0, "HTTP/1.1 301 Moved Permanently\r\nLocation: /new\r\nContent-Type: text/html\r\n\r\nbye", movedDigest, nil)
	plain := write(w1, "http://example.org/plain", t0, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello", pageDigest, nil)
	// Another producer's plain 304 response: no original, though a revisit
	// names it by URI, date and digest.
	empty := write(w1, "http://example.org/empty", t0, "HTTP/1.1 304 Not Modified\r\n\r\n", goneDigest, nil)
	f1 := finish(w1, c1)

	w2, c2 := open(warcwriter.Version10)
	notModified := func(url string, id string) warcwriter.Location {
		return write(w2, url, t1, "HTTP/1.1 304 Not Modified\r\nETag: \"p\"\r\n\r\n", map[string]string{
			"/page": pageDigest, "/moved": movedDigest, "/plain": pageDigest, "/gone": goneDigest, "/empty": goneDigest,
		}[strings.TrimPrefix(url, "http://example.org")],
			&warcwriter.Revisit{RefersToURI: url, RefersToDate: t0, RefersToRecordID: id, NotModified: true})
	}
	notModified("http://example.org/page", page.RecordID)
	notModified("http://example.org/moved", moved.RecordID)
	notModified("http://example.org/plain", "") // found by URI, date and digest
	rGone := notModified("http://example.org/gone", "<urn:uuid:6a9d6f04-0000-4000-8000-000000000000>")
	rEmpty := notModified("http://example.org/empty", "")
	// An identical-payload-digest revisit keeps its own line.
	same := write(w2, "http://example.org/page", t1, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\nhello", pageDigest,
		&warcwriter.Revisit{RefersToURI: "http://example.org/page", RefersToDate: t0, RefersToRecordID: page.RecordID})
	f2 := finish(w2, c2)

	return notModifiedSet{
		first: f1.Path, second: f2.Path,
		want: []cdx.Line{
			line("http://example.org/page", ts0, "text/html", "200", pageDigest, "", page, f1.Name),
			line("http://example.org/moved", ts0, "text/html", "301", movedDigest, "http://example.org/new", moved, f1.Name),
			line("http://example.org/plain", ts0, "text/plain", "200", pageDigest, "", plain, f1.Name),
			line("http://example.org/empty", ts0, "unk", "304", goneDigest, "", empty, f1.Name),
			// The 304s found: their own key, time and URL, the rest their original's.
			line("http://example.org/page", ts1, "text/html", "200", pageDigest, "", page, f1.Name),
			line("http://example.org/moved", ts1, "text/html", "301", movedDigest, "http://example.org/new", moved, f1.Name),
			line("http://example.org/plain", ts1, "text/plain", "200", pageDigest, "", plain, f1.Name),
			// Not found: ordinary revisit lines.
			line("http://example.org/gone", ts1, cdx.RevisitMime, "304", goneDigest, "", rGone, f2.Name),
			line("http://example.org/empty", ts1, cdx.RevisitMime, "304", goneDigest, "", rEmpty, f2.Name),
			line("http://example.org/page", ts1, cdx.RevisitMime, "200", pageDigest, "", same, f2.Name),
		},
		wantStats: NotModified{Resolved: 3, NotFound: 2},
	}
}

// indexFiles runs IndexFiles and returns its lines and the errors it
// reported, and checks that OnFile heard of each file read whole, in
// order, with the lines emitted for it.
func indexFiles(t *testing.T, paths ...string) ([]cdx.Line, []error, FilesStats) {
	t.Helper()
	var lines []cdx.Line
	var errs []error
	var done []string
	emitted := 0
	st, err := IndexFiles(context.Background(), paths, func(l cdx.Line) error {
		lines = append(lines, l)
		return nil
	}, FilesOptions{
		OnError: func(e error) { errs = append(errs, e) },
		OnFile: func(path string, fs Stats) {
			if n := len(lines) - emitted; int64(n) != fs.Indexed {
				t.Errorf("%s: OnFile says %d lines, %d were emitted", path, fs.Indexed, n)
			}
			emitted = len(lines)
			done = append(done, filepath.Base(path))
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != st.Files {
		t.Errorf("OnFile heard of %v, %d files read whole", done, st.Files)
	}
	return lines, errs, st
}

// The line of a 304 points at its original response, in another file,
// whether that file comes before or after the revisit's, found by
// WARC-Refers-To or else by URI, date and payload digest, field by field;
// the others keep the line IndexFile gives them, in the same order.
func TestIndexFilesPointsNotModifiedAtOriginal(t *testing.T) {
	set := writeNotModifiedSet(t)
	n1 := 4 // lines of the first file
	for _, order := range []struct {
		name  string
		paths []string
		want  []cdx.Line
	}{
		{"original first", []string{set.first, set.second}, set.want},
		{"original last", []string{set.second, set.first}, append(append([]cdx.Line(nil), set.want[n1:]...), set.want[:n1]...)},
	} {
		t.Run(order.name, func(t *testing.T) {
			lines, errs, st := indexFiles(t, order.paths...)
			if len(errs) != 0 {
				t.Fatalf("errors on good files: %v", errs)
			}
			if len(lines) != len(order.want) {
				t.Fatalf("%d lines, want %d", len(lines), len(order.want))
			}
			for i, w := range order.want {
				if lines[i] != w {
					t.Errorf("line %d:\n got %s\nwant %s", i, lines[i].CDX11(), w.CDX11())
				}
			}
			if st.NotModified != set.wantStats || st.Files != 2 || st.Indexed != int64(len(lines)) || st.Errors != 0 {
				t.Errorf("stats %+v, want %+v of 2 files", st, set.wantStats)
			}
			if got := st.NotModified.Reasons(); got != "2 because their original is not in the files given" {
				t.Errorf("reasons %q", got)
			}
		})
	}
	// Alone, the recrawl's 304s have no original to point at.
	lines, _, st := indexFiles(t, set.second)
	if st.NotModified != (NotModified{NotFound: 5}) {
		t.Errorf("recrawl alone: %+v", st.NotModified)
	}
	for _, l := range lines {
		if l.Mimetype != cdx.RevisitMime {
			t.Errorf("recrawl alone: %s is not a revisit line", l.CDX11())
		}
	}
}

// Bad input is reported once (not once per pass) or counted, never fatal:
// a missing file, a truncated one, revisits that name no original or give
// a date that does not parse. An emit error or a cancelled context ends
// the call with that error.
func TestIndexFilesBadInput(t *testing.T) {
	set := writeNotModifiedSet(t)
	data, err := os.ReadFile(set.first)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.warc.gz")
	// The cut falls inside the last record (the /empty capture's metadata).
	if err := os.WriteFile(cut, data[:len(data)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	revisit := func(uri, date string, fields ...[2]string) string {
		f := [][2]string{{"WARC-Type", "revisit"}, {"WARC-Target-URI", uri}, {"WARC-Date", "2024-02-17T09:00:05Z"},
			{"WARC-Record-ID", "<urn:uuid:" + uri + ">"}, {"Content-Type", "application/http; msgtype=response"},
			{"WARC-Profile", "http://netpreserve.org/warc/1.0/revisit/server-not-modified"}}
		if date != "" {
			f = append(f, [2]string{"WARC-Refers-To-Date", date})
		}
		return buildRecord("WARC/1.0", append(f, fields...), "HTTP/1.1 304 Not Modified\r\n\r\n")
	}
	target := [2]string{"WARC-Refers-To-Target-URI", "http://example.org/page"}
	digest := [2]string{"WARC-Payload-Digest", "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"}
	odd := filepath.Join(dir, "odd.warc.gz")
	var oddData []byte
	for _, r := range []string{
		revisit("http://example.org/a", "yesterday", target, digest),
		revisit("http://example.org/b", "", target, digest),
		revisit("http://example.org/c", "2024-01-17T09:00:02Z", target),
		// A bad date does not matter when WARC-Refers-To names the original.
		revisit("http://example.org/d", "yesterday", target, digest, [2]string{"WARC-Refers-To", "<urn:uuid:unknown>"}),
	} {
		oddData = append(oddData, gzipped(t, r)...)
	}
	if err := os.WriteFile(odd, oddData, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.warc.gz")

	lines, errs, st := indexFiles(t, missing, cut, odd, set.second)
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	if len(errs) != 2 || !strings.Contains(msgs[0], "missing.warc.gz") || !strings.Contains(msgs[1], "cut.warc.gz: record at offset") {
		t.Errorf("errors %q, want the missing file and the cut record, once each", msgs)
	}
	var rerr *RecordError
	if len(errs) == 2 && !errors.As(errs[1], &rerr) {
		t.Errorf("the cut record's error is a %T, want a *RecordError", errs[1])
	}
	// The cut file's captures are indexed, so its originals are found.
	want := NotModified{Resolved: 3, NotFound: 2 + 1, Unnamed: 2, BadDate: 1}
	if st.NotModified != want || st.Files != 3 || st.Errors != 1 {
		t.Errorf("stats %+v, want %+v of 3 files read whole, 1 error", st, want)
	}
	if got := st.NotModified.Reasons(); !strings.Contains(got, "3 because their original is not in the files given") ||
		!strings.Contains(got, "2 because they have no WARC-Refers-To and no complete") ||
		!strings.Contains(got, "1 because they have no WARC-Refers-To and a WARC-Refers-To-Date that does not parse") {
		t.Errorf("reasons %q", got)
	}
	odds := 0
	for _, l := range lines {
		if strings.HasPrefix(l.Original, "http://example.org/") && len(l.Original) == len("http://example.org/a") {
			odds++
			if l.Mimetype != cdx.RevisitMime || l.Status != "304" || l.Filename != "odd.warc.gz" {
				t.Errorf("unresolvable revisit: %s, want its own revisit line", l.CDX11())
			}
		}
	}
	if odds != 4 {
		t.Errorf("%d lines of the unresolvable revisits, want 4", odds)
	}

	stop := errors.New("stop")
	if _, err := IndexFiles(context.Background(), []string{set.first}, func(cdx.Line) error { return stop }, FilesOptions{}); !errors.Is(err, stop) {
		t.Errorf("emit error: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := IndexFiles(ctx, []string{set.first}, func(cdx.Line) error { return nil }, FilesOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := IndexFiles(context.Background(), []string{missing}, func(cdx.Line) error { return nil }, FilesOptions{}); err != nil {
		t.Errorf("a missing file with no OnError: %v", err)
	}
}

// Memory is bounded by the 304s, not the records: the originals wanted are
// one per server-not-modified revisit however many responses the files
// hold.
func TestIndexFilesHoldsOnlyWantedOriginals(t *testing.T) {
	set := writeNotModifiedSet(t)
	o := &originals{byID: map[string]*original{}, byKey: map[string]*original{}}
	for _, p := range []string{set.first, set.second} {
		if _, err := eachRecord(context.Background(), p, func(l cdx.Line, f recordFacts) error {
			o.note(l, f)
			return nil
		}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(o.byID) + len(o.byKey); n != 5 {
		t.Errorf("%d originals held, want 5 (one per 304): by id %v, by key %v", n, keys(o.byID), keys(o.byKey))
	}
}

func keys(m map[string]*original) []string {
	var out []string
	for k := range m {
		out = append(out, fmt.Sprintf("%q", k))
	}
	return out
}
