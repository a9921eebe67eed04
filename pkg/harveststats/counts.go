package harveststats

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/trawler-crawl/trawler/pkg/messages"
)

// applyLua is the Lua both count scripts share: apply(i, k) applies the
// k "<op><field>", value pairs of ARGV from i to KEYS[2] and returns the
// index after them.
const applyLua = `
local function apply(i, k)
  for j = 1, k do
    local f, v = ARGV[i], tonumber(ARGV[i + 1])
    local op, name = string.sub(f, 1, 1), string.sub(f, 2)
    if op == '+' then
      redis.call('HINCRBY', KEYS[2], name, v)
    else
      local cur = tonumber(redis.call('HGET', KEYS[2], name))
      if cur == nil or (op == '<' and v < cur) or (op == '>' and v > cur) then
        redis.call('HSET', KEYS[2], name, v)
      end
    end
    i = i + 2
  end
  return i
end
`

// A launch whose events name it is counted as its events arrive, so that
// its statistics are read in one HGETALL however many URIs it has (the
// domain crawl is one launch of hundreds of millions), not recomputed from
// its events at every poll. countScript adds a batch of events to the
// launch's counts, each URL once: it keeps the hashes of the URLs counted
// (a set) and counts an event only when its URL is new to the launch, all
// in one atomic call, so a redelivered batch, or one retried after a
// failure halfway, counts nothing twice.
//
// KEYS[1] the launch's set of URL hashes, KEYS[2] its counts hash; ARGV is
// per event: the URL hash, the number of counts k, then k pairs of
// "<op><field>" and value, op '+' (add), '<' (keep the least) or '>' (keep
// the greatest).
const countScript = applyLua + `
local i, n = 1, #ARGV
while i <= n do
  local fresh = redis.call('SADD', KEYS[1], ARGV[i]) == 1
  local k = tonumber(ARGV[i + 1])
  i = i + 2
  if fresh then
    i = apply(i, k)
  else
    i = i + 2 * k
  end
end
return 0
`

func (s *Store) seenKey(l Launch) string   { return s.prefix + "u:" + l.Key() }
func (s *Store) countsKey(l Launch) string { return s.prefix + "c:" + l.Key() }

// countArgs appends one event's arguments of countScript.
func countArgs(args []any, ev *messages.Crawled) []any {
	h := fnv.New64a()
	_, _ = h.Write([]byte(ev.URL))
	args = append(args, strconv.FormatUint(h.Sum64(), 36), 0)
	at := len(args) - 1
	k := 0
	eventCounts(Domain(ev), ev, func(op byte, key string, n int64) {
		args = append(args, string(op)+key, n)
		k++
	})
	args[at] = k
	return args
}

// count queues the counting of named events, grouped by launch, on pipe.
func (s *Store) count(ctx context.Context, pipe redis.Pipeliner, named map[Launch][]*messages.Crawled) {
	for l, evs := range named {
		args := make([]any, 0, 16*len(evs))
		for _, ev := range evs {
			args = countArgs(args, ev)
		}
		pipe.Eval(ctx, countScript, []string{s.seenKey(l), s.countsKey(l)}, args...)
	}
}

// counted returns the counts of a launch, empty when it has none.
func (s *Store) counted(ctx context.Context, l Launch) (map[string]int64, error) {
	m, err := s.rdb.HGetAll(ctx, s.countsKey(l)).Result()
	if err != nil {
		return nil, fmt.Errorf("harvest statistics: counts of %s: %w", l, err)
	}
	out := make(map[string]int64, len(m))
	for k, v := range m {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("harvest statistics: counts of %s: field %s: %w", l, k, err)
		}
		out[k] = n
	}
	return out, nil
}
