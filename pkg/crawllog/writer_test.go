package crawllog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// clock is a settable time source safe to read from the flusher goroutine.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }
func (c *clock) set(t time.Time)  { c.ns.Store(t.UnixNano()) }
func (c *clock) now() time.Time   { return time.Unix(0, c.ns.Load()).UTC() }

func entryAt(t time.Time, url string) Entry {
	return Entry{Logged: t, Status: 200, Size: 10, HTTP: true, URL: url, MIME: "text/html"}
}

func openTest(t *testing.T, o Options) *Writer {
	t.Helper()
	w, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriterGoldenWithExtra(t *testing.T) {
	for _, tt := range []struct {
		extra  bool
		golden string
	}{{false, "testdata/crawl.log"}, {true, "testdata/crawl-extra.log"}} {
		dir := t.TempDir()
		w := openTest(t, Options{Dir: dir, Extra: tt.extra})
		for _, e := range goldenEntries(t) {
			if err := w.Write(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := readFile(t, filepath.Join(dir, DefaultName)), readFile(t, tt.golden); got != want {
			t.Errorf("extra=%v: file differs from %s\n got:\n%s\nwant:\n%s", tt.extra, tt.golden, got, want)
		}
	}
}

func TestRotationAtMidnight(t *testing.T) {
	dir := t.TempDir()
	clk := newClock(time.Date(2024, 1, 17, 23, 59, 59, 0, time.UTC))
	w := openTest(t, Options{Dir: dir, Name: "frequent.crawl.log", Now: clk.now})
	before := entryAt(clk.now(), "http://a.example/before")
	if err := w.Write(before); err != nil {
		t.Fatal(err)
	}
	clk.set(time.Date(2024, 1, 18, 0, 0, 1, 0, time.UTC))
	after := entryAt(clk.now(), "http://a.example/after")
	if err := w.Write(after); err != nil {
		t.Fatal(err)
	}
	// Two days later with no writes: Flush alone rotates again.
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	clk.set(time.Date(2024, 1, 20, 8, 0, 0, 0, time.UTC))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"frequent.crawl.log.20240118000000": string(AppendLine(nil, before)),
		"frequent.crawl.log.20240119000000": string(AppendLine(nil, after)),
		"frequent.crawl.log":                "",
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(files) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("files %v, want %d", names, len(files))
	}
	for name, want := range files {
		if got := readFile(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestOpenRotatesLeftoverAndRepairsCrash(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, DefaultName)
	// Yesterday's file, cut off mid-line by a crash.
	if err := os.WriteFile(path, []byte("old line\npartial"), 0o644); err != nil {
		t.Fatal(err)
	}
	yesterday := time.Date(2024, 1, 16, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, yesterday, yesterday); err != nil {
		t.Fatal(err)
	}
	clk := newClock(time.Date(2024, 1, 17, 10, 0, 0, 0, time.UTC))
	w := openTest(t, Options{Dir: dir, Now: clk.now})
	e := entryAt(clk.now(), "http://a.example/today")
	if err := w.Write(e); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path+".20240117000000"); got != "old line\npartial" {
		t.Errorf("rotated leftover = %q", got)
	}
	if got := readFile(t, path); got != string(AppendLine(nil, e)) {
		t.Errorf("new log = %q", got)
	}

	// Same-day restart after a crash: append, ending the torn line first.
	if err := os.WriteFile(path, []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	w2 := openTest(t, Options{Dir: dir, Now: clk.now})
	if err := w2.Write(e); err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, path), "torn\n"+string(AppendLine(nil, e)); got != want {
		t.Errorf("after reopen = %q, want %q", got, want)
	}
}

func TestRotationNameCollision(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, DefaultName)
	for _, p := range []string{path, path + ".20240117000000"} {
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Date(2024, 1, 16, 1, 0, 0, 0, time.UTC)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	clk := newClock(time.Date(2024, 1, 17, 1, 0, 0, 0, time.UTC))
	w := openTest(t, Options{Dir: dir, Now: clk.now})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path+".20240117000000-1"); got != "x\n" {
		t.Errorf("collision file = %q", got)
	}
}

func TestConcurrentWrites(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, Options{Dir: dir})
	const writers, each = 8, 250
	e := entryAt(time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC), "http://a.example/concurrent")
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				if err := w.Write(e); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := string(AppendLine(nil, e))
	got := readFile(t, filepath.Join(dir, DefaultName))
	if got != strings.Repeat(want, writers*each) {
		t.Errorf("file holds %d bytes, want %d identical whole lines", len(got), writers*each*len(want))
	}
}

func TestBackgroundFlush(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, Options{Dir: dir})
	e := entryAt(time.Now(), "http://a.example/flushed")
	if err := w.Write(e); err != nil {
		t.Fatal(err)
	}
	want := string(AppendLine(nil, e))
	deadline := time.Now().Add(5 * time.Second)
	for {
		if b, _ := os.ReadFile(filepath.Join(dir, DefaultName)); string(b) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("line not flushed to disk within 5s without Flush")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestClosedAndBadOptions(t *testing.T) {
	w := openTest(t, Options{Dir: t.TempDir()})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := w.Write(Entry{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if err := w.Flush(); !errors.Is(err, ErrClosed) {
		t.Errorf("Flush after Close = %v, want ErrClosed", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{}, {Dir: t.TempDir(), Name: "../escape"}, {Dir: filepath.Join(file, "sub")}} {
		if w, err := Open(o); err == nil {
			w.Close()
			t.Errorf("Open(%+v) succeeded", o)
		}
	}
}
