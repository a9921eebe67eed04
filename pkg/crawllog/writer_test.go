package crawllog

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
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
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	clk.set(time.Date(2024, 1, 20, 8, 0, 0, 0, time.UTC))
	if err := w.Sync(); err != nil {
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

// A line is in the file when Write returns, with no Sync or Close: what
// a killed process leaves in the page cache is whole.
func TestLineInFileWhenWriteReturns(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, Options{Dir: dir})
	var want string
	for i := range 3 {
		e := entryAt(time.Now(), fmt.Sprintf("http://a.example/%d", i))
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
		want += string(AppendLine(nil, e))
		if got := readFile(t, filepath.Join(dir, DefaultName)); got != want {
			t.Fatalf("after write %d the file holds %q, want %q", i, got, want)
		}
	}
}

// killChildEnv makes the test binary a child that writes lines until it is
// killed, reporting on stdout how many Write calls have returned.
const killChildEnv = "TRAWLER_CRAWLLOG_KILL_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		os.Exit(writeUntilKilled(dir))
	}
	goleak.VerifyTestMain(m)
}

func writeUntilKilled(dir string) int {
	w, err := Open(Options{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := 0; ; i++ {
		if err := w.Write(entryAt(time.Now(), fmt.Sprintf("http://a.example/%d", i))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if i%50 == 0 {
			fmt.Printf("%d\n", i+1) // os.Stdout is unbuffered
		}
	}
}

// A process killed with SIGKILL while logging leaves every line whose Write
// returned, each whole: nothing waits in a user-space buffer.
func TestKilledWriterLosesNoLine(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	returned := 0
	deadline := time.Now().Add(time.Minute)
	for returned < 2000 && sc.Scan() {
		if time.Now().After(deadline) {
			t.Fatal("child too slow")
		}
		returned, _ = strconv.Atoi(sc.Text())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	got := readFile(t, filepath.Join(dir, DefaultName))
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if !strings.HasSuffix(got, "\n") || len(lines) < returned {
		t.Fatalf("file has %d lines (ends with newline: %v), but %d writes had returned", len(lines), strings.HasSuffix(got, "\n"), returned)
	}
	for i, l := range lines {
		if want := fmt.Sprintf(" http://a.example/%d ", i); !strings.Contains(l, want) || len(strings.Fields(l)) != 12 {
			t.Fatalf("line %d = %q, want a whole line for %s", i+1, l, want)
		}
	}
	t.Logf("killed after %d writes had returned; %d lines in the file", returned, len(lines))
}

// BenchmarkWriterWrite is the cost of one line: formatting plus one
// write(2) to the page cache.
func BenchmarkWriterWrite(b *testing.B) {
	w, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	es := goldenEntries(b)
	for i := range es {
		es[i].Logged = time.Now() // no rotation during the run
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := w.Write(es[i%len(es)]); err != nil {
			b.Fatal(err)
		}
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
	if err := w.Sync(); !errors.Is(err, ErrClosed) {
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
