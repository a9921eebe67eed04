package metawarc

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CopyRange takes the lines of a time range in file order, across a
// rotated file and the current one; counts and skips a line without a
// time (naming its file and line); leaves out an unterminated last line;
// and skips a file last written before the range.
func TestCopyRange(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		"2024-01-17T08:59:59.000Z   200        10 http://a/ - - text/html #001 - - tid:1:http://a/ -\n",
		"2024-01-17T09:00:00.000Z   200        10 http://a/ - - text/html #001 - - tid:1:http://a/ -\n",
		"garbage line\n",
		"2024-01-17T09:30:00.000Z   200        10 http://a/x L http://a/ text/html #001 - - tid:1:http://a/ -\n",
		"2024-01-17T10:00:00.000Z   200        10 http://a/ - - text/html #001 - - tid:1:http://a/ -\n",
		"2024-01-17T09:40:00.000Z   200        10 http://a/partial - -",
	}
	rotated := filepath.Join(dir, "crawl.log.20240117000000")
	if err := os.WriteFile(rotated, []byte(strings.Join(lines[:3], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "crawl.log"), []byte(strings.Join(lines[3:], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := LogFiles([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	to := time.Date(2024, 1, 17, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		from, to time.Time
		want     string
		bad      int64
	}{
		{"bounded", from, to, lines[1] + lines[3], 1},
		{"from only", from, time.Time{}, lines[1] + lines[3] + lines[4], 1},
		{"no bounds", time.Time{}, time.Time{}, lines[0] + lines[1] + lines[3] + lines[4], 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			res, err := CopyRange(files, tc.from, tc.to, &b)
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want || res.Lines != int64(strings.Count(tc.want, "\n")) {
				t.Errorf("copied %d lines:\n%s\nwant:\n%s", res.Lines, b.String(), tc.want)
			}
			if res.Bad != tc.bad || !strings.Contains(res.FirstBad, "crawl.log.20240117000000:3:") {
				t.Errorf("bad %d (%s), want %d at crawl.log.20240117000000:3", res.Bad, res.FirstBad, tc.bad)
			}
		})
	}
	// A rotated file last written before the range is not read.
	old := from.Add(-time.Hour)
	if err := os.Chtimes(rotated, old, old); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if res, err := CopyRange(files, from, to, &b); err != nil || b.String() != lines[3] || res.Bad != 0 {
		t.Errorf("old file skipped: %q, %+v, %v", b.String(), res, err)
	}
	if _, err := CopyRange([]string{filepath.Join(dir, "gone")}, time.Time{}, time.Time{}, &b); err == nil {
		t.Error("a missing file: no error")
	}
}

// An item whose block is a file is written as that file's bytes, the
// same record a []byte block makes.
func TestWriteFileItem(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	block := bytes.Repeat([]byte("2024-01-17T09:00:00.000Z 200 10 http://a/ - - text/html #001 - - s -\n"), 30000)
	file := filepath.Join(t.TempDir(), "crawl.log.staged")
	if err := os.WriteFile(file, block, 0o644); err != nil {
		t.Fatal(err)
	}
	launch := time.Date(2024, 1, 17, 9, 0, 0, 0, time.UTC)
	fromFile := URI(PathCrawlLog, "dc", "*", "")
	inMemory := URI(PathCDX, "dc", "*", "")
	empty := URI(PathSeeds, "dc", "*", "")
	emptyFile := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(emptyFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Write(context.Background(), cfg, cfg.Name("*", launch), launch, []Item{
		{URI: fromFile, ContentType: "text/plain", File: file},
		{URI: inMemory, ContentType: "text/plain", Block: block},
		{URI: empty, ContentType: "text/plain", File: emptyFile},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := readStrict(t, res.Path)
	if !bytes.Equal(got[fromFile], block) || !bytes.Equal(got[inMemory], block) || len(got[empty]) != 0 {
		t.Fatalf("blocks: file %d bytes, memory %d bytes, empty %d bytes; want %d", len(got[fromFile]), len(got[inMemory]), len(got[empty]), len(block))
	}
	if _, err := Write(context.Background(), cfg, "other.warc.gz", launch, []Item{{URI: fromFile, ContentType: "text/plain", File: filepath.Join(dir, "gone")}}); err == nil {
		t.Error("a missing block file: no error")
	}
}
