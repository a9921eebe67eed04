package media

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, out string
		items     int
		wantErr   string
	}{
		{"nothing", "", 0, ""},
		{"one video", `{"id":"a","formats":[]}` + "\n", 1, ""},
		{"two videos make a playlist", "{\"id\":\"a\"}\n\n{\"id\":\"b\"}\n", 2, ""},
		{"a line that is not JSON", "{\"id\":\"a\"}\nWARNING: something\n", 0, "output line 2 is not a JSON object"},
		{"a JSON array", "[1,2]\n", 0, "output line 1 is not a JSON object"},
		{"truncated JSON", `{"id":"a"`, 0, "output line 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := parse([]byte(c.out))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || res.Items != c.items {
				t.Fatalf("items %d err %v, want %d", res.Items, err, c.items)
			}
			if c.items == 2 && !strings.Contains(string(res.Info), `"_type":"playlist"`) {
				t.Errorf("two videos: %s", res.Info)
			}
		})
	}
}

func TestFind(t *testing.T) {
	if _, err := Find(filepath.Join(t.TempDir(), "nothing-here")); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Find of a missing file: %v, want ErrNotInstalled", err)
	}
}

func TestLimitedAndTail(t *testing.T) {
	var sb strings.Builder
	l := &limited{w: &sb, n: 5}
	if n, err := l.Write([]byte("abcdefgh")); n != 8 || err != nil || sb.String() != "abcde" {
		t.Fatalf("limited: %d %v %q", n, err, sb.String())
	}
	tl := &tail{max: 4}
	_, _ = tl.Write([]byte("123456"))
	_, _ = tl.Write([]byte("78"))
	if tl.String() != "5678" {
		t.Fatalf("tail %q", tl.String())
	}
}

// A run that cannot finish (the proxy accepts and never answers) is
// stopped at its timeout, with its whole process group.
func TestRunTimeout(t *testing.T) {
	exe, err := Find("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: no yt-dlp (scripts/install-test-deps.sh installs it)")
		}
		t.Skip("no yt-dlp")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hang := make(chan struct{})
	srv := &http.Server{ReadHeaderTimeout: time.Minute, Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hang })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { close(hang); _ = srv.Close() })
	res, err := Run(context.Background(), exe, Request{PageURL: "http://media.invalid/page.html", Proxy: "http://" + ln.Addr().String(),
		Timeout: 3 * time.Second})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "stopped after 3s") {
		t.Fatalf("err %v, want a timeout", err)
	}
	if res.Items != 0 {
		t.Fatalf("items %d", res.Items)
	}
	if out, _ := exec.Command("pgrep", "-f", "media.invalid").Output(); len(out) > 0 {
		t.Fatalf("yt-dlp still running after its timeout: pids %s", out)
	}
}
