package docsite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/net/html"
)

// Reachable returns, sorted, every URL a crawler starting at baseURL+"/"
// fetches when it follows the site's links and style sheet: the index
// (as baseURL+"/"), each linked page and style.css. It reads the files
// in dir rather than trusting the generator, so a link to a missing file
// is an error naming the page and the link. Links leaving baseURL are not
// followed.
func Reachable(dir, baseURL string) ([]string, error) {
	base, err := url.Parse(strings.TrimSuffix(baseURL, "/") + "/")
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("docsite reachable: base URL %q is not an absolute http(s) URL", baseURL)
	}
	seen := map[string]bool{base.String(): true}
	queue := []*url.URL{base}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		rel, err := fileFor(base, u)
		if err != nil {
			return nil, fmt.Errorf("docsite reachable: %w", err)
		}
		if !strings.HasSuffix(rel, ".html") {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				return nil, fmt.Errorf("docsite reachable: %s: %w", u, err)
			}
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("docsite reachable: %s: %w", u, err)
		}
		links, err := hrefs(body)
		if err != nil {
			return nil, fmt.Errorf("docsite reachable: parse %s: %w", rel, err)
		}
		for _, l := range links {
			t, err := u.Parse(l)
			if err != nil {
				return nil, fmt.Errorf("docsite reachable: %s links %q: %w", rel, l, err)
			}
			t.Fragment = ""
			if t.Host != base.Host || !strings.HasPrefix(t.Path, base.Path) || seen[t.String()] {
				continue
			}
			seen[t.String()] = true
			queue = append(queue, t)
		}
	}
	out := make([]string, 0, len(seen))
	for u := range seen {
		out = append(out, u)
	}
	slices.Sort(out)
	return out, nil
}

// fileFor maps a URL under base to the slash path of the file the
// FileServer sends for it.
func fileFor(base, u *url.URL) (string, error) {
	rel := strings.TrimPrefix(path.Clean("/"+u.Path), path.Clean(base.Path))
	rel = strings.TrimPrefix(rel, "/")
	switch {
	case u.RawQuery != "":
		return "", fmt.Errorf("%s: query strings are not part of a generated site", u)
	case rel == "" || strings.HasSuffix(u.Path, "/"):
		return path.Join(rel, IndexFile), nil
	}
	return rel, nil
}

// hrefs returns the href attributes of <a> and <link> elements.
func hrefs(body []byte) ([]string, error) {
	var out []string
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			if err := z.Err(); !errors.Is(err, io.EOF) {
				return nil, err
			}
			return out, nil
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if (string(name) != "a" && string(name) != "link") || !hasAttr {
				continue
			}
			for {
				k, v, more := z.TagAttr()
				if string(k) == "href" {
					out = append(out, string(v))
				}
				if !more {
					break
				}
			}
		}
	}
}
