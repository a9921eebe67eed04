package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `trawler qa` refuses what cannot work before it starts Chromium or
// touches anything: each mistake is named, with the exit status of a
// usage error (2) or of a failed run (1).
func TestQABadInput(t *testing.T) {
	empty := t.TempDir()
	withLogs := t.TempDir()
	for _, d := range []string{"logs/fc-npld", "warcs/fc-npld"} {
		if err := os.MkdirAll(filepath.Join(withLogs, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(withLogs, "logs/fc-npld/crawl.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		want   string
	}{
		{"nothing given", []string{"qa"}, 2, "give one of --cdx-dir and --cdx-url"},
		{"both indexes", []string{"qa", "--cdx-dir", "x", "--cdx-url", "http://h/", "--warc-dir", "w", "--crawl-log", "l"}, 2, "give one of --cdx-dir and --cdx-url"},
		{"bad launch", []string{"qa", "--data", empty, "--launch", "2025"}, 2, `--launch "2025": want 14 digits`},
		{"bad bounds", []string{"qa", "--data", empty, "--patch-per-page", "0"}, 2, "--patch-per-page"},
		{"no crawl logs", []string{"qa", "--data", empty}, 1, "no crawl.log files"},
		{"no index", []string{"qa", "--data", withLogs}, 1, "--cdx-dir: stat"},
		{"bad index URL", []string{"qa", "--data", withLogs, "--cdx-url", "ftp://x"}, 1, "outbackcdx: URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if got := run(tc.args, &out, &errb); got != tc.status || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", got, errb.String(), tc.status, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(withLogs, "cdx")); err == nil {
		t.Error("a missing index was created")
	}
}
