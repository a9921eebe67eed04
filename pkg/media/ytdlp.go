// Package media runs yt-dlp for the renderer, as Heritrix's
// ExtractorYoutubeDL and brozzler run youtube-dl: through the page's
// recording proxy, so every request it makes (the page, manifests,
// segments, progressive files) is an ordinary capture under the crawl's
// scope and address guard, and its JSON description of the page's media
// becomes a "youtube-dl:<page>" metadata record.
package media

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// ContentType is the media type of the metadata record, as brozzler and
// Heritrix write it.
const ContentType = "application/vnd.youtube-dl_formats+json;charset=utf-8"

// ErrNotInstalled is returned by Find when no yt-dlp (or youtube-dl) is
// on the PATH.
var ErrNotInstalled = errors.New("yt-dlp is not installed")

// Find returns the yt-dlp executable: path when given, else yt-dlp or
// youtube-dl from the PATH.
func Find(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrNotInstalled, err)
		}
		return p, nil
	}
	for _, name := range []string{"yt-dlp", "youtube-dl"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNotInstalled
}

// Request is one page's run.
type Request struct {
	// PageURL is the page whose media to fetch.
	PageURL string
	// Proxy is the page's recording proxy ("http://127.0.0.1:port"); its
	// certificate authority is the crawl's own, so certificates are not
	// checked (the proxy checks the origin's).
	Proxy string
	// Timeout bounds the run; the process group is killed after it.
	Timeout time.Duration
	// MaxBytes skips any file larger than this (yt-dlp --max-filesize).
	MaxBytes int64
	// MaxItems bounds how many videos of one page are fetched.
	MaxItems int
}

// Result is what yt-dlp described and fetched.
type Result struct {
	// Info is the JSON description: one info object for a page with one
	// video, else a playlist object with the videos as entries.
	Info []byte
	// Items is how many videos it described.
	Items int
	// Stderr is the tail of what yt-dlp said (for logs).
	Stderr string
}

// maxInfoBytes bounds the JSON read from yt-dlp: descriptions of pages
// with many formats run to a few hundred KiB.
const maxInfoBytes = 8 << 20

// Run runs exe on r.PageURL through r.Proxy. The downloaded files are
// thrown away (the proxy recorded them). An error with a Result holding
// Items > 0 means yt-dlp failed part way: what it described is kept.
func Run(ctx context.Context, exe string, r Request) (Result, error) {
	dir, err := os.MkdirTemp("", "trawler-ytdlp-")
	if err != nil {
		return Result{}, fmt.Errorf("yt-dlp work directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	args := []string{"--ignore-config", "--no-cache-dir", "--no-check-certificates", "--proxy", r.Proxy,
		"--dump-json", "--no-simulate", "--no-progress", "--no-color", "--no-mtime", "--no-part",
		"--socket-timeout", "30", "-P", dir, "-o", "%(id)s.%(format_id)s.%(ext)s"}
	if r.MaxBytes > 0 {
		args = append(args, "--max-filesize", strconv.FormatInt(r.MaxBytes, 10))
	}
	if r.MaxItems > 0 {
		args = append(args, "--playlist-items", "1:"+strconv.Itoa(r.MaxItems))
	}
	cmd := exec.CommandContext(ctx, exe, append(args, "--", r.PageURL)...)
	cmd.Dir = dir
	// HOME in the work directory: nothing of a run outlives it.
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CACHE_HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	stderr := &tail{max: 4 << 10}
	cmd.Stdout = &limited{w: &stdout, n: maxInfoBytes}
	cmd.Stderr = stderr
	runErr := cmd.Run()
	res, parseErr := parse(stdout.Bytes())
	res.Stderr = stderr.String()
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("yt-dlp %s: stopped after %s: %w", r.PageURL, r.Timeout, ctx.Err())
	case runErr != nil:
		return res, fmt.Errorf("yt-dlp %s: %w: %s", r.PageURL, runErr, res.Stderr)
	case parseErr != nil:
		return res, fmt.Errorf("yt-dlp %s: %w", r.PageURL, parseErr)
	}
	return res, nil
}

// parse reads yt-dlp's output, one JSON object a line.
func parse(out []byte) (Result, error) {
	var items []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), maxInfoBytes)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if !json.Valid(line) || line[0] != '{' {
			return Result{}, fmt.Errorf("output line %d is not a JSON object", n)
		}
		items = append(items, append(json.RawMessage(nil), line...))
	}
	if err := sc.Err(); err != nil {
		return Result{}, fmt.Errorf("read output: %w", err)
	}
	switch len(items) {
	case 0:
		return Result{}, nil
	case 1:
		return Result{Info: items[0], Items: 1}, nil
	}
	b, err := json.Marshal(map[string]any{"_type": "playlist", "entries": items})
	if err != nil {
		return Result{}, fmt.Errorf("encode playlist: %w", err)
	}
	return Result{Info: b, Items: len(items)}, nil
}

// limited passes on at most n bytes and drops the rest, so a runaway
// process cannot fill memory.
type limited struct {
	w io.Writer
	n int64
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return len(p), nil
	}
	q := p
	if int64(len(q)) > l.n {
		q = q[:l.n]
	}
	n, err := l.w.Write(q)
	l.n -= int64(n)
	if err != nil {
		return n, err
	}
	return len(p), nil
}

// tail keeps the last max bytes written.
type tail struct {
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string { return string(bytes.TrimSpace(t.b)) }
