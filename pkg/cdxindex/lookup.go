package cdxindex

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/trawler-crawl/trawler/pkg/cdx"
)

// ErrNoCollection is returned by Query for a collection that was never
// written to; the HTTP API answers the same case with a 404.
var ErrNoCollection = errors.New("cdxindex: no such collection")

// Query runs a CDX query in process: values are the parameters of
// GET /<collection> (url or urlkey, matchType, sort, closest, from, to,
// filter, collapse, omitSelfRedirects, limit), parsed and answered exactly
// as the HTTP API answers them, so that a caller in the same process (a
// replay resolver) and a client of the API get the same captures in the
// same order. fl and output are ignored: every line is whole. A bad
// parameter is an error with the API's 400 message.
func (ix *Index) Query(ctx context.Context, collection string, values url.Values) ([]cdx.Line, error) {
	if _, ok := ix.Count(collection); !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoCollection, collection)
	}
	q, err := parseQuery(params(values))
	if err == nil {
		err = q.prepare()
	}
	if err != nil {
		return nil, fmt.Errorf("cdx query %s: %w", collection, err)
	}
	if err := ix.acquire(); err != nil {
		return nil, err
	}
	defer ix.closeMu.RUnlock()
	it, err := ix.execute(collection, q, 0)
	if err != nil {
		return nil, fmt.Errorf("cdx query %s: %w", collection, err)
	}
	defer it.close()
	var out []cdx.Line
	for n := int64(0); n < q.limit; n++ {
		// A query without a limit may scan a whole collection: honour
		// cancellation now and then, as Each does.
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c, ok := it.next()
		if !ok {
			break
		}
		out = append(out, c.line())
	}
	if err := it.err(); err != nil {
		return nil, fmt.Errorf("cdx query %s: %w", collection, err)
	}
	return out, nil
}
