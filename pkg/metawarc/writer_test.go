package metawarc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// strict are the reading options of the content WARCs' tests: every
// finding gowarc can make fails, digests included.
func strict() []gowarc.WarcRecordOption {
	return []gowarc.WarcRecordOption{gowarc.WithStrictValidation(), gowarc.WithBlockErrorPolicy(gowarc.ErrFail),
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail), gowarc.WithUnknownRecordTypePolicy(gowarc.ErrFail),
		gowarc.WithFixDigest(false)}
}

// ReadStrict reads every record of a WARC strictly and returns the blocks
// by target URI (warcinfo under "warcinfo").
func readStrict(t *testing.T, path string) map[string][]byte {
	t.Helper()
	r, err := gowarc.NewWarcFileReader(path, 0, strict()...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	out := map[string][]byte{}
	for {
		rec, off, v, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("record at %d: %v", off, err)
		}
		if len(*v) > 0 {
			t.Errorf("record at %d: validation %v", off, v.String())
		}
		rd, err := rec.Block().RawBytes()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rd)
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.ValidateDigest(v); err != nil {
			t.Errorf("record at %d: digest: %v", off, err)
		}
		key := rec.WarcHeader().Get(gowarc.WarcTargetURI)
		if rec.Type() == gowarc.Warcinfo {
			key = "warcinfo"
		}
		out[key] = b
		_ = rec.Close()
	}
}

func testConfig(dir string) Config {
	return Config{Dir: dir, Prefix: "TEST-METADATA", Hostname: "host1", CrawlName: "test", Software: "trawler/test"}
}

func TestWriteStrictAndIdempotent(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	launch := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	name := cfg.Name("tid:57875:https://example.org/", launch)
	if name != "TEST-METADATA-tid57875-20240117090000000-00000-host1.warc.gz" {
		t.Fatalf("name = %s", name)
	}
	logURI := URI(PathCrawlLog, "fc", "tid:57875:https://example.org/", "20240117090000")
	items := []Item{
		{URI: logURI, ContentType: "text/plain", Block: []byte("line 1\nline 2\n")},
		{URI: URI(PathCDX, "fc", "tid:57875:https://example.org/", "20240117090000"), ContentType: "text/plain", Block: nil},
	}
	res, err := Write(context.Background(), cfg, name, launch.Add(time.Hour), items)
	if err != nil {
		t.Fatal(err)
	}
	if res.Existed || res.Path != filepath.Join(dir, name) || res.Records != 3 {
		t.Fatalf("result %+v", res)
	}
	got := readStrict(t, res.Path)
	if string(got[logURI]) != "line 1\nline 2\n" {
		t.Errorf("crawl.log block = %q", got[logURI])
	}
	if want := "metadata://trawler.crawl/crawl/logs/crawl.log?crawl=fc&launch=20240117090000&source=tid%3A57875%3Ahttps%3A%2F%2Fexample.org%2F"; logURI != want {
		t.Errorf("URI = %s, want %s", logURI, want)
	}
	// Writing again keeps the file.
	again, err := Write(context.Background(), cfg, name, time.Now(), items[:1])
	if err != nil || !again.Existed {
		t.Fatalf("second write: %+v, %v", again, err)
	}
	assertOnlyFile(t, dir, name)
}

// assertOnlyFile checks dir holds name and nothing else (an empty staging
// directory allowed).
func assertOnlyFile(t *testing.T, dir, name string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if e.Name() == StagingDir {
			sub, _ := os.ReadDir(filepath.Join(dir, StagingDir))
			for _, s := range sub {
				names = append(names, StagingDir+"/"+s.Name())
			}
			continue
		}
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != name {
		t.Fatalf("files in %s = %v, want only %s", dir, names, name)
	}
}

// TestKillDuringWrite kills a process writing a large metadata WARC with
// SIGKILL once it has written part of it, then recovers and writes again
// as a restarted service would: one complete file, nothing else.
func TestKillDuringWrite(t *testing.T) {
	if os.Getenv("METAWARC_HELPER_DIR") != "" {
		return // the helper's own run of this test
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriteForever$", "-test.v")
	cmd.Env = append(os.Environ(), "METAWARC_HELPER_DIR="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	staging := filepath.Join(dir, StagingDir)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if size := openSize(staging); size > 256<<10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("helper wrote nothing in time: %s", out.String())
		}
		time.Sleep(5 * time.Millisecond) // polling a child process's file; no event to wait on
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if openSize(staging) == 0 {
		t.Fatal("no partial file left to recover from")
	}
	if ents, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz*")); len(ents) != 0 {
		t.Fatalf("a file reached the WARC directory before completion: %v", ents)
	}
	if err := Recover(dir, nil); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(dir)
	name, items := helperItems(cfg)
	res, err := Write(context.Background(), cfg, name, time.Now(), items)
	if err != nil {
		t.Fatal(err)
	}
	assertOnlyFile(t, dir, name)
	got := readStrict(t, res.Path)
	if len(got) != len(items)+1 {
		t.Errorf("%d records, want %d", len(got), len(items)+1)
	}
}

// openSize is the size of the first ".open" file under staging, 0 if none.
func openSize(staging string) int64 {
	m, _ := filepath.Glob(filepath.Join(staging, "*", "*.open"))
	if len(m) == 0 {
		return 0
	}
	fi, err := os.Stat(m[0])
	if err != nil {
		return 0
	}
	return fi.Size()
}

