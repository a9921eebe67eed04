package replay_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/trawler-crawl/trawler/pkg/replay"
)

// counts tallies what replaying every capture gave.
type counts struct {
	captures, urls int
	byKind         map[string]int // record kinds of the captures
	byVia          map[string]int // how the replayed response was put together
	sameURL        int            // revisits whose payload came from their own URL
	differentURL   int            // ... from another URL (cross-URL dedup)
	notModified    int            // captures that were 304 server-not-modified revisits
	ok             int
	failures       map[string]int // by reason
	examples       []string       // the first failures, for the log
}

func newCounts() *counts {
	return &counts{byKind: map[string]int{}, byVia: map[string]int{}, failures: map[string]int{}}
}

func (c *counts) fail(reason, format string, args ...any) {
	c.failures[reason]++
	if len(c.examples) < 6 {
		c.examples = append(c.examples, reason+": "+fmt.Sprintf(format, args...))
	}
}

func (c *counts) failed() int {
	n := 0
	for _, v := range c.failures {
		n += v
	}
	return n
}

func (c *counts) String() string {
	return fmt.Sprintf("%d captures of %d URLs; by record kind %s; replayed via %s; "+
		"revisits resolved at the same URL %d, at a different URL %d; 304 captures %d; "+
		"%d replayed as captured, %d failed %s",
		c.captures, c.urls, sorted(c.byKind), sorted(c.byVia), c.sameURL, c.differentURL, c.notModified,
		c.ok, c.failed(), sorted(c.failures))
}

func sorted(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// replayAll replays every capture (record) at its URL and 14-digit
// timestamp through r and checks it against the original the capture's
// payload is in: the status must be the original's, and for a 2xx the body
// must be the original's payload byte for byte. Captures of one URL in
// one second (a 14-digit lookup cannot tell them apart) pass when the
// replay matches any of them.
func replayAll(t *testing.T, r *replay.Resolver, recs []*record, truths map[*record]truth) *counts {
	t.Helper()
	c := newCounts()
	groups := map[string][]*record{}
	var keys []string
	urls := map[string]bool{}
	for _, rec := range recs {
		k := rec.uri + " " + rec.ts
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], rec)
		urls[rec.uri] = true
		c.captures++
		c.byKind[rec.kind()]++
		if rec.kind() == "revisit (server-not-modified)" {
			c.notModified++
		}
	}
	c.urls = len(urls)
	sort.Strings(keys)
	for _, k := range keys {
		group := groups[k]
		first := group[0]
		got, err := replayOne(r, first.uri, first.ts)
		if err != nil {
			for range group {
				c.fail(errorReason(err), "%s: %v", first, err)
			}
			continue
		}
		for _, rec := range group {
			c.judge(rec, truths[rec], got, group)
		}
	}
	return c
}

// replayed is one replay's outcome.
type replayed struct {
	resp *replay.Response
	hash [sha256.Size]byte
	n    int
}

func replayOne(r *replay.Resolver, url, ts string) (replayed, error) {
	resp, err := r.Resolve(context.Background(), url, ts)
	if err != nil {
		return replayed{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	if err != nil {
		return replayed{}, fmt.Errorf("reading the body: %w", err)
	}
	out := replayed{resp: resp, n: int(n)}
	copy(out.hash[:], h.Sum(nil))
	return out, nil
}

// judge counts one capture's replay.
func (c *counts) judge(rec *record, tr truth, got replayed, group []*record) {
	resp := got.resp
	switch {
	case tr.err != nil:
		c.fail("original not in the WARCs", "%v", tr.err)
		return
	case resp.Capture.Timestamp != rec.ts || resp.Capture.Original != rec.uri:
		// The index has no line for the capture, or it did not load
		// (resp.Skipped says why): a neighbour was replayed instead.
		c.fail("another capture replayed", "%s: replayed the capture of %s at %s; skipped %v",
			rec, resp.Capture.Original, resp.Capture.Timestamp, resp.Skipped)
		return
	case !matches(got, tr.orig):
		// Another capture of the same second may be the one replayed.
		for _, other := range group {
			if other != rec && matches(got, other) {
				c.count(rec, resp)
				return
			}
		}
		reason := "status differs"
		if resp.StatusCode == tr.orig.status {
			reason = "body differs"
		}
		if resp.StatusCode == 304 && rec.kind() == "revisit (server-not-modified)" {
			reason = "304 capture replayed as 304"
		}
		c.fail(reason, "%s: replayed %d (%d bytes, via %s, capture %s %s) from %s at %s; its original %s has %d (%d bytes)",
			rec, resp.StatusCode, got.n, resp.Via, resp.Capture.Timestamp, resp.Capture.Mimetype,
			resp.Payload.TargetURI, resp.Payload.Date, tr.orig, tr.orig.status, tr.orig.payloadLen)
		return
	}
	c.count(rec, resp)
}

// matches: the status is the original's, and so is a 2xx body.
func matches(got replayed, orig *record) bool {
	if got.resp.StatusCode != orig.status {
		return false
	}
	return orig.status/100 != 2 || (got.hash == orig.payloadHash && got.n == orig.payloadLen)
}

func (c *counts) count(rec *record, resp *replay.Response) {
	c.ok++
	c.byVia[resp.Via.String()]++
	if resp.Via == replay.ViaRefersTo || resp.Via == replay.ViaOrigFields {
		if resp.Payload.TargetURI == rec.uri {
			c.sameURL++
		} else {
			c.differentURL++
		}
	}
}

// errorReason names a replay error by the sentinel it wraps.
func errorReason(err error) string {
	for _, s := range []struct {
		err  error
		name string
	}{
		{replay.ErrMissingOriginal, "missing original"},
		{replay.ErrNotFound, "not in the index"},
		{replay.ErrUnknownFile, "unknown WARC file"},
		{replay.ErrNotRecord, "offset not at a record"},
		{replay.ErrTruncated, "truncated record"},
		{replay.ErrSelfRedirect, "self-redirect"},
	} {
		if errors.Is(err, s.err) {
			return "error: " + s.name
		}
	}
	return "error: other"
}
