package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/trawler-crawl/trawler/pkg/extract"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// walkLimit bounds the URL list of a directory site: a benchmark is a
// minute's crawl, not an archive's.
const walkLimit = 100_000

// walk returns, sorted, the URLs a crawl from seed reaches on seed's host:
// robots.txt, then every link and embed the crawler's own extractors find
// in HTML and CSS, redirects followed as new URLs, whatever their status.
// Like the frontier, it knows a URL by its CDX key, so /lib and the /lib/
// it redirects to are one URL, fetched once.
// It gives the baseline of a directory of real pages the list the crawl
// fetches, found over HTTP before either is measured.
func walk(ctx context.Context, seed string) ([]string, error) {
	base, err := url.Parse(seed)
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("bench walk: seed %q is not an absolute URL", seed)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer tr.CloseIdleConnections()
	robots := base.ResolveReference(&url.URL{Path: "/robots.txt"}).String()
	var out []string
	seen := map[string]bool{}
	add := func(u string) bool { // whether u is new
		key, err := surt.CDXKey(u)
		if err != nil || seen[key] {
			return false
		}
		seen[key] = true
		out = append(out, u)
		return true
	}
	add(robots)
	add(seed)
	queue := []string{seed}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		links, err := linksOf(ctx, client, u)
		if err != nil {
			return nil, err
		}
		for _, l := range links {
			t, err := url.Parse(l)
			if err != nil || t.Host != base.Host || t.Scheme != base.Scheme {
				continue
			}
			t.Fragment = ""
			if u := t.String(); add(u) {
				if len(out) > walkLimit {
					return nil, fmt.Errorf("bench walk: %s reaches more than %d URLs", seed, walkLimit)
				}
				queue = append(queue, u)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// linksOf fetches u and returns its outlinks: a redirect's target, or the
// links of an HTML page or a style sheet.
func linksOf(ctx context.Context, client *http.Client, u string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("bench walk: %s: %w", u, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("bench walk: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("bench walk: read %s: %w", u, err)
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
		t, err := resp.Request.URL.Parse(loc)
		if err != nil {
			return nil, nil
		}
		return []string{t.String()}, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil
	}
	var links []extract.Link
	switch mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt {
	case "text/html":
		links, _, err = extract.HTML(bytes.NewReader(body), u, extract.HTMLOptions{})
	case "text/css":
		links, err = extract.CSS(bytes.NewReader(body), u, extract.Options{})
	}
	if err != nil {
		return nil, fmt.Errorf("bench walk: extract %s: %w", u, err)
	}
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = l.URL
	}
	return out, nil
}
