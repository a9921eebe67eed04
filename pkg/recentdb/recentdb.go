// Package recentdb is the recently-crawled DB (ARCHITECTURE.md 5.4 and 11):
// for every URL a crawl has fetched, when it was last captured, with what
// payload digest, status and validators (ETag, Last-Modified), where the
// latest full record is (for revisit records) and its latest failure. The
// cdxwriter fills it from crawled events; workers read it for recrawl
// decisions, revisit records and conditional requests.
//
// # Keys
//
// An entry is a Redis hash under
//
//	rc:{<history>:<shard>}:<base64url of the first 16 bytes of SHA-256(URL)>
//
// The history is the crawl, and in the frequent crawl the stream as well
// ("fc-npld", "fc-bypm", "dc"): NPLD and BYPM are separate legal regimes,
// so a BYPM capture must never become a revisit of an NPLD record, nor be
// skipped because NPLD has it.
//
// The URL is the normalised form (pkg/uri.Normalize) of the URL as crawled,
// not its CDX (SURT) key: the CDX key folds http into https and drops "www",
// so an http URL redirecting to its https twin would mark the twin as
// recently crawled before it ever was (UKWA's OutbackCDX lookup guards
// against the same thing by demanding an exact original-URL match). Hashing
// bounds the key size whatever the URL length, as UKWA's useHashedUriKey
// does. The shard is the host's murmur3 hash (pkg/hostkey) modulo Shards:
// a host's entries share a Redis Cluster slot, entries spread over Shards
// slots, and one script call updates all of a batch's entries of a shard,
// which is what makes a batch cheap for Redis.
//
// # Values
//
// Fields c (latest capture), o (latest full record) and f (latest failure)
// each hold "<yyyyMMddHHmmssSSS> <json>". Field l holds the outlinks of the
// latest full capture ("<yyyyMMddHHmmssSSS> " and a compressed list, see
// Outlinks), written by the worker that extracted them, so that a page
// answered with 304 Not Modified still leads the crawl where its original
// did. The update script replaces a field
// only with a value that is not older (compared as strings, the fixed-width
// time first), so replays and out-of-order delivery converge on the newest
// state, and redelivering the same event changes nothing. The key expires
// TTL after its newest value and never earlier (PEXPIREAT ... GT, Redis 7.0
// or later), so a replayed event older than the TTL is dropped at once.
//
// # Crawled events
//
// FromCrawled follows UKWA's OutbackCDX persist processor: captures and
// failures are recorded, the outcomes it skips are skipped (see
// FromCrawled). The crawled event carries no validators, so Trawler adds a
// convention: extra_info "etag" and "lastModified" (JSON strings, the
// response's ETag and Last-Modified) are stored with the capture when
// present.
package recentdb

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/hostkey"
)

// Options configures a DB.
type Options struct {
	// Crawl names the crawl (fc, dc); crawls never share entries.
	Crawl string
	// Stream names the stream within the crawl (npld, bypm); streams never
	// share entries. Empty for a crawl without streams (dc).
	Stream string
	// TTL is how long an entry lives after its newest capture or failure.
	// Zero keeps entries until deleted.
	TTL time.Duration
	// Logger receives warnings about entries that cannot be read. Nil
	// discards them.
	Logger *slog.Logger
}

// DB is the recently-crawled DB. It is safe for concurrent use.
type DB struct {
	rdb redis.UniversalClient
	// history is the key namespace: the crawl, or crawl-stream.
	history string
	ttl     time.Duration
	log     *slog.Logger
}

