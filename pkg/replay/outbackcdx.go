package replay

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// DefaultOutbackCDXTimeout bounds one query when OutbackCDXOptions.Client
// is nil.
const DefaultOutbackCDXTimeout = 30 * time.Second

// maxErrorBody bounds the part of an error answer quoted in the error.
const maxErrorBody = 512

// OutbackCDXOptions configures NewOutbackCDX.
type OutbackCDXOptions struct {
	// URL is the OutbackCDX base URL, e.g. http://outbackcdx:8080.
	URL string
	// Collection is the index queried, <URL>/<Collection>.
	Collection string
	// Client sends the queries; nil means a client with
	// DefaultOutbackCDXTimeout.
	Client *http.Client
}

// OutbackCDX queries an OutbackCDX server (or any server of its API, such
// as Trawler's own CDX listener) over HTTP: pywb's usual deployment, its
// "cdx+http://…" index source (indexsource.py RemoteIndexSource).
type OutbackCDX struct {
	endpoint string
	client   *http.Client
}

// NewOutbackCDX checks the options and returns the client.
func NewOutbackCDX(o OutbackCDXOptions) (*OutbackCDX, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("outbackcdx: URL %q: want http(s)://host[:port][/path]", o.URL)
	}
	if o.Collection == "" || strings.ContainsAny(o.Collection, "/?#") {
		return nil, fmt.Errorf("outbackcdx: collection %q: want a name", o.Collection)
	}
	c := o.Client
	if c == nil {
		c = &http.Client{Timeout: DefaultOutbackCDXTimeout}
	}
	return &OutbackCDX{endpoint: strings.TrimSuffix(o.URL, "/") + "/" + url.PathEscape(o.Collection), client: c}, nil
}

// Query asks GET <URL>/<collection>?url=…&matchType=exact&sort=closest&
// closest=…&filter=…&limit=… for CDX11 text (OutbackCDX's default output)
// and parses every line. An answer other than 200, or a line that does
// not parse, is an error: replaying from half an answer could pick the
// wrong capture.
func (o *OutbackCDX) Query(ctx context.Context, q Query) ([]cdx.Line, error) {
	target := o.endpoint + "?" + q.values().Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("outbackcdx: %w", err)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("outbackcdx: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, fmt.Errorf("outbackcdx: GET %s: %s: %s", target, resp.Status, strings.TrimSpace(string(body)))
	}
	var lines []cdx.Line
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		l, err := cdx.ParseCDX11(text)
		if err != nil {
			// OutbackCDX ends a scan that failed half-way with a
			// "warning: output may be incomplete" line.
			return nil, fmt.Errorf("outbackcdx: GET %s: %w", target, err)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("outbackcdx: GET %s: %w", target, err)
	}
	return lines, nil
}
