package frontier

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
	"github.com/trawler-crawl/trawler/pkg/surt"
)

// Where a URI is, as URIState reports it. The shard's URI index (buckets
// x:<n>, one field per URI; lib.lua) records it: a number for queued, 'h'
// queued but held while its target is paused, 'l' leased, '-' finished.
const (
	URINone     = "none"      // never admitted, or forgotten (Bloom mode forgets finished URIs)
	URIQueued   = "queued"    // waiting in its host's queue
	URIHeld     = "held"      // queued, set aside while its target is paused
	URIInFlight = "in-flight" // leased to a worker
	URIFinished = "finished"  // finished (the seen filter decides when it is due again)
)

// positionScanMax bounds how far URIState looks for a queued URI's place
// in its queue: the index says which queue, not where in it.
const positionScanMax = 100_000

// URIState is where one URI is in the frontier.
type URIState struct {
	State string `json:"state"`
	Host  string `json:"host"`
	// Level is the precedence level of a queued, held or leased URI (0
	// seeds and forced, then by hop depth) and Seq its arrival number.
	Level int   `json:"level"`
	Seq   int64 `json:"seq"`
	// Position is a queued or held URI's place in its list (0: next),
	// -1 when it was not found within positionScanMax; Ahead counts the
	// URIs of the host claimed before it (higher levels included).
	Position int   `json:"position"`
	Ahead    int64 `json:"ahead"`
	// Retries counts earlier attempts that ended in a retry.
	Retries int `json:"retries"`
	// Lease names the lease of a URI in flight, LeasedAt when it was
	// claimed (zero if unknown) and LeaseExpires when the lease runs out
	// unless renewed.
	Lease        string    `json:"lease,omitempty"`
	LeasedAt     time.Time `json:"leased_at,omitzero"`
	LeaseExpires time.Time `json:"lease_expires,omitzero"`
	// Due is when a queued URI's host may next be fetched, when that is
	// later than now: its politeness delay, retry delay (Retries > 0:
	// held for a retry) or back-off (BackOffUntil).
	Due          time.Time `json:"due,omitzero"`
	BackOffUntil time.Time `json:"back_off_until,omitzero"`
	// FinishedAt is when a finished URI finished (to the second).
	FinishedAt time.Time `json:"finished_at,omitzero"`
}

// URIState reports whether url is queued (in which host queue, at which
// level and place), held for a paused target, in flight (under which lease
// and since when) or finished, and for a queued URI when it is due. It only
// reads: one round trip for the index, more to find a queued URI's place.
func (f *Frontier) URIState(ctx context.Context, url string) (URIState, error) {
	host, err := hostkey.Authority(url)
	if err != nil {
		return URIState{}, fmt.Errorf("frontier %s uri state of %q: %w", f.name, url, err)
	}
	key, err := surt.CDXKey(url)
	if err != nil {
		return URIState{}, fmt.Errorf("frontier %s uri state of %q: seen key: %w", f.name, url, err)
	}
	uk := uriKey(key)
	p := f.prefixes[f.shardOf(host)]
	st := URIState{State: URINone, Host: host, Position: -1}
	idx, err := f.indexStates(ctx, p, []string{uk})
	if err != nil {
		return st, fmt.Errorf("frontier %s uri state of %q: %w", f.name, url, err)
	}
	v := idx[0]
	if v == "" {
		return st, nil
	}
	switch {
	case v[0] == '-':
		st.State = URIFinished
		if s, err := strconv.ParseInt(v[1:], 10, 64); err == nil {
			st.FinishedAt = time.Unix(s, 0).UTC()
		}
		return st, nil
	case v[0] == 'l':
		st.State = URIInFlight
		return st, f.leaseState(ctx, p, host, v[1:], &st)
	case v[0] == 'h' || v[0] >= '0' && v[0] <= '9':
		st.State = URIQueued
		if v[0] == 'h' {
			st.State = URIHeld
			st.Level, st.Seq = splitLevelSeq(v[1:])
		} else if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			st.Level, st.Seq = int(n%4), n/4
		}
		vals, err := f.rdb.HMGet(ctx, p+"h:"+host, "next", "bu").Result()
		if err != nil {
			return st, fmt.Errorf("frontier %s uri state of %q: %w", f.name, url, err)
		}
		now := f.now()
		if next := toInt(vals[0]); next > ms(now) {
			st.Due = time.UnixMilli(next)
		}
		if bu := toInt(vals[1]); bu > ms(now) {
			st.BackOffUntil = time.UnixMilli(bu)
			st.Due = later(st.Due, st.BackOffUntil)
		}
		return st, f.queuePlace(ctx, p, host, uk, v[0] == 'h', &st)
	}
	return st, fmt.Errorf("frontier %s uri state of %q: index entry %q", f.name, url, v)
}