// New returns the DB of opts.Crawl on rdb.
func New(rdb redis.UniversalClient, opts Options) (*DB, error) {
	switch {
	case rdb == nil:
		return nil, errors.New("recentdb: no Redis client")
	case opts.Crawl == "":
		return nil, errors.New("recentdb: no crawl name")
	case opts.TTL < 0:
		return nil, fmt.Errorf("recentdb: TTL %s is negative", opts.TTL)
	case !validName(opts.Crawl):
		return nil, fmt.Errorf("recentdb: crawl name %q: want letters, digits, '-' or '_'", opts.Crawl)
	case opts.Stream != "" && !validName(opts.Stream):
		return nil, fmt.Errorf("recentdb: stream name %q: want letters, digits, '-' or '_'", opts.Stream)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db := &DB{rdb: rdb, history: opts.Crawl, ttl: opts.TTL, log: log}
	if opts.Stream != "" {
		db.history += "-" + opts.Stream
	}
	return db, nil
}

// Stream returns a DB on the same Redis with the same settings, holding the
// history of another stream of the crawl; "" is the crawl's own history
// (a crawl without streams).
func (db *DB) Stream(crawl, stream string) (*DB, error) {
	return New(db.rdb, Options{Crawl: crawl, Stream: stream, TTL: db.ttl, Logger: db.log})
}

// History is the namespace of the DB's keys: the crawl, or crawl-stream.
func (db *DB) History() string { return db.history }

// validName keeps names out of the key syntax (no braces, colons or spaces).
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// Shards is the number of hash tags entries are spread over. It is part
// of every key: changing it orphans existing entries.
const Shards = 64

// maxKeysPerCall bounds the entries one script call updates, so a call
// never holds Redis for long (a few microseconds per entry).
const maxKeysPerCall = 256

// Key returns the Redis key of url's entry; ok is false for URLs that are
// not http or https or do not parse, which the DB never holds.
func (db *DB) Key(url string) (key string, ok bool) {
	key, _, ok = db.key(url)
	return key, ok
}

// key returns the entry key and its shard.
func (db *DB) key(url string) (key string, shard uint32, ok bool) {
	norm, authority, ok := normalize(url)
	if !ok {
		return "", 0, false
	}
	shard = hostkey.Murmur3([]byte(authority), 0) % Shards
	sum := sha256.Sum256([]byte(norm))
	var b strings.Builder
	b.Grow(len(db.history) + 34)
	b.WriteString("rc:{")
	b.WriteString(db.history)
	b.WriteByte(':')
	b.WriteString(strconv.FormatUint(uint64(shard), 10))
	b.WriteString("}:")
	b.WriteString(base64.RawURLEncoding.EncodeToString(sum[:16]))
	return b.String(), shard, true
}

// Put applies updates in one pipeline (one round trip on a single Redis),
// one script call per shard. Updates of URLs the DB cannot key and updates
// with nothing to store are ignored. It is idempotent and order-safe:
// applying the same updates again, or older ones later, leaves the newest
// state.
func (db *DB) Put(ctx context.Context, updates []Update) error {
	calls := db.prepareCalls(updates)
	if len(calls) == 0 {
		return nil
	}
	err := db.runCalls(ctx, calls)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		// Redis restarted or its script cache was flushed: load and retry.
		if lerr := updateScript.Load(ctx, db.rdb).Err(); lerr != nil {
			return fmt.Errorf("recentdb: load update script: %w", lerr)
		}
		err = db.runCalls(ctx, calls)
	}
	return err
}

// scriptCall is one update script call: entries of one shard.
type scriptCall struct {
	keys []string
	args []any
}

// prepareCalls encodes the updates and groups them by shard.
func (db *DB) prepareCalls(updates []Update) []*scriptCall {
	var open [Shards]*scriptCall
	var calls []*scriptCall
	for _, u := range updates {
		key, shard, ok := db.key(u.URL)
		if !ok {
			continue
		}
		args := db.scriptArgs(u)
		if len(args) == 2 {
			continue // nothing to store
		}
		c := open[shard]
		if c == nil || len(c.keys) == maxKeysPerCall {
			c = &scriptCall{}
			open[shard] = c
			calls = append(calls, c)
		}
		c.keys = append(c.keys, key)
		c.args = append(c.args, args...)
	}
	return calls
}

