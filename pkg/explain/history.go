package explain

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// History reads a URL's captures from a CDX index, newest first.
type History interface {
	Captures(ctx context.Context, rawURL string, limit int) ([]Capture, error)
}

// Capture is one CDX line of the URL.
type Capture struct {
	Timestamp string `json:"timestamp"`
	URL       string `json:"url"`
	MimeType  string `json:"mime"`
	Status    string `json:"status"`
	Digest    string `json:"digest"`
	Length    int64  `json:"length"`
	Offset    int64  `json:"offset"`
	Filename  string `json:"filename"`
}

// cdxFields is the fl= list the index is asked for, in Capture's order.
const cdxFields = "timestamp,original,mimetype,statuscode,digest,length,offset,filename"

// CDXAPI queries an index through its OutbackCDX-compatible API: Handler
// in-process (standalone and the cdxwriter hold the index), or URL over
// HTTP (a worker asking the cdxwriter's or an OutbackCDX's API).
type CDXAPI struct {
	// Handler serves the API in-process; when set, URL is not used.
	Handler http.Handler
	// URL is the API's base, e.g. http://cdxwriter:8081.
	URL string
	// Collection is the crawl's collection (the crawl name, fc or dc).
	Collection string
	// Client for URL; nil: http.DefaultClient.
	Client *http.Client
}

// Captures asks the API for the URL's exact captures, newest first.
func (a CDXAPI) Captures(ctx context.Context, rawURL string, limit int) ([]Capture, error) {
	q := url.Values{"url": {rawURL}, "matchType": {"exact"}, "sort": {"reverse"}, "fl": {cdxFields},
		"limit": {strconv.Itoa(limit)}}
	target := strings.TrimSuffix(a.URL, "/") + "/" + url.PathEscape(a.Collection) + "?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, fmt.Errorf("cdx query: %w", err)
	}
	var status int
	var body []byte
	if a.Handler != nil {
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		a.Handler.ServeHTTP(rec, req)
		status, body = rec.status, rec.body.Bytes()
	} else {
		cl := a.Client
		if cl == nil {
			cl = http.DefaultClient
		}
		resp, err := cl.Do(req)
		if err != nil {
			return nil, fmt.Errorf("cdx query: %w", err)
		}
		defer resp.Body.Close()
		if body, err = io.ReadAll(io.LimitReader(resp.Body, 1<<20)); err != nil {
			return nil, fmt.Errorf("cdx query: %w", err)
		}
		status = resp.StatusCode
	}
	switch {
	case status == http.StatusNotFound:
		return nil, nil // the collection has no captures yet
	case status != http.StatusOK:
		return nil, fmt.Errorf("cdx query: status %d: %s", status, bytes.TrimSpace(body))
	}
	return parseCDX(body)
}

func parseCDX(body []byte) ([]Capture, error) {
	var out []Capture
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 8 {
			continue
		}
		dash := func(s string) string {
			if s == "-" {
				return ""
			}
			return s
		}
		length, _ := strconv.ParseInt(f[5], 10, 64)
		offset, _ := strconv.ParseInt(f[6], 10, 64)
		out = append(out, Capture{Timestamp: f[0], URL: f[1], MimeType: dash(f[2]), Status: dash(f[3]), Digest: dash(f[4]),
			Length: length, Offset: offset, Filename: f[7]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cdx answer: %w", err)
	}
	return out, nil
}

// recorder is the least of a ResponseWriter an in-process query needs.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	if r.body.Len() > 1<<20 {
		return len(b), nil // a capture list longer than this is cut
	}
	return r.body.Write(b)
}
