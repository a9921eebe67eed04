package launcher

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func feedLine(id string) string {
	return strings.Replace(goodLine, `"id": 1`, `"id": `+id, 1)
}

// feedDir makes a directory of feeds: b.jsonl without a final newline,
// a.jsonl with one, and files that are not feeds.
func feedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b.jsonl"), feedLine("3")+"\n"+feedLine("4"))
	writeFile(t, filepath.Join(dir, "a.jsonl"), feedLine("1")+"\n"+feedLine("2")+"\n")
	writeFile(t, filepath.Join(dir, "notes.txt"), "not a feed")
	if err := os.Mkdir(filepath.Join(dir, "c.jsonl"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "c.jsonl", "inner.jsonl"), feedLine("99"))
	return dir
}

func readIDs(t *testing.T, rc io.ReadCloser, name string) []int64 {
	t.Helper()
	t.Cleanup(func() { _ = rc.Close() })
	targets, st := readAll(t, FeedReader{}, rc, name)
	if st.BadLines != 0 {
		t.Errorf("%s: bad lines %v", name, st.Errors)
	}
	var ids []int64
	for _, tg := range targets {
		ids = append(ids, tg.ID)
	}
	return ids
}

func TestListFeeds(t *testing.T) {
	dir := feedDir(t)
	got, err := ListFeeds(dir)
	want := []string{filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ListFeeds(dir) = %v, %v; want %v", got, err, want)
	}
	for _, loc := range []string{want[0], "https://w3act.example/api/crawl/feed/npld", "HTTP://x.example/f"} {
		if got, err := ListFeeds(loc); err != nil || !slices.Equal(got, []string{loc}) {
			t.Errorf("ListFeeds(%s) = %v, %v", loc, got, err)
		}
	}
	if _, err := ListFeeds(filepath.Join(dir, "missing.jsonl")); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ListFeeds(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.jsonl files") {
		t.Errorf("empty dir: %v", err)
	}
}

func TestOpenFeedFileAndDir(t *testing.T) {
	ctx := context.Background()
	dir := feedDir(t)
	rc, name, err := OpenFeed(ctx, filepath.Join(dir, "b.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ids := readIDs(t, rc, name); !slices.Equal(ids, []int64{3, 4}) || name != filepath.Join(dir, "b.jsonl") {
		t.Errorf("file: %v from %s", ids, name)
	}
	rc, name, err = OpenFeed(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ids := readIDs(t, rc, name); !slices.Equal(ids, []int64{1, 2, 3, 4}) || name != dir {
		t.Errorf("dir: %v from %s", ids, name)
	}
	// A chain closed half way leaves no file open (goleak and the
	// second Close being harmless are the checks).
	rc, _, err = OpenFeed(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	for _, bad := range []string{filepath.Join(dir, "nope.jsonl"), t.TempDir()} {
		if _, _, err := OpenFeed(ctx, bad, nil); err == nil {
			t.Errorf("OpenFeed(%s) succeeded", bad)
		}
	}
}

func TestOpenFeedURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/feed":
			_, _ = io.WriteString(w, feedLine("7")+"\n"+feedLine("8")+"\n")
		case "/redirect":
			http.Redirect(w, r, "/feed", http.StatusFound)
		case "/gone":
			http.Error(w, "gone", http.StatusGone)
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.Error(w, "boom", http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	for _, path := range []string{"/feed", "/redirect"} {
		rc, name, err := OpenFeed(ctx, srv.URL+path, srv.Client())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if ids := readIDs(t, rc, name); !slices.Equal(ids, []int64{7, 8}) {
			t.Errorf("%s: %v", path, ids)
		}
	}
	for path, want := range map[string]string{"/gone": "HTTP 410 Gone", "/empty": "HTTP 204 No Content", "/x": "HTTP 500"} {
		if _, _, err := OpenFeed(ctx, srv.URL+path, srv.Client()); err == nil || !strings.Contains(err.Error(), want) ||
			!strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want %q", path, err, want)
		}
	}
	// Credentials in a feed URL are not repeated in names and errors.
	withPassword := strings.Replace(srv.URL, "http://", "http://user:pa55word@", 1)
	rc, name, err := OpenFeed(ctx, withPassword+"/feed", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	_ = rc.Close()
	_, _, err = OpenFeed(ctx, withPassword+"/gone", srv.Client())
	if strings.Contains(name, "pa55word") || err == nil || strings.Contains(err.Error(), "pa55word") {
		t.Errorf("password shown: name %q, err %v", name, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := OpenFeed(cancelled, srv.URL+"/feed", srv.Client()); err == nil {
		t.Error("cancelled context: no error")
	}
}