// scriptArgs are one entry's script arguments: the expiry time (Unix ms, 0
// for none), the number of fields, then field, value pairs.
func (db *DB) scriptArgs(u Update) []any {
	var expireAt int64
	if db.ttl > 0 {
		expireAt = max(u.latest().Add(db.ttl).UnixMilli(), 1)
	}
	args := make([]any, 2, 8)
	args[0] = expireAt
	if u.Capture != nil {
		v := encodeCapture(u.Capture, sharesRecord(u.Capture, u.Original))
		args = append(args, fieldCapture, v)
	}
	if u.Original != nil {
		v := encodeOriginal(u.Original)
		args = append(args, fieldOriginal, v)
	}
	if u.Failure != nil {
		v := encodeFailure(u.Failure)
		args = append(args, fieldFailure, v)
	}
	if u.Outlinks != nil {
		args = append(args, fieldOutlinks, encodeOutlinks(u.Outlinks))
	}
	args[1] = (len(args) - 2) / 2
	return args
}

// runCalls sends the script calls in one pipeline.
func (db *DB) runCalls(ctx context.Context, calls []*scriptCall) error {
	_, err := db.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range calls {
			updateScript.EvalSha(ctx, p, c.keys, c.args...)
		}
		return nil
	})
	if err != nil {
		n := 0
		for _, c := range calls {
			n += len(c.keys)
		}
		return fmt.Errorf("recentdb: put %d entries: %w", n, err)
	}
	return nil
}

// Lookup returns the entries of urls, in order, in one pipeline. A URL the
// DB cannot key (not http or https, unparsable) gets an empty Entry, as does
// one with no entry. An entry that cannot be read (not a hash, or values
// that do not decode) is logged and treated as absent, so one damaged key
// cannot fail every lookup that includes it; only a failure to reach Redis
// is an error.
func (db *DB) Lookup(ctx context.Context, urls []string) ([]Entry, error) {
	out := make([]Entry, len(urls))
	cmds := make([]*redis.SliceCmd, len(urls))
	// A batch of concurrent callers' lookups often repeats a URL (a link
	// found on several pages at once): each key is read once.
	byKey := make(map[string]*redis.SliceCmd, len(urls))
	_, err := db.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, u := range urls {
			key, ok := db.Key(u)
			if !ok {
				continue
			}
			if cmds[i] = byKey[key]; cmds[i] == nil {
				cmds[i] = p.HMGet(ctx, key, fieldCapture, fieldOriginal, fieldFailure)
				byKey[key] = cmds[i]
			}
		}
		return nil
	})
	for i, c := range cmds {
		if c == nil {
			continue
		}
		if cerr := c.Err(); cerr != nil {
			if isTransport(cerr) {
				return nil, fmt.Errorf("recentdb: lookup %d URLs: %w", len(urls), err)
			}
			db.log.Warn("recently-crawled entry unreadable; treated as absent", "url", urls[i], "err", cerr)
			continue
		}
		e, derr := decodeEntry(c.Val())
		if derr != nil {
			db.log.Warn("recently-crawled entry unreadable; treated as absent", "url", urls[i], "err", derr)
			continue
		}
		out[i] = e
	}
	return out, nil
}

// isTransport tells a failure to reach Redis from a reply about one key.
func isTransport(err error) bool {
	var rerr redis.Error
	return !errors.As(err, &rerr)
}

// decodeEntry decodes the c, o, f fields (nil when absent).
func decodeEntry(vals []any) (Entry, error) {
	var e Entry
	if len(vals) != 3 {
		return e, fmt.Errorf("HMGET returned %d values, want 3", len(vals))
	}
	var err error
	if s, ok := vals[0].(string); ok {
		if e.Capture, err = decodeCapture(s); err != nil {
			return Entry{}, err
		}
	}
	if s, ok := vals[1].(string); ok {
		if e.Original, err = decodeOriginal(s); err != nil {
			return Entry{}, err
		}
	}
	if s, ok := vals[2].(string); ok {
		if e.Failure, err = decodeFailure(s); err != nil {
			return Entry{}, err
		}
	}
	mergeShared(&e)
	return e, nil
}
