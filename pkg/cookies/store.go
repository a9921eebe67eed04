package cookies

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// storeScript applies cookie writes to the hash KEYS[1] atomically, so that
// two workers writing one domain at once cannot push it past the cap.
//
// ARGV: now (Unix seconds), cap, TTL (ms), then operations: "d", field to
// delete, or "s", field, creation time, rest of value to set. A set keeps an
// existing cookie's creation time (RFC 6265 5.3 step 11.3). Then expired
// and undecodable cookies are removed and, past the cap, the oldest by
// creation time (field name breaks ties). Creation times stay strings
// because Lua would print large numbers in exponent form. Returns the number
// of cookies evicted by the cap.
var storeScript = redis.NewScript(`
local key = KEYS[1]
local now = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local i = 4
while i <= #ARGV do
  local field = ARGV[i+1]
  if ARGV[i] == 'd' then
    redis.call('HDEL', key, field)
    i = i + 2
  else
    local created = ARGV[i+2]
    local old = redis.call('HGET', key, field)
    if old then
      local oc = string.match(old, '^v1\t(%d+)\t')
      if oc then created = oc end
    end
    redis.call('HSET', key, field, 'v1\t' .. created .. '\t' .. ARGV[i+3])
    i = i + 4
  end
end
local all = redis.call('HGETALL', key)
local live = {}
for j = 1, #all, 2 do
  local c, e = string.match(all[j+1], '^v1\t(%d+)\t(%d+)\t')
  if (not c) or (e ~= '0' and tonumber(e) <= now) then
    redis.call('HDEL', key, all[j])
  else
    live[#live+1] = {all[j], tonumber(c)}
  end
end
local evicted = 0
if #live > cap then
  table.sort(live, function(a, b)
    if a[2] ~= b[2] then return a[2] < b[2] end
    return a[1] < b[1]
  end)
  evicted = #live - cap
  for j = 1, evicted do redis.call('HDEL', key, live[j][1]) end
end
if #live > 0 then redis.call('PEXPIRE', key, ARGV[3]) end
return evicted
`)

// write is one store script call: the operations on one jar key.
type write struct {
	key  string // the jar key (registrable domain), without the prefix
	args []any  // operations, as storeScript reads them after ARGV[3]
}

// set adds a set operation for e.
func (w *write) set(e *entry) {
	w.args = append(w.args, "s", e.field(), strconv.FormatInt(e.Created, 10), e.tail())
}

// del adds a delete operation for e's identity.
func (w *write) del(e *entry) {
	w.args = append(w.args, "d", e.field())
}

// store applies writes in one pipeline and returns the number of cookies
// evicted by the cap, per jar key.
func (j *Jar) store(ctx context.Context, writes []*write) (map[string]int64, error) {
	evicted, err := j.runWrites(ctx, writes)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		// Redis restarted or its script cache was flushed: load and retry.
		if lerr := storeScript.Load(ctx, j.rdb).Err(); lerr != nil {
			return nil, fmt.Errorf("load cookie store script: %w", lerr)
		}
		evicted, err = j.runWrites(ctx, writes)
	}
	return evicted, err
}

func (j *Jar) runWrites(ctx context.Context, writes []*write) (map[string]int64, error) {
	pipe := j.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(writes))
	for i, w := range writes {
		args := append([]any{j.now().Unix(), j.opts.MaxPerDomain, j.opts.TTL.Milliseconds()}, w.args...)
		cmds[i] = storeScript.EvalSha(ctx, pipe, []string{j.prefix + w.key}, args...)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("store cookies: %w", err)
	}
	evicted := make(map[string]int64)
	for i, c := range cmds {
		if n, err := c.Int64(); err == nil && n > 0 {
			evicted[writes[i].key] += n
		}
	}
	return evicted, nil
}
