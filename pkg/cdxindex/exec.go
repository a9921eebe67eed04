package cdxindex

import (
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/trawler-crawl/trawler/pkg/surt"
)

// captureIter yields captures in query order. next returns false at the end
// or on error; err tells which.
type captureIter interface {
	next() (*capture, bool)
	err() error
	close()
}

// scan iterates the captures with keys in [lower, upper), forward or
// backward, until stop says so or cap captures have been read (OutbackCDX's
// scan cap, 0 for none).
type scan struct {
	it      *pebble.Iterator
	cpLen   int
	reverse bool
	started bool
	stop    func(*capture) bool
	cap     int64
	n       int64
	e       error
	cur     capture
}

func (ix *Index) newScan(cp, lower, upper []byte, reverse bool, stop func(*capture) bool, scanCap int64) (*scan, error) {
	it, err := ix.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, fmt.Errorf("open iterator: %w", err)
	}
	return &scan{it: it, cpLen: len(cp), reverse: reverse, stop: stop, cap: scanCap}, nil
}

func (s *scan) next() (*capture, bool) {
	if s.e != nil || (s.cap > 0 && s.n >= s.cap) {
		return nil, false
	}
	var ok bool
	switch {
	case !s.started && s.reverse:
		ok = s.it.Last()
	case !s.started:
		ok = s.it.First()
	case s.reverse:
		ok = s.it.Prev()
	default:
		ok = s.it.Next()
	}
	s.started = true
	if !ok {
		s.e = s.it.Error()
		return nil, false
	}
	s.cur = capture{}
	if err := decodeKey(s.it.Key(), s.cpLen, &s.cur); err != nil {
		s.e = err
		return nil, false
	}
	v, err := s.it.ValueAndErr()
	if err == nil {
		err = decodeValue(v, &s.cur)
	}
	if err != nil {
		s.e = fmt.Errorf("capture %s %d: %w", s.cur.urlkey, s.cur.timestamp, err)
		return nil, false
	}
	if s.stop != nil && s.stop(&s.cur) {
		return nil, false
	}
	s.n++
	return &s.cur, true
}

func (s *scan) err() error { return s.e }
func (s *scan) close()     { _ = s.it.Close() }

// domainScan is a domain match: the scan of the host and its subdomains,
// then the scan of the host's other ports, opened (with what is left of
// the scan cap) when the first ends.
type domainScan struct {
	names   *scan
	portsOf func(read int64) (*scan, error)
	ports   *scan
	e       error
}

func (d *domainScan) next() (*capture, bool) {
	if d.ports == nil {
		if c, ok := d.names.next(); ok || d.names.err() != nil {
			return c, ok
		}
		p, err := d.portsOf(d.names.n)
		if err != nil || p == nil {
			d.e = err
			return nil, false
		}
		d.ports = p
	}
	return d.ports.next()
}

func (d *domainScan) err() error {
	switch {
	case d.e != nil:
		return d.e
	case d.names.err() != nil:
		return d.names.err()
	case d.ports != nil:
		return d.ports.err()
	}
	return nil
}

func (d *domainScan) close() {
	d.names.close()
	if d.ports != nil {
		d.ports.close()
	}
}

// filtered passes on the captures keep accepts.
type filtered struct {
	captureIter
	keep func(*capture) bool
}

func (f filtered) next() (*capture, bool) {
	for {
		c, ok := f.captureIter.next()
		if !ok || f.keep(c) {
			return c, ok
		}
	}
}

// execute runs a prepared query on collection.
func (ix *Index) execute(collection string, q *query, scanCap int64) (captureIter, error) {
	cp := collectionPrefix(collection)
	it, err := ix.rawIter(cp, q, scanCap)
	if err != nil {
		return nil, err
	}
	if keep := q.predicate(); keep != nil {
		it = filtered{captureIter: it, keep: keep}
	}
	if q.collapseLast != nil {
		it = &collapseLast{inner: it, spec: q.collapseLast}
	}
	return it, nil
}

