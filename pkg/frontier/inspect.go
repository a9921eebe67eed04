package frontier

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// QueuedURI is one URI waiting in a host's queue, as the operator console
// lists a host's next URIs.
type QueuedURI struct {
	URL     string `json:"url"`
	Via     string `json:"via,omitempty"`
	Hops    string `json:"hops,omitempty"`
	Level   int    `json:"level"`
	Retries int    `json:"retries,omitempty"`
	Seed    bool   `json:"seed,omitempty"`
}

// maxNextURIs bounds NextURIs: a page, not an export.
const maxNextURIs = 500

// NextURIs returns up to n of host's queued URIs in the order a claim
// takes them: level by level, arrival order within one. Entries a later
// admission superseded (the URI index points elsewhere) are left out, so
// a URI appears once, where it will be claimed. Held URIs of paused
// targets are not listed. Read-only.
func (f *Frontier) NextURIs(ctx context.Context, host string, n int) ([]QueuedURI, error) {
	n = min(max(n, 0), maxNextURIs)
	p := f.prefixes[f.shardOf(host)]
	var out []QueuedURI
	for level := LevelForced; level <= LevelNormal && len(out) < n; level++ {
		// Twice what is wanted, so a few superseded entries do not cut
		// the list short.
		q, err := f.readQueue(ctx, p+"q:"+host+":"+strconv.Itoa(level), 0, int64(2*(n-len(out)))-1)
		if err != nil {
			return nil, fmt.Errorf("frontier %s next URIs of %s: %w", f.name, host, err)
		}
		got, err := f.liveItems(ctx, p, host, q.items, n-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// liveItems decodes up to n of items whose URI index entry points at them.
func (f *Frontier) liveItems(ctx context.Context, p, host string, items []string, n int) ([]QueuedURI, error) {
	if len(items) == 0 {
		return nil, nil
	}
	parsed := make([]item, 0, len(items))
	uks := make([]string, 0, len(items))
	for _, s := range items {
		it, err := parseItem(s)
		if err != nil {
			continue // not ours to repair here; the claim reports it
		}
		parsed = append(parsed, it)
		uks = append(uks, it.uk)
	}
	idx, err := f.indexStates(ctx, p, uks)
	if err != nil {
		return nil, fmt.Errorf("frontier %s next URIs of %s: %w", f.name, host, err)
	}
	var out []QueuedURI
	for i, it := range parsed {
		if len(out) == n {
			break
		}
		if idx[i] != queuedState(it.level, it.seq) {
			continue
		}
		var l messages.Launch
		if err := decodePayload(it.payload, host, &l); err != nil {
			continue
		}
		out = append(out, QueuedURI{URL: l.URL, Via: l.ParentURL, Hops: l.ParentURLMetadata.PathFromSeed + l.Hop,
			Level: it.level, Retries: it.retries, Seed: l.IsSeed})
	}
	return out, nil
}

// IsUnknownHost reports whether err is Host's answer for a host the
// frontier does not know.
func IsUnknownHost(err error) bool { return errors.Is(err, errNoHost) }

// BackOff is a host waiting out a back-off that a 429 or 503, or a
// bot-challenge page, asked for.
type BackOff struct {
	Host string `json:"host"`
	// Status is the status that asked for it (0 for a challenge),
	// Reason the status or BackOffChallenge, InARow how many such answers
	// came in a row, Until when the wait ends.
	Status int       `json:"status"`
	Reason string    `json:"reason"`
	InARow int       `json:"in_a_row"`
	Until  time.Time `json:"until"`
}

// BackingOff lists up to n hosts backing off now, the longest wait first
// (a site rate-limiting the crawl hardest is the one to look at), across
// every shard. Read-only.
func (f *Frontier) BackingOff(ctx context.Context, n int) ([]BackOff, error) {
	n = min(max(n, 0), maxNextURIs)
	if n == 0 {
		return nil, nil
	}
	now := strconv.FormatInt(ms(f.now()), 10)
	var out []BackOff
	for _, p := range f.prefixes {
		zs, err := f.rdb.ZRevRangeByScoreWithScores(ctx, p+"backoff", &redis.ZRangeBy{Min: "(" + now, Max: "+inf", Count: int64(n)}).Result()
		if err != nil {
			return nil, fmt.Errorf("frontier %s back-offs: %w", f.name, err)
		}
		for _, z := range zs {
			host, _ := z.Member.(string)
			vals, err := f.rdb.HMGet(ctx, p+"h:"+host, "bo", "bs").Result()
			if err != nil {
				return nil, fmt.Errorf("frontier %s back-off of %s: %w", f.name, host, err)
			}
			reason, _ := vals[1].(string)
			out = append(out, BackOff{Host: host, InARow: int(toInt(vals[0])), Status: int(toInt(vals[1])), Reason: reason,
				Until: time.UnixMilli(int64(z.Score)).UTC()})
		}
	}
	slices.SortFunc(out, func(a, b BackOff) int { return cmp.Or(b.Until.Compare(a.Until), strings.Compare(a.Host, b.Host)) })
	return out[:min(len(out), n)], nil
}