// helperItems are many large records, so writing takes long enough to be
// killed midway.
func helperItems(cfg Config) (string, []Item) {
	var items []Item
	// Random text: a repetitive block would compress to nothing.
	rng := rand.New(rand.NewPCG(1, 2))
	block := make([]byte, 1<<20)
	for i := range block {
		block[i] = 'a' + byte(rng.IntN(26))
	}
	for i := range 40 {
		items = append(items, Item{URI: URI(fmt.Sprintf("crawl/logs/part-%d", i), "fc", "src", "20240117090000"),
			ContentType: "text/plain", Block: block})
	}
	return cfg.Name("src", time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)), items
}

// TestHelperWriteForever is the child of TestKillDuringWrite.
func TestHelperWriteForever(t *testing.T) {
	dir := os.Getenv("METAWARC_HELPER_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	cfg := testConfig(dir)
	name, items := helperItems(cfg)
	for {
		_, _ = Write(context.Background(), cfg, name, time.Now(), items)
		_ = os.Remove(filepath.Join(dir, name)) // keep writing until killed
	}
}

func TestLineSetsSelect(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		"2024-01-17T08:59:59.000Z   200        10 http://a/ - - text/html #001 - - tid:1:http://a/ -\n",
		"2024-01-17T09:00:00.000Z   200        10 http://a/ - - text/html #001 - - tid:1:http://a/ launchTimestamp:20240117090000\n",
		"2024-01-17T09:00:01.000Z   200        10 http://b/ L http://a/ text/html #001 - - tid:2:http://b/ -\n",
		"2024-01-17T09:30:00.000Z   200        10 http://a/x L http://a/ text/html #001 - - tid:1:http://a/ -\n",
		"2024-01-17T10:00:00.000Z   200        10 http://a/ - - text/html #001 - - tid:1:http://a/ launchTimestamp:20240117100000\n",
		"2024-01-17T10:00:01.000Z   200        10 http://a/partial - -",
	}
	if err := os.WriteFile(filepath.Join(dir, "crawl.log.20240117000000"), []byte(strings.Join(lines[:3], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crawl.log"), []byte(strings.Join(lines[3:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := LogFiles([]string{dir})
	if err != nil || len(files) != 2 || filepath.Base(files[1]) != "crawl.log" {
		t.Fatalf("files = %v, %v", files, err)
	}
	// Launch 0: the seed at 9:00 and a child logged at 9:30 (and a partial
	// line's event, which has no complete line yet); launch 1: the seed
	// again at 10:00 and b's line.
	var sets LineSets
	for _, e := range []struct {
		launch int
		ev     messages.Crawled
	}{
		{0, messages.Crawled{URL: "http://a/", Timestamp: "2024-01-17T09:00:00.000Z"}},
		{0, messages.Crawled{URL: "http://a/x", Timestamp: "2024-01-17T09:30:00Z"}},
		{0, messages.Crawled{URL: "http://a/partial", Timestamp: "2024-01-17T10:00:01.000Z"}},
		{0, messages.Crawled{URL: "http://a/nowhen", Timestamp: "yesterday"}},
		{1, messages.Crawled{URL: "http://a/", Timestamp: "2024-01-17T10:00:00.000Z"}},
		{1, messages.Crawled{URL: "http://b/", Timestamp: "2024-01-17T09:00:01.000Z"}},
	} {
		sets.Add(e.launch, e.ev)
	}
	got, n, err := sets.Select(files)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{lines[1] + lines[3], lines[2] + lines[4]}; len(got) != 2 || string(got[0]) != want[0] || string(got[1]) != want[1] || n != 4 {
		t.Errorf("selected %d lines:\n%q\nwant:\n%q", n, got, want)
	}
	if sets.Len() != 5 {
		t.Errorf("Len = %d, want 5 (an event without a time has no line)", sets.Len())
	}
	for _, bad := range []string{"garbage\n", "not-a-time 200 10 http://a/ - - x #1 - - s -\n", "\n"} {
		if m := sets.match([]byte(bad)); m != nil {
			t.Errorf("malformed line %q matched %v", bad, m)
		}
	}
	if _, _, err := sets.Select([]string{filepath.Join(dir, "gone")}); err == nil {
		t.Error("a missing file: no error")
	}
	// A file last written before the earliest event is not read.
	old := time.Date(2024, 1, 17, 8, 0, 0, 0, time.UTC)
	if err := os.Chtimes(files[0], old, old); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := sets.Select(files); string(got[0]) != lines[3] || string(got[1]) != lines[4] {
		t.Errorf("with the old file skipped: %q", got)
	}
	// A line longer than the read buffer is still one line.
	long := "http://a/" + strings.Repeat("x", 100<<10)
	longLine := "2024-01-17T11:00:00.000Z   200        10 " + long + " L http://a/ text/html #001 - - tid:1:http://a/ -\n"
	longFile := filepath.Join(t.TempDir(), "crawl.log")
	if err := os.WriteFile(longFile, []byte(lines[0]+longLine+lines[3]), 0o644); err != nil {
		t.Fatal(err)
	}
	var ls LineSets
	ls.Add(0, messages.Crawled{URL: long, Timestamp: "2024-01-17T11:00:00.000Z"})
	ls.Add(0, messages.Crawled{URL: "http://a/x", Timestamp: "2024-01-17T09:30:00Z"})
	if got, n, err := ls.Select([]string{longFile}); err != nil || n != 2 || string(got[0]) != longLine+lines[3] {
		t.Errorf("long line: %d lines, %v", n, err)
	}
	var empty LineSets
	if got, n, err := empty.Select(files); len(got) != 0 || n != 0 || err != nil {
		t.Errorf("empty sets: %q %d %v", got, n, err)
	}
}