// rawIter picks the key range and direction for the query's match type and
// sort order, as OutbackCDX's Index.execute does.
func (ix *Index) rawIter(cp []byte, q *query, scanCap int64) (captureIter, error) {
	withCP := func(s string) []byte { return append(append([]byte(nil), cp...), s...) }
	switch q.match {
	case matchExact:
		start, end := urlBounds(cp, q.urlkey)
		switch q.sort {
		case sortClosest:
			return ix.closestIter(cp, q, scanCap)
		case sortReverse:
			from := q.from
			return ix.newScan(cp, start, urlTimeKey(cp, q.urlkey, q.to+1), true,
				func(c *capture) bool { return c.timestamp < from }, scanCap)
		default:
			to := q.to
			return ix.newScan(cp, urlTimeKey(cp, q.urlkey, q.from), end, false,
				func(c *capture) bool { return c.timestamp > to }, scanCap)
		}
	case matchPrefix:
		return ix.newScan(cp, withCP(q.urlkey), prefixEnd(withCP(q.urlkey)), false, nil, scanCap)
	case matchHost:
		p := withCP(hostFromSurt(q.urlkey) + ")/")
		return ix.newScan(cp, p, prefixEnd(p), false, nil, scanCap)
	case matchDomain:
		// OutbackCDX scans [host, host+"-"): the host and its subdomains
		// (",": 0x2C < "-"), but not the host on another port, whose key
		// "org,example:8080)/" sorts after "-". Trawler scans that range too
		// ([host+":", host+";")), right after the first, so key order and
		// the scan cap hold across both; subdomains with ports are in the
		// first range already.
		host := hostFromSurt(q.urlkey)
		names, err := ix.newScan(cp, withCP(host), withCP(host+"-"), false, nil, scanCap)
		if err != nil {
			return nil, err
		}
		return &domainScan{names: names, portsOf: func(n int64) (*scan, error) {
			if scanCap > 0 && n >= scanCap {
				return nil, nil
			}
			return ix.newScan(cp, withCP(host+":"), withCP(host+";"), false, nil, max(scanCap-n, 0))
		}}, nil
	default: // matchRange
		return ix.newScan(cp, withCP(q.urlkey), withCP("~"), false, nil, scanCap)
	}
}

// urlBounds are the first and the after-last key of urlkey's captures.
func urlBounds(cp []byte, urlkey string) (start, end []byte) {
	start = append(append(append([]byte(nil), cp...), urlkey...), 0)
	end = append(append([]byte(nil), start[:len(start)-1]...), 1)
	return start, end
}

// prefixEnd is the smallest key after every key starting with p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}

// hostFromSurt cuts "org,example)/foo" to "org,example".
func hostFromSurt(key string) string {
	if i := strings.Index(key, ")/"); i >= 0 {
		return key[:i]
	}
	return key
}

// predicate combines filters, collapse-to-first and omitSelfRedirects in
// OutbackCDX's order: collapsing sees the captures the filters passed, even
// those the self-redirect check drops afterwards.
func (q *query) predicate() func(*capture) bool {
	if len(q.filters) == 0 && q.collapseFirst == nil && !q.omitSelfRedirect {
		return nil
	}
	var last string
	var seen bool
	return func(c *capture) bool {
		for i := range q.filters {
			if !q.filters[i].match(c) {
				return false
			}
		}
		if q.collapseFirst != nil {
			k := q.collapseFirst.key(c)
			if seen && k == last {
				return false
			}
			last, seen = k, true
		}
		return !q.omitSelfRedirect || !isSelfRedirect(c)
	}
}

// isSelfRedirect is a 3xx whose Location canonicalises to its own URL key.
func isSelfRedirect(c *capture) bool {
	if c.status < 300 || c.status >= 400 {
		return false
	}
	if c.redirect == c.original {
		return true
	}
	k, err := surt.CDXKey(c.redirect)
	return err == nil && k == c.urlkey
}

