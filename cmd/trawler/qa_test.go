package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
	"github.com/trawler-crawl/trawler/pkg/warcindex"
	"github.com/trawler-crawl/trawler/pkg/warcwriter"
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

// A run over a standalone-shaped data directory: the page replays from the
// archive, the resource it lacks is reported, the bad crawl.log line is
// counted and skipped, and the report files are written.
func TestQARun(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("no Chromium installed")
	}
	data := t.TempDir()
	warcs := filepath.Join(data, "warcs", "fc-npld")
	w, err := warcwriter.New(warcwriter.Config{Dir: warcs, Prefix: "QA", Name: "QA-0.warc.gz", Hostname: "h"})
	if err != nil {
		t.Fatal(err)
	}
	body := `<!DOCTYPE html><html><head><link rel="stylesheet" href="/missing.css"></head><body><p>hi</p></body></html>`
	resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	at := time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)
	if _, err := w.WriteCapture(context.Background(), warcwriter.Capture{URL: "http://qa.test/", Date: at, Request: []byte("GET / HTTP/1.1\r\n\r\n"),
		Response: strings.NewReader(resp), ResponseLength: int64(len(resp)), PayloadDigest: "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var lines []cdx.Line
	if _, err := warcindex.IndexFile(context.Background(), filepath.Join(warcs, "QA-0.warc.gz"), func(l cdx.Line) error {
		lines = append(lines, l)
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	ix, err := cdxindex.Open(filepath.Join(data, "cdx", "index"), cdxindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Put(context.Background(), "fc", lines); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	logDir := filepath.Join(data, "logs", "fc-npld")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	log := "not a crawl.log line\n2025-05-06T07:08:10.000Z   200   500 http://qa.test/ - - text/html #001 20250506070809000+20 sha1:X http://qa.test/ -\n"
	if err := os.WriteFile(filepath.Join(logDir, "crawl.log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report")
	var stdout, stderr bytes.Buffer
	if got := run([]string{"qa", "--data", data, "--out", out, "--no-sandbox", "--tabs", "1", "--log-level", "error"}, &stdout, &stderr); got != 0 {
		t.Fatalf("exit %d: %s", got, stderr.String())
	}
	t.Log(stdout.String())
	if !strings.Contains(stdout.String(), "1 pages (0 good, 1 moderate") || !strings.Contains(stdout.String(), "1 distinct URLs missing") {
		t.Errorf("summary %q: want one moderate page with one URL missing", stdout.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "qa-report.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"http://qa.test/missing.css"`, "crawl.log:1: 4 fields, want at least 11"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %s:\n%s", want, b)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "qa-report.html")); err != nil {
		t.Error(err)
	}
}