// indexStates reads the URI index states of uks in the shard of prefix
// p, "" for none. A script reads them, since which bucket holds a uk
// depends on how far the index has split.
func (f *Frontier) indexStates(ctx context.Context, p string, uks []string) ([]string, error) {
	args := make([]any, 0, len(uks)+1)
	args = append(args, p)
	for _, uk := range uks {
		args = append(args, uk)
	}
	v, err := f.sc.ixget.Run(ctx, f.rdb, []string{p + "ready"}, args...).Slice()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("uri index: %w", err)
	}
	out := make([]string, len(uks))
	for i := range min(len(v), len(out)) {
		out[i], _ = v[i].(string)
	}
	return out, nil
}

// queuedState is the URI index state of an item queued at level with
// arrival number seq (qstate in lib.lua).
func queuedState(level int, seq string) string {
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil {
		return ""
	}
	return strconv.FormatInt(n*4+int64(level), 10)
}

// splitLevelSeq reads "<level digit><seq>".
func splitLevelSeq(s string) (int, int64) {
	if s == "" {
		return 0, 0
	}
	seq, _ := strconv.ParseInt(s[1:], 10, 64)
	return int(s[0] - '0'), seq
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// leaseState fills a leased URI's state from its index entry
// "<level><seq>/<lease seq>/<claimed ms>" (older entries lack the lease).
func (f *Frontier) leaseState(ctx context.Context, p, host, v string, st *URIState) error {
	ls, lseq, found := strings.Cut(v, "/")
	st.Level, st.Seq = splitLevelSeq(ls)
	if !found {
		return nil
	}
	lseq, at, _ := strings.Cut(lseq, "/")
	st.Lease = host + " " + lseq
	if n, err := strconv.ParseInt(at, 10, 64); err == nil {
		st.LeasedAt = time.UnixMilli(n)
	}
	pipe := f.rdb.Pipeline()
	exp := pipe.ZScore(ctx, p+"leases", st.Lease)
	item := pipe.HGet(ctx, p+"leased", st.Lease)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("frontier %s lease %s: %w", f.name, st.Lease, err)
	}
	if e, err := exp.Result(); err == nil {
		st.LeaseExpires = time.UnixMilli(int64(e))
	}
	if it, err := parseItem(item.Val()); err == nil {
		st.Retries = it.retries
	}
	return nil
}

// queuePlace finds a queued (or held) URI in its list, at most
// positionScanMax list elements deep, for its place and retries.
func (f *Frontier) queuePlace(ctx context.Context, p, host, uk string, held bool, st *URIState) error {
	list := fmt.Sprintf("%sq:%s:%d", p, host, st.Level)
	if held {
		list = p + "qh:" + host
	} else {
		for lvl := range st.Level {
			n, err := f.queueLen(ctx, fmt.Sprintf("%sq:%s:%d", p, host, lvl))
			if err != nil {
				return err
			}
			st.Ahead += n
		}
	}
	want := uk + " " + strconv.FormatInt(st.Seq, 10) + " "
	const chunk = 1000
	pos := 0
	for start := int64(0); start < positionScanMax; start += chunk {
		q, err := f.readQueue(ctx, list, start, start+chunk-1)
		if err != nil {
			return err
		}
		for i, raw := range q.items {
			if strings.HasPrefix(raw, want) {
				st.Position = pos + i
				if !held {
					st.Ahead += int64(st.Position)
				}
				if it, err := parseItem(raw); err == nil {
					st.Retries = it.retries
				}
				return nil
			}
		}
		pos += len(q.items)
		if q.elems < chunk {
			break
		}
	}
	return nil
}

// queueLen counts a queue's items, blocks by their headers, within
// positionScanMax list elements.
func (f *Frontier) queueLen(ctx context.Context, key string) (int64, error) {
	var n int64
	const chunk = 1000
	for start := int64(0); start < positionScanMax; start += chunk {
		elems, err := f.rdb.LRange(ctx, key, start, start+chunk-1).Result()
		if err != nil {
			return 0, fmt.Errorf("frontier %s queue %s: %w", f.name, key, err)
		}
		for _, e := range elems {
			if isBlock(e) {
				n += int64(blockLen(e))
			} else {
				n++
			}
		}
		if len(elems) < chunk {
			break
		}
	}
	return n, nil
}
