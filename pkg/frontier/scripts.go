package frontier

import "github.com/redis/go-redis/v9"

// Key schema (P = "{name}:"):
//   P seen            SET   seen-filter keys of every admitted URI
//   P q:<host>        ZSET  queued items, score = precedence*1e12 + arrival
//   P seq             STRING arrival counter
//   P queued          STRING number of queued items
//   P ready           ZSET  host -> earliest next fetch (ms)
//   P leases          ZSET  host -> lease expiry (ms)
//   P inflight        HASH  host -> claimed item
//   P inflightscore   HASH  host -> its queue score, to requeue on expiry
// Keys are built inside the scripts from P; the shared hash tag keeps them
// in one cluster slot.

var admitScript = redis.NewScript(`
local p = ARGV[1]
local now = tonumber(ARGV[2])
local out = {}
local n = 0
for i = 3, #ARGV, 5 do
  local key, host, prec, force, item = ARGV[i], ARGV[i+1], tonumber(ARGV[i+2]), ARGV[i+3], ARGV[i+4]
  local new = redis.call('SADD', p .. 'seen', key)
  if new == 1 or force == '1' then
    local seq = redis.call('INCR', p .. 'seq')
    if redis.call('ZADD', p .. 'q:' .. host, prec * 1e12 + seq, item) == 1 then
      redis.call('INCR', p .. 'queued')
    end
    if not redis.call('ZSCORE', p .. 'ready', host) and not redis.call('ZSCORE', p .. 'leases', host) then
      redis.call('ZADD', p .. 'ready', now, host)
    end
    n = n + 1
    out[n] = 1
  else
    n = n + 1
    out[n] = 0
  end
end
return out
`)

var claimScript = redis.NewScript(`
local p = ARGV[1]
local now = tonumber(ARGV[2])
local untilms = tonumber(ARGV[3])
for attempt = 1, 16 do
  local hs = redis.call('ZRANGEBYSCORE', p .. 'ready', '-inf', now, 'LIMIT', 0, 1)
  if #hs == 0 then return false end
  local host = hs[1]
  redis.call('ZREM', p .. 'ready', host)
  local popped = redis.call('ZPOPMIN', p .. 'q:' .. host)
  if #popped == 2 then
    redis.call('DECR', p .. 'queued')
    redis.call('ZADD', p .. 'leases', untilms, host)
    redis.call('HSET', p .. 'inflight', host, popped[1])
    redis.call('HSET', p .. 'inflightscore', host, popped[2])
    return {host, popped[1], popped[2]}
  end
end
return false
`)

var completeScript = redis.NewScript(`
local p, host, nextms = ARGV[1], ARGV[2], tonumber(ARGV[3])
redis.call('ZREM', p .. 'leases', host)
redis.call('HDEL', p .. 'inflight', host)
redis.call('HDEL', p .. 'inflightscore', host)
if redis.call('ZCARD', p .. 'q:' .. host) > 0 then
  redis.call('ZADD', p .. 'ready', nextms, host)
end
return 1
`)

// requeueLua returns a claimed host's item to its queue and frees the host;
// shared by reaping (expired leases) and release (interrupted work).
const requeueLua = `
local function requeue(p, host, now)
  local item = redis.call('HGET', p .. 'inflight', host)
  local score = redis.call('HGET', p .. 'inflightscore', host)
  if item then
    if redis.call('ZADD', p .. 'q:' .. host, tonumber(score) or 0, item) == 1 then
      redis.call('INCR', p .. 'queued')
    end
  end
  redis.call('HDEL', p .. 'inflight', host)
  redis.call('HDEL', p .. 'inflightscore', host)
  redis.call('ZREM', p .. 'leases', host)
  if redis.call('ZCARD', p .. 'q:' .. host) > 0 then
    redis.call('ZADD', p .. 'ready', now, host)
  end
end
`

var reapScript = redis.NewScript(requeueLua + `
local p, cutoff, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local hs = redis.call('ZRANGEBYSCORE', p .. 'leases', '-inf', cutoff)
for _, host in ipairs(hs) do
  requeue(p, host, now)
end
return #hs
`)

var releaseScript = redis.NewScript(requeueLua + `
requeue(ARGV[1], ARGV[2], tonumber(ARGV[3]))
return 1
`)