// collapseLast keeps the last of each run of captures with the same
// collapse key. It copies captures because the inner iterator reuses them.
type collapseLast struct {
	inner   captureIter
	spec    *collapseSpec
	pending *capture
	out     capture
	done    bool
}

func (cl *collapseLast) next() (*capture, bool) {
	if cl.done {
		return nil, false
	}
	if cl.pending == nil {
		c, ok := cl.inner.next()
		if !ok {
			cl.done = true
			return nil, false
		}
		cp := *c
		cl.pending = &cp
	}
	for {
		c, ok := cl.inner.next()
		if !ok {
			cl.done = true
			cl.out = *cl.pending
			return &cl.out, true
		}
		if cl.spec.key(c) != cl.spec.key(cl.pending) {
			cl.out = *cl.pending
			*cl.pending = *c
			return &cl.out, true
		}
		*cl.pending = *c
	}
}

func (cl *collapseLast) err() error { return cl.inner.err() }
func (cl *collapseLast) close()     { cl.inner.close() }

// closest merges a forward scan from the target time and a backward scan
// before it, nearest first; a tie goes to the later capture, as in
// OutbackCDX's ClosestTimestampIterator.
type closest struct {
	target   int64 // milliseconds
	fwd, bwd captureIter
	f, b     *capture
	fc, bc   capture
}

func (ix *Index) closestIter(cp []byte, q *query, scanCap int64) (captureIter, error) {
	ts, err := closestTimestamp(q.closest)
	if err != nil {
		return nil, err
	}
	urlStart, urlEnd := urlBounds(cp, q.urlkey)
	mid := urlTimeKey(cp, q.urlkey, ts)
	fwd, err := ix.newScan(cp, mid, urlEnd, false, nil, scanCap)
	if err != nil {
		return nil, err
	}
	bwd, err := ix.newScan(cp, urlStart, mid, true, nil, scanCap)
	if err != nil {
		fwd.close()
		return nil, err
	}
	return &closest{target: millis(ts), fwd: fwd, bwd: bwd}, nil
}

func (c *closest) next() (*capture, bool) {
	if c.f == nil {
		if x, ok := c.fwd.next(); ok {
			c.fc, c.f = *x, &c.fc
		}
	}
	if c.b == nil {
		if x, ok := c.bwd.next(); ok {
			c.bc, c.b = *x, &c.bc
		}
	}
	switch {
	case c.f == nil && c.b == nil:
		return nil, false
	case c.f == nil:
		return c.take(&c.b)
	case c.b == nil:
		return c.take(&c.f)
	}
	if millis(c.f.timestamp)-c.target <= c.target-millis(c.b.timestamp) {
		return c.take(&c.f)
	}
	return c.take(&c.b)
}

// take returns *slot and empties it; the capture stays valid until the
// slot is refilled on the next call.
func (c *closest) take(slot **capture) (*capture, bool) {
	x := *slot
	*slot = nil
	return x, true
}

func (c *closest) err() error {
	if err := c.fwd.err(); err != nil {
		return err
	}
	return c.bwd.err()
}

func (c *closest) close() { c.fwd.close(); c.bwd.close() }

// millis converts a 14-digit timestamp to Unix milliseconds. Month or day
// 00 (left by zero-padding a short timestamp on ingest, which OutbackCDX
// fails on) count as 01; other out-of-range values roll over as time.Date
// does, so every capture has a place in the order.
func millis(ts int64) int64 {
	sec := ts % 100
	ts /= 100
	mi := ts % 100
	ts /= 100
	h := ts % 100
	ts /= 100
	d := max(ts%100, 1)
	ts /= 100
	mo := max(ts%100, 1)
	y := ts / 100
	return time.Date(int(y), time.Month(mo), int(d), int(h), int(mi), int(sec), 0, time.UTC).UnixMilli()
}
