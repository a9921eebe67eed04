package recentdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/redis/go-redis/v9"
)

// Outlinks are the links extracted from one full capture of a URL.
//
// A page that is unchanged when crawled again (a 304 answer to a
// conditional request) has no body to extract links from, and Heritrix
// then follows nothing: a relaunch reaches only what changed. Keeping each
// full capture's links lets the worker follow them from the revisit with
// the same hops, so a recrawl reaches what the first crawl reached.
type Outlinks struct {
	// Time is the fetch start of the capture the links were found in.
	Time time.Time
	// Links in the order they were found.
	Links []Link
}

// Link is one outlink: its hop letter (L, E, X, R, ...), absolute URL and
// where in the page it was found (the metadata record's context, e.g.
// "a/@href"), as extraction gave them.
type Link struct {
	Hop     byte
	URL     string
	Context string
}

// Limits on a stored list, so one page cannot make an entry huge: past
// MaxOutlinks links or MaxOutlinksBytes uncompressed the rest are not kept
// (extraction already caps links per page well below this).
const (
	MaxOutlinks      = 10000
	MaxOutlinksBytes = 2 << 20
)

// outlinksVersion starts the uncompressed list, so the format can change.
const outlinksVersion = 1

// encodeOutlinks writes "<timestamp> " and the s2-compressed list: a version
// byte, then "<hop><url>\t<context>\n" per link. Links of one page share
// long prefixes, so compression keeps an HTML page's list to a few hundred
// bytes per hundred links. A URL holding a tab or newline, or a hop that is
// not a printable character, is left out (it could not be read back); such
// characters in a context become spaces.
func encodeOutlinks(o *Outlinks) string {
	raw := make([]byte, 0, 64*min(len(o.Links), 64)+1)
	raw = append(raw, outlinksVersion)
	n := 0
	for _, l := range o.Links {
		if n == MaxOutlinks || len(raw)+len(l.URL)+len(l.Context)+3 > MaxOutlinksBytes {
			break
		}
		if l.URL == "" || l.Hop <= ' ' || l.Hop > '~' || strings.ContainsAny(l.URL, "\t\r\n") {
			continue
		}
		raw = append(raw, l.Hop)
		raw = append(raw, l.URL...)
		raw = append(raw, '\t')
		for i := 0; i < len(l.Context); i++ {
			c := l.Context[i]
			if c == '\t' || c == '\r' || c == '\n' {
				c = ' '
			}
			raw = append(raw, c)
		}
		raw = append(raw, '\n')
		n++
	}
	ts := formatTS(o.Time)
	out := make([]byte, 0, len(ts)+1+s2.MaxEncodedLen(len(raw)))
	out = append(out, ts...)
	out = append(out, ' ')
	out = append(out, s2.Encode(nil, raw)...)
	return string(out)
}

// decodeOutlinks reads a value encodeOutlinks wrote.
func decodeOutlinks(v string) (*Outlinks, error) {
	ts, body, ok := strings.Cut(v, " ")
	if !ok {
		return nil, fmt.Errorf("outlinks %q: want \"<timestamp> <list>\"", clip(v))
	}
	t, err := parseTS(ts)
	if err != nil {
		return nil, fmt.Errorf("outlinks: %w", err)
	}
	n, err := s2.DecodedLen([]byte(body))
	if err != nil {
		return nil, fmt.Errorf("outlinks of %s: %w", ts, err)
	}
	if n > MaxOutlinksBytes {
		return nil, fmt.Errorf("outlinks of %s: list of %d bytes exceeds the limit", ts, n)
	}
	raw, err := s2.Decode(nil, []byte(body))
	if err != nil {
		return nil, fmt.Errorf("outlinks of %s: %w", ts, err)
	}
	if len(raw) == 0 || raw[0] != outlinksVersion {
		return nil, fmt.Errorf("outlinks of %s: unknown format", ts)
	}
	o := &Outlinks{Time: t}
	for line := range bytes.SplitSeq(raw[1:], []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		url, ctx, ok := bytes.Cut(line[1:], []byte{'\t'})
		if !ok || len(url) == 0 {
			return nil, fmt.Errorf("outlinks of %s: link %d is truncated", ts, len(o.Links)+1)
		}
		o.Links = append(o.Links, Link{Hop: line[0], URL: string(url), Context: string(ctx)})
	}
	return o, nil
}

// PutOutlinks stores the outlinks of full captures (one pipeline, like
// Put). Only a list at least as new as the stored one replaces it, so a
// late write of an older capture's links changes nothing.
func (db *DB) PutOutlinks(ctx context.Context, urls []string, lists []*Outlinks) error {
	if len(urls) != len(lists) {
		return fmt.Errorf("recentdb: put outlinks: %d URLs but %d lists", len(urls), len(lists))
	}
	updates := make([]Update, 0, len(urls))
	for i, u := range urls {
		if lists[i] != nil && !lists[i].Time.IsZero() {
			updates = append(updates, Update{URL: u, Outlinks: lists[i]})
		}
	}
	return db.Put(ctx, updates)
}

// Outlinks returns the stored outlinks of url's latest full capture; nil
// (and no error) when none are stored. A list that cannot be read is
// logged and treated as absent, as Lookup treats a damaged entry.
func (db *DB) Outlinks(ctx context.Context, url string) (*Outlinks, error) {
	key, ok := db.Key(url)
	if !ok {
		return nil, nil
	}
	v, err := db.rdb.HGet(ctx, key, fieldOutlinks).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil && isTransport(err):
		return nil, fmt.Errorf("recentdb: outlinks of %s: %w", url, err)
	case err != nil:
		db.log.Warn("recently-crawled outlinks unreadable; treated as absent", "url", url, "err", err)
		return nil, nil
	}
	o, err := decodeOutlinks(v)
	if err != nil {
		db.log.Warn("recently-crawled outlinks unreadable; treated as absent", "url", url, "err", err)
		return nil, nil
	}
	return o, nil
}
