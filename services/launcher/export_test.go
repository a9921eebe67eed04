package launcher

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestExport(t *testing.T) {
	dir := t.TempDir()
	feedDir := testFeedDir(t)
	writeInput(t, feedDir, "zz-blocks.jsonl", strings.Join([]string{
		`{"id": 3001, "title": "blocked", "seeds": ["https://www.blocked.example.uk/", "http://blocked.example.uk/private/area"], "schedules": [{"startDate": "2024-01-01 00:00:00", "endDate": "2024-02-01 00:00:00", "frequency": "NEVERCRAWL"}]}`,
		`{"id": 3002, "title": "blocked twice", "seeds": ["https://www.blocked.example.uk/"], "schedules": [{"startDate": "2024-01-01 00:00:00", "frequency": "DAILY"}, {"startDate": "2024-01-01 00:00:00", "frequency": "NEVERCRAWL"}]}`,
		`{"id": 3003, "title": "watched blog", "seeds": ["https://blog.example.uk/"], "watched": true, "schedules": []}`,
	}, "\n"))
	cfg := ExportConfig{Feeds: []string{feedDir}, Watched: filepath.Join(dir, "watched.jsonl"), Excluded: filepath.Join(dir, "excluded.txt")}
	sum, err := Export(context.Background(), cfg, ExportDeps{Clock: fixedClock{time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Feeds != 3 || sum.Targets != 16 || sum.WatchedTargets != 2 || sum.WatchedSeeds != 3 || sum.ExcludedTargets != 2 ||
		sum.ExcludedPrefixes != 2 || sum.BadLines != 5 {
		t.Errorf("summary %+v", sum)
	}
	excluded, err := os.ReadFile(cfg.Excluded)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Excluded SURT prefixes: the seeds of NEVERCRAWL targets in the crawl feed.\n" +
		"# Written by trawler launcher export at 2024-05-01T12:00:00Z; one +prefix per line, read as a final REJECT.\n" +
		"+http://(uk,example,blocked,)/private/\n" +
		"+http://(uk,example,blocked,www,)/\n"
	if string(excluded) != want {
		t.Errorf("excluded file:\n%s\nwant:\n%s", excluded, want)
	}
	f, err := os.Open(cfg.Watched)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	var got []WatchedSeed
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var w WatchedSeed
		if err := json.Unmarshal(sc.Bytes(), &w); err != nil {
			t.Fatalf("watched line %q: %v", sc.Text(), err)
		}
		got = append(got, w)
	}
	wantWatched := []WatchedSeed{
		{URL: "https://www.council.example.gov.uk/", TargetID: 1002, Title: "Council site, weekly, subdomains",
			Source: "tid:1002:https://www.council.example.gov.uk/", DocumentURLScheme: "https://www.council.example.gov.uk/documents/"},
		{URL: "https://news.council.example.gov.uk/latest", TargetID: 1002, Title: "Council site, weekly, subdomains",
			Source: "tid:1002:https://www.council.example.gov.uk/", DocumentURLScheme: "https://www.council.example.gov.uk/documents/"},
		{URL: "https://blog.example.uk/", TargetID: 3003, Title: "watched blog", Source: "tid:3003:https://blog.example.uk/"},
	}
	if !slices.Equal(got, wantWatched) {
		t.Errorf("watched %+v\nwant %+v", got, wantWatched)
	}
}

// When a feed cannot be read no file is replaced: an exclusion list
// missing a feed would let blocked sites be crawled.
func TestExportFeedFailureReplacesNothing(t *testing.T) {
	dir := t.TempDir()
	excluded := writeInput(t, dir, "excluded.txt", "+http://(uk,example,old,)/\n")
	cfg := ExportConfig{Feeds: []string{filepath.Join(testFeedDir(t), "crawl-feed-npld.jsonl"), filepath.Join(dir, "missing.jsonl")},
		Watched: filepath.Join(dir, "watched.jsonl"), Excluded: excluded}
	if _, err := Export(context.Background(), cfg, ExportDeps{}); err == nil || !strings.Contains(err.Error(), "no file replaced") ||
		!strings.Contains(err.Error(), "missing.jsonl") {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(excluded); string(b) != "+http://(uk,example,old,)/\n" {
		t.Errorf("excluded file replaced: %s", b)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("files left behind: %v", entries)
	}
}

func TestExportConfig(t *testing.T) {
	tests := []struct {
		cfg  ExportConfig
		want string
	}{
		{ExportConfig{Watched: "w"}, "no feed given"},
		{ExportConfig{Feeds: []string{"f"}}, "nothing to export"},
		{ExportConfig{Feeds: []string{"f"}, Watched: "x", Excluded: "x"}, "same file"},
	}
	for _, tc := range tests {
		if _, err := Export(context.Background(), tc.cfg, ExportDeps{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	dir := t.TempDir()
	cfg := ExportConfig{Feeds: []string{filepath.Join(testFeedDir(t), "crawl-feed-npld.jsonl")},
		Excluded: filepath.Join(dir, "no-such-dir", "x.txt")}
	if _, err := Export(context.Background(), cfg, ExportDeps{}); err == nil || !strings.Contains(err.Error(), "no-such-dir") {
		t.Errorf("unwritable destination: %v", err)
	}
}
