-- Claim up to max URIs under leases: from each ready host as many as its
-- parallelQueues leave room for.
-- ARGV: P, now, lease expiry ms, max.
-- Returns the earliest ready time (ms, -1 when no host waits) followed by
-- 15 fields per claim: lease, item, context blob, then fetch successes,
-- success bytes, responses and all bytes of the server, the host name and
-- the source.
local now, untilms, max = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local out = {''}
if redis.call('EXISTS', P .. 'paused') == 1 then
  out[1] = tostring(now + 1000)
  return out
end
local hosts = redis.call('ZRANGEBYSCORE', READY, '-inf', now, 'LIMIT', 0, max)
local claimed = 0
-- claimOne claims the next URI of host; it returns whether the host can
-- give another one now (parallelQueues left, still ready).
local function claimOne(host)
  local item, uk, seq, lvl, r, ctx = pop(host)
  if item then
    redis.call('HSET', P .. 'u:' .. host, uk, 'l' .. lvl .. seq)
    local n, a = adjust(host, -1, 1)
    schedule(host, n, a, now)
    local lease = host .. ' ' .. redis.call('INCR', P .. 'lseq')
    redis.call('ZADD', LEASES, untilms, lease)
    redis.call('HSET', LEASED, lease, item)
    local blob = redis.call('HGET', CTX, ctx) or ''
    out[#out + 1] = lease
    out[#out + 1] = item
    out[#out + 1] = blob
    for _, key in ipairs({P .. 'h:' .. host, P .. 'hn:' .. hostname(host), P .. 'src:' .. source(blob)}) do
      local fs, sb, fr, ab = usage(key)
      out[#out + 1] = fs
      out[#out + 1] = sb
      out[#out + 1] = fr
      out[#out + 1] = ab
    end
    claimed = claimed + 1
    local score = redis.call('ZSCORE', READY, host)
    return score ~= false and score ~= nil and tonumber(score) <= now
  end
  -- Only stale entries were left: the host has nothing queued.
  local v = redis.call('HMGET', P .. 'h:' .. host, 'n', 'a')
  local n, a = adjust(host, -num(v[1]), 0)
  schedule(host, n, a, now)
  return false
end
-- A host with parallelQueues left gives several URIs in one call, so a
-- crawl of one big site is not held to one claim per round trip.
for _, host in ipairs(hosts) do
  while claimed < max and claimOne(host) do end
  if claimed >= max then break end
end
local first = redis.call('ZRANGE', READY, 0, 0, 'WITHSCORES')
if first[2] then out[1] = first[2] else out[1] = '-1' end
return out
