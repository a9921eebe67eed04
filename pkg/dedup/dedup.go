// Package dedup is the digest index: for each payload digest a stream has
// archived in full, which URL holds it and when it was captured, so that
// the same payload found under another URL (a mirror, a ?v= query string,
// one image under two paths) is written as an identical-payload-digest
// revisit naming that URL (WARC 1.1 section 6.7.2), as Browsertrix,
// warcprox and Veidemann write them. Replay tools resolve such a revisit
// by looking up WARC-Refers-To-Target-URI closest to WARC-Refers-To-Date
// with the same digest (pywb's resolvingloader); the index line of the
// original is what they find.
//
// # Keys
//
// A stream's index is spread over Shards hash tags by the digest:
//
//	dd:{<history>:<shard>}   hash: digest -> "<unix ms, 13 digits> <record id or -> <url>"
//	ddt:{<history>:<shard>}  sorted set: digest scored by its capture time
//
// The history is the recently-crawled DB's ("fc-npld", "fc-bypm", "dc"):
// NPLD and BYPM are separate legal regimes, so a capture of one never
// refers to a record of the other. The sorted set bounds the index: a put
// that takes a shard past its share of MaxEntries drops the shard's oldest
// entries. An entry is replaced only by a capture made after the caller's
// horizon (Put's notBefore), so within a dedup period the first full
// capture stays the one revisits name.
package dedup

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
)

// Shards is the number of hash tags a stream's index is spread over. It is
// part of every key: changing it orphans existing entries.
const Shards = 64

// Options configures an Index.
type Options struct {
	// History is the key namespace: the crawl, or crawl-stream, as the
	// recently-crawled DB names it (recentdb.DB.History).
	History string
	// MaxEntries bounds the index (across all shards); it must be >= 1.
	MaxEntries int64
}

// Index is a stream's digest index. It is safe for concurrent use.
type Index struct {
	rdb      redis.UniversalClient
	history  string
	perShard int64
}

// New returns the index of opts.History on rdb.
func New(rdb redis.UniversalClient, opts Options) (*Index, error) {
	switch {
	case rdb == nil:
		return nil, errors.New("dedup: no Redis client")
	case opts.History == "" || strings.ContainsAny(opts.History, "{}: "):
		return nil, fmt.Errorf("dedup: history %q: want a name without braces, colons or spaces", opts.History)
	case opts.MaxEntries < 1:
		return nil, fmt.Errorf("dedup: MaxEntries %d: want >= 1", opts.MaxEntries)
	}
	per := max(opts.MaxEntries/Shards, 1)
	return &Index{rdb: rdb, history: opts.History, perShard: per}, nil
}

// Ref names the full record of a payload.
type Ref struct {
	// URL is the record's WARC-Target-URI.
	URL string
	// Time is its WARC-Date (the fetch start).
	Time time.Time
	// RecordID is its WARC-Record-ID; empty when unknown.
	RecordID string
}

// Found reports whether r names a record.
func (r Ref) Found() bool { return r.URL != "" }

// Put is one full capture to enter.
type Put struct {
	// Digest is the payload digest, "sha1:BASE32" (or bare BASE32).
	Digest string
	Ref    Ref
	// NotBefore is the caller's horizon: an entry captured before it is
	// replaced, a later one kept. The zero time keeps any entry.
	NotBefore time.Time
}

// keys returns the hash and sorted-set keys of digest's shard and the
// hash field; ok is false for an empty digest.
func (ix *Index) keys(digest string) (hash, zset, field string, ok bool) {
	field = bare(digest)
	if field == "" {
		return "", "", "", false
	}
	shard := strconv.FormatUint(uint64(hostkey.Murmur3([]byte(field), 0)%Shards), 10)
	tag := "{" + ix.history + ":" + shard + "}"
	return "dd:" + tag, "ddt:" + tag, field, true
}

// bare drops the algorithm prefix: the index holds SHA-1 digests only.
func bare(d string) string {
	if alg, v, ok := strings.Cut(d, ":"); ok {
		if !strings.EqualFold(alg, "sha1") {
			return ""
		}
		return v
	}
	return d
}

// Lookup returns the entries of digests, in order, in one pipeline; a
// digest with no entry (or an entry that does not decode) gets a zero Ref.
func (ix *Index) Lookup(ctx context.Context, digests []string) ([]Ref, error) {
	out := make([]Ref, len(digests))
	cmds := make([]*redis.StringCmd, len(digests))
	_, err := ix.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, d := range digests {
			if hash, _, field, ok := ix.keys(d); ok {
				cmds[i] = p.HGet(ctx, hash, field)
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("dedup: look up %d digests: %w", len(digests), err)
	}
	for i, c := range cmds {
		if c == nil || c.Err() != nil {
			continue
		}
		if r, ok := decode(c.Val()); ok {
			out[i] = r
		}
	}
	return out, nil
}

// Put enters full captures in one pipeline. Puts without a digest or URL
// are ignored.
func (ix *Index) Put(ctx context.Context, puts []Put) error {
	run := func() error {
		_, err := ix.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, u := range puts {
				hash, zset, field, ok := ix.keys(u.Digest)
				if !ok || u.Ref.URL == "" {
					continue
				}
				var notBefore int64
				if !u.NotBefore.IsZero() {
					notBefore = u.NotBefore.UnixMilli()
				}
				putScript.EvalSha(ctx, p, []string{hash, zset}, field, encode(u.Ref),
					u.Ref.Time.UnixMilli(), notBefore, ix.perShard)
			}
			return nil
		})
		return err
	}
	err := run()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		if lerr := putScript.Load(ctx, ix.rdb).Err(); lerr != nil {
			return fmt.Errorf("dedup: load put script: %w", lerr)
		}
		err = run()
	}
	if err != nil {
		return fmt.Errorf("dedup: put %d digests: %w", len(puts), err)
	}
	return nil
}

// encode writes "<unix ms, 13 digits> <record id or -> <url>": the fixed
// width lets the put script read the time as the first 13 characters.
func encode(r Ref) string {
	id := r.RecordID
	if id == "" || strings.ContainsAny(id, " ") {
		id = "-"
	}
	return fmt.Sprintf("%013d %s %s", r.Time.UnixMilli(), id, r.URL)
}

func decode(v string) (Ref, bool) {
	ms, rest, ok := strings.Cut(v, " ")
	if !ok {
		return Ref{}, false
	}
	id, url, ok := strings.Cut(rest, " ")
	if !ok || url == "" {
		return Ref{}, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return Ref{}, false
	}
	if id == "-" {
		id = ""
	}
	return Ref{URL: url, Time: time.UnixMilli(n).UTC(), RecordID: id}, true
}

// putScript enters one digest: KEYS hash, sorted set; ARGV digest, value,
// capture time (ms), horizon (ms, 0 for none), the shard's bound. An entry
// captured at or after the horizon stays (the first full capture of a
// period is the one revisits name); otherwise the new one replaces it, and
// the shard's oldest entries past its bound are dropped.
var putScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local t = tonumber(string.sub(cur, 1, 13))
  if t and t >= tonumber(ARGV[4]) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[5])
if over > 0 then
  local old = redis.call('ZRANGE', KEYS[2], 0, over - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
  redis.call('HDEL', KEYS[1], unpack(old))
end
return 1
`)
