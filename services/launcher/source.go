package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// isURL reports whether a feed location is an HTTP(S) URL rather than a path.
func isURL(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// ListFeeds expands a feed location into the feeds it names: a URL or a file
// names itself; a directory names its *.jsonl files in lexical order. Read a
// directory through ListFeeds rather than OpenFeed, so that bad lines are
// reported against the file that holds them.
func ListFeeds(location string) ([]string, error) {
	if isURL(location) {
		return []string{location}, nil
	}
	info, err := os.Stat(location)
	if err != nil {
		return nil, fmt.Errorf("feed %s: %w", location, err)
	}
	if !info.IsDir() {
		return []string{location}, nil
	}
	entries, err := os.ReadDir(location) // sorted by name
	if err != nil {
		return nil, fmt.Errorf("feed directory %s: %w", location, err)
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		files = append(files, filepath.Join(location, e.Name()))
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("feed directory %s: no *.jsonl files", location)
	}
	return files, nil
}

// OpenFeed opens a feed for reading and returns it with the name to report
// it by. location is an HTTP(S) URL (fetched with client, or a client
// without timeout when nil, bounded by ctx; any status but 200 is an error),
// a file, or a directory, whose *.jsonl files are read one after the other
// in lexical order as one stream. Line numbers of a directory stream count
// across its files; ListFeeds avoids that.
func OpenFeed(ctx context.Context, location string, client *http.Client) (io.ReadCloser, string, error) {
	if isURL(location) {
		return openURL(ctx, location, client)
	}
	info, err := os.Stat(location)
	if err != nil {
		return nil, "", fmt.Errorf("open feed %s: %w", location, err)
	}
	if !info.IsDir() {
		f, err := os.Open(location)
		if err != nil {
			return nil, "", fmt.Errorf("open feed %s: %w", location, err)
		}
		return f, location, nil
	}
	files, err := ListFeeds(location)
	if err != nil {
		return nil, "", fmt.Errorf("open feed: %w", err)
	}
	return &fileChain{paths: files}, location, nil
}

func openURL(ctx context.Context, location string, client *http.Client) (io.ReadCloser, string, error) {
	u, err := url.Parse(location)
	if err != nil {
		return nil, "", fmt.Errorf("feed URL: %w", err)
	}
	name := u.Redacted() // never log a password from the URL
	if client == nil {
		client = &http.Client{}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", fmt.Errorf("fetch feed %s: %w", name, err)
	}
	req.Header.Set("Accept", "application/x-ndjson, application/jsonl, application/json;q=0.9, */*;q=0.1")
	req.Header.Set("User-Agent", "trawler-launcher")
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("fetch feed %s: %w", name, err)
	}
	if resp.StatusCode != http.StatusOK {
		// Drain a little so the connection can be reused; the body of an
		// error page is not worth more.
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
		_ = resp.Body.Close()
		return nil, "", fmt.Errorf("fetch feed %s: HTTP %s", name, resp.Status)
	}
	return resp.Body, name, nil
}

// fileChain reads files one after another, opening each only when it is
// reached, and ends a file that lacks a final newline with one so its last
// line does not run into the next file's first.
type fileChain struct {
	paths   []string
	cur     *os.File
	last    byte // last byte read from cur
	pending bool // a separating newline is owed
}

func (c *fileChain) Read(p []byte) (int, error) {
	for {
		if len(p) == 0 {
			return 0, nil
		}
		if c.pending {
			c.pending = false
			p[0] = '\n'
			return 1, nil
		}
		if c.cur == nil {
			if len(c.paths) == 0 {
				return 0, io.EOF
			}
			f, err := os.Open(c.paths[0])
			if err != nil {
				return 0, fmt.Errorf("open feed %s: %w", c.paths[0], err)
			}
			c.cur, c.last, c.paths = f, '\n', c.paths[1:]
		}
		n, err := c.cur.Read(p)
		if n > 0 {
			c.last = p[n-1]
			return n, nil
		}
		if errors.Is(err, io.EOF) {
			c.pending = c.last != '\n'
			err = c.cur.Close()
			c.cur = nil
			if err != nil {
				return 0, fmt.Errorf("close feed: %w", err)
			}
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("read feed %s: %w", c.cur.Name(), err)
		}
	}
}

// Close closes the file being read, if any.
func (c *fileChain) Close() error {
	c.paths = nil
	if c.cur == nil {
		return nil
	}
	err := c.cur.Close()
	c.cur = nil
	return err
}
