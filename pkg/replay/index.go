package replay

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"

	"github.com/trawler-crawl/trawler/pkg/cdx"
	"github.com/trawler-crawl/trawler/pkg/cdxindex"
)

// Index answers the CDX queries replay makes. Implementations are safe
// for concurrent use.
type Index interface {
	// Query returns the captures of q.URL (an exact match) that pass
	// every filter, closest to q.Closest first, at most q.Limit of them.
	// No capture is an empty result, not an error.
	Query(ctx context.Context, q Query) ([]cdx.Line, error)
}

// Query is one exact-URL lookup, sorted closest to a time: what pywb's
// warcserver asks its index for (rewriterapp.py sends url, closest and
// matchType=exact; RemoteIndexSource adds sort=closest and limit).
type Query struct {
	URL string
	// Closest is a timestamp of up to 14 digits.
	Closest string
	Filters []Filter
	// Limit bounds the captures returned; 0 means no bound.
	Limit int
	// Host asks for the captures of every URL on q.URL's host and port
	// (matchType=host) instead of q.URL's own: whether the archive has
	// anything from a host at all.
	Host bool
}

// Filter keeps the captures whose Field equals Value (or, with Invert,
// differs from it).
//
// pywb's filters ("!mime:warc/revisit", "digest:D" in resolvingloader.py
// load_cdx_for_dupe) are substring matches (cdxops.py CDXFilter.contains);
// OutbackCDX's are whole-value regular expressions. For the two filters
// replay uses the three agree: the revisit MIME type is the one value that
// contains "warc/revisit", and payload digests are all 32 base32
// characters, so containing one is being it.
type Filter struct {
	Field  string
	Value  string
	Invert bool
}

// outbackSpec is the filter in OutbackCDX's syntax: "[!]field:regexp",
// the value quoted so that it matches itself only.
func (f Filter) outbackSpec() string {
	s := f.Field + ":" + regexp.QuoteMeta(f.Value)
	if f.Invert {
		s = "!" + s
	}
	return s
}

// values are the OutbackCDX query parameters of q: the same for the
// embedded index and a remote OutbackCDX.
func (q Query) values() url.Values {
	v := url.Values{"url": {q.URL}, "matchType": {"exact"}}
	if q.Host {
		v.Set("matchType", "host")
	}
	if q.Closest != "" {
		v.Set("sort", "closest")
		v.Set("closest", q.Closest)
	}
	for _, f := range q.Filters {
		v.Add("filter", f.outbackSpec())
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// CDXIndex is the crawl's embedded index (pkg/cdxindex), queried in
// process.
type CDXIndex struct {
	ix         *cdxindex.Index
	collection string
}

// NewCDXIndex queries collection of ix (the crawl name, e.g. "fc").
func NewCDXIndex(ix *cdxindex.Index, collection string) *CDXIndex {
	return &CDXIndex{ix: ix, collection: collection}
}

// Query runs q on the collection.
func (c *CDXIndex) Query(ctx context.Context, q Query) ([]cdx.Line, error) {
	lines, err := c.ix.Query(ctx, c.collection, q.values())
	if err != nil {
		return nil, fmt.Errorf("embedded index: %w", err)
	}
	return lines, nil
}
