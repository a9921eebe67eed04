package harveststats

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// A streaming crawl (the profile's provenance.streaming: the domain crawl)
// keeps nothing per URI in Redis. Its launches are crawl-wide: every event
// counts in the launch it names (extra_info launchId), or in the crawl's
// launch without a timestamp when it names none (the domain crawl's bulk
// seeds carry no launch timestamp), under the source CrawlSource, however
// many targets the crawl has: the domain crawl's millions of targets are
// one launch, with one metadata WARC, not millions. Events are counted as
// they arrive, exactly once by their place in the crawled topic: the
// launch's hash o:<launch key> holds, per partition, the last offset
// counted, and an event at or below it is not counted again. That is
// O(partitions) where the per-URL set u: of a named launch is about 60
// bytes a URL. Unlike u:, it counts a URL crawled twice in the launch
// twice; the domain crawl admits a URL once, and a retried URI has one
// event. The events themselves are not stored (the role spools them to
// disk for the metadata WARC).

// CrawlSource is the source tag of a streaming crawl's launches: every
// source of the crawl.
const CrawlSource = "*"

// StreamLaunch is the launch an event of a streaming crawl counts in.
func StreamLaunch(ev *messages.Crawled) Launch {
	return Launch{Source: CrawlSource, Timestamp: ev.LaunchID()}
}

// Positioned is a crawled event and where it was read: its partition and
// offset in the crawled topic.
type Positioned struct {
	Event     messages.Crawled
	Partition int32
	Offset    int64
}

// offsetScript adds a batch of events to a launch's counts, each only if
// its offset is past the last one counted from its partition, and records
// the new last offsets, in one atomic call: a redelivered batch, or one
// retried after a failure, counts nothing twice.
//
// KEYS[1] the launch's offsets hash, KEYS[2] its counts hash; ARGV is per
// event: partition, offset, the number of counts k, then k pairs as in
// countScript.
const offsetScript = applyLua + `
local last = {}
local i, n = 1, #ARGV
while i <= n do
  local p, off, k = ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  i = i + 3
  if last[p] == nil then
    last[p] = tonumber(redis.call('HGET', KEYS[1], p)) or -1
  end
  if off > last[p] then
    last[p] = off
    i = apply(i, k)
  else
    i = i + 2 * k
  end
end
for p, off in pairs(last) do
  redis.call('HSET', KEYS[1], p, string.format('%d', off))
end
return 0
`

func (s *Store) offsetsKey(l Launch) string { return s.prefix + "o:" + l.Key() }

// RecordStream counts a batch of a streaming crawl's events in their
// launches (StreamLaunch) and notes the launches' activity; it stores no
// event. Events of one partition must come in offset order, as a consumer
// reads them.
func (s *Store) RecordStream(ctx context.Context, evs []Positioned) error {
	if len(evs) == 0 {
		return nil
	}
	now := s.now().UnixMilli()
	args := map[Launch][]any{}
	var order []Launch
	for i := range evs {
		ev := &evs[i].Event
		l := StreamLaunch(ev)
		if _, ok := args[l]; !ok {
			order = append(order, l)
		}
		a := append(args[l], evs[i].Partition, strconv.FormatInt(evs[i].Offset, 10), 0)
		at := len(a) - 1
		k := 0
		eventCounts(Domain(ev), ev, func(op byte, key string, n int64) {
			a = append(a, string(op)+key, n)
			k++
		})
		a[at] = k
		args[l] = a
	}
	pipe := s.rdb.Pipeline()
	for _, l := range order {
		pipe.ZAdd(ctx, s.prefix+"srcs", redis.Z{Score: float64(now), Member: l.Source})
		pipe.ZAdd(ctx, s.srcKey(l.Source, "l"), redis.Z{Member: l.Timestamp})
		pipe.HSet(ctx, s.prefix+"act", l.Key(), now)
		pipe.Eval(ctx, offsetScript, []string{s.offsetsKey(l), s.countsKey(l)}, args[l]...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("harvest statistics: count %d events: %w", len(evs), err)
	}
	return nil
}

// Offsets returns the last offset counted per partition for a launch
// (for tests and operators).
func (s *Store) Offsets(ctx context.Context, l Launch) (map[int32]int64, error) {
	m, err := s.rdb.HGetAll(ctx, s.offsetsKey(l)).Result()
	if err != nil {
		return nil, fmt.Errorf("harvest statistics: offsets of %s: %w", l, err)
	}
	out := make(map[int32]int64, len(m))
	for p, o := range m {
		pn, err1 := strconv.ParseInt(p, 10, 32)
		on, err2 := strconv.ParseInt(o, 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("harvest statistics: offsets of %s: bad entry %q=%q", l, p, o)
		}
		out[int32(pn)] = on
	}
	return out, nil
}

// NextLaunch is the timestamp of the launch of l's source after l, ""
// when l is the latest.
func (s *Store) NextLaunch(ctx context.Context, l Launch) (string, error) {
	ls, err := s.launchesOf(ctx, l.Source)
	if err != nil {
		return "", err
	}
	for i, ts := range ls {
		if ts == l.Timestamp && i+1 < len(ls) {
			return ls[i+1], nil
		}
	}
	return "", nil
}

// IsSealed reports whether a launch is sealed.
func (s *Store) IsSealed(ctx context.Context, l Launch) (bool, error) {
	ok, err := s.rdb.HExists(ctx, s.prefix+"sealed", l.Key()).Result()
	if err != nil {
		return false, fmt.Errorf("harvest statistics: sealed %s: %w", l, err)
	}
	return ok, nil
}
