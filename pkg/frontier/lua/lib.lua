-- Shared helpers, prepended to every frontier script.
--
-- ARGV[1] is the key prefix of one frontier shard, e.g. "{fc-npld}:". Every
-- key a script touches is built from it, so all of them share the hash tag
-- and live in one Redis Cluster slot; KEYS[1] names one of them only so
-- that a cluster client routes the script to the node owning that slot.
local P = ARGV[1]
local META = P .. 'meta'
local STATS = P .. 'stats'
local READY = P .. 'ready'
local LEASES = P .. 'leases'
local LEASED = P .. 'leased'
local CTX = P .. 'ctx'
local CTXN = P .. 'ctxn'

local function num(v)
  return tonumber(v) or 0
end

-- hostname drops the port of a queue's authority: quotas count per host
-- name as well as per server (host:port).
local function hostname(host)
  return string.match(host, '^(.*):%d+$') or host
end

-- parse splits a queue item: "<uk> <seq> <level> <retries>[i] <ctx>
-- <payload>". An "i" after the retries marks a URI returned uncharged after
-- an interrupted claim. Only the Go side reads the payload.
local function parse(item)
  return string.match(item, '^(%S+) (%d+) (%d) (%d+i?) (%S+) (.*)$')
end

-- retried returns the retries field with one more retry (keeping the
-- interrupted mark); interrupted marks it.
local function retried(r)
  local n, i = string.match(r, '^(%d+)(i?)$')
  return (tonumber(n) + 1) .. i
end

local function interrupted(r)
  if string.sub(r, -1) == 'i' then return r end
  return r .. 'i'
end

-- source returns the source-tag id that starts a context blob.
local function source(blob)
  if not blob then
    return ''
  end
  return string.match(blob, '^([^\n]*)') or ''
end

local function ref(id, blob)
  if redis.call('HINCRBY', CTXN, id, 1) == 1 then
    redis.call('HSET', CTX, id, blob)
  end
end

local function unref(id)
  if redis.call('HINCRBY', CTXN, id, -1) <= 0 then
    redis.call('HDEL', CTXN, id)
    redis.call('HDEL', CTX, id)
  end
end

-- adjust changes a host's live queued count (n) and leases (a) and keeps
-- the shard's counters of queued URIs, URIs in flight, busy hosts and
-- exhausted hosts (known hosts with nothing queued or in flight) exact.
-- It returns the new n and a; a is read only when it matters (da ~= 0, or
-- n is or was 0) and is otherwise reported as 1.
local function adjust(host, dn, da)
  local hk = P .. 'h:' .. host
  local n1, a1, n0, a0
  if dn ~= 0 then
    n1 = redis.call('HINCRBY', hk, 'n', dn)
    redis.call('HINCRBY', META, 'queued', dn)
    n0 = n1 - dn
  end
  if da ~= 0 then
    a1 = redis.call('HINCRBY', hk, 'a', da)
    redis.call('HINCRBY', META, 'inflight', da)
    a0 = a1 - da
    if (a0 > 0) ~= (a1 > 0) then redis.call('HINCRBY', META, 'busy', a1 > 0 and 1 or -1) end
  end
  if not n1 then
    n1 = num(redis.call('HGET', hk, 'n'))
    n0 = n1
  end
  if not a1 then
    -- Only whether a is zero matters below, and only when n is or was 0.
    if n0 == 0 or n1 == 0 then a1 = num(redis.call('HGET', hk, 'a')) else a1 = 1 end
    a0 = a1
  end
  local e0, e1 = (n0 == 0 and a0 == 0), (n1 == 0 and a1 == 0)
  if e0 ~= e1 then redis.call('HINCRBY', META, 'exhausted', e1 and 1 or -1) end
  return n1, a1
end

-- schedule puts a host in the ready set at its next fetch time when it has
-- URIs queued, a free parallel slot and is not paused; otherwise it takes
-- the host out.
local function schedule(host, n, a, now)
  local v = redis.call('HMGET', P .. 'h:' .. host, 'pq', 'p', 'next')
  local pq = tonumber(v[1]) or 1
  if n > 0 and a < pq and v[2] ~= '1' then
    local t = num(v[3])
    if t < now then t = now end
    redis.call('ZADD', READY, t, host)
  else
    redis.call('ZREM', READY, host)
  end
end

-- known records a host the first time it is seen (a new host starts
-- exhausted: nothing queued, nothing in flight) with its parallelQueues;
-- completions keep the setting current afterwards.
local function known(host, pq)
  if redis.call('HSETNX', P .. 'h:' .. host, 'pq', pq) == 1 then
    redis.call('HINCRBY', META, 'hosts', 1)
    redis.call('HINCRBY', META, 'exhausted', 1)
  end
end

-- push queues a new item at the tail of its precedence level and makes it
-- the live entry for its URI (an older entry of the URI becomes stale).
local function push(host, uk, level, ctx, blob, payload)
  local seq = redis.call('INCR', P .. 'seq')
  local item = uk .. ' ' .. seq .. ' ' .. level .. ' 0 ' .. ctx .. ' ' .. payload
  redis.call('RPUSH', P .. 'q:' .. host .. ':' .. level, item)
  redis.call('HSET', P .. 'u:' .. host, uk, 'q' .. level .. seq)
  ref(ctx, blob)
end

-- pop takes the best live item of a host: lowest level first, arrival
-- order within it. Stale entries (superseded by a forced re-queue) are
-- dropped on the way.
local function pop(host)
  local uh = P .. 'u:' .. host
  for level = 0, 2 do
    local qk = P .. 'q:' .. host .. ':' .. level
    while true do
      local item = redis.call('LPOP', qk)
      if not item then break end
      local uk, seq, lvl, r, ctx = parse(item)
      if uk and redis.call('HGET', uh, uk) == 'q' .. lvl .. seq then
        return item, uk, seq, lvl, r, ctx
      end
      if ctx then unref(ctx) end
    end
  end
  return nil
end

local function usage(key)
  local v = redis.call('HMGET', key, 'fs', 'sb', 'fr', 'ab')
  return num(v[1]), num(v[2]), num(v[3]), num(v[4])
end

-- tally counts a finished URI against a quota subject (server, host name
-- or source): successes are 2xx responses, responses any HTTP status.
local function tally(key, status, bytes)
  if status <= 0 then return end
  redis.call('HINCRBY', key, 'fr', 1)
  if bytes > 0 then redis.call('HINCRBY', key, 'ab', bytes) end
  if status >= 200 and status < 300 then
    redis.call('HINCRBY', key, 'fs', 1)
    if bytes > 0 then redis.call('HINCRBY', key, 'sb', bytes) end
  end
end

-- count adds a finished URI to the crawl totals (per status; the Go side
-- sums them) and the quota counters.
local function count(host, src, status, bytes)
  if bytes < 0 then bytes = 0 end
  redis.call('HINCRBY', STATS, 'status:' .. status, 1)
  if bytes > 0 then redis.call('HINCRBY', STATS, 'bytes', bytes) end
  tally(P .. 'h:' .. host, status, bytes)
  tally(P .. 'hn:' .. hostname(host), status, bytes)
  if src ~= '' then tally(P .. 'src:' .. src, status, bytes) end
end

-- settle ends a lease. kind 'f' finishes the URI, 'r' puts it back for a
-- retry (charged), 'u' puts it back uncharged (expired lease, release).
-- delay is the politeness delay from now; cd the host's robots
-- Crawl-delay in ms (-1: unknown, use the stored one), raised to at most
-- cap. It returns 0 when the lease no longer exists.
local function settle(lease, kind, status, bytes, delay, cd, cap, rdelay, pq, now, mode)
  local item = redis.call('HGET', LEASED, lease)
  if not item then return 0 end
  redis.call('HDEL', LEASED, lease)
  redis.call('ZREM', LEASES, lease)
  local host = string.match(lease, '^(.*) %d+$')
  local uk, seq, lvl, r, ctx, payload = parse(item)
  local hk = P .. 'h:' .. host
  if kind ~= 'u' then
    if cd >= 0 then
      redis.call('HSET', hk, 'cd', cd)
    else
      cd = num(redis.call('HGET', hk, 'cd'))
    end
    if cd > cap then cd = cap end
    if cd > delay then delay = cd end
    if kind == 'r' and rdelay > delay then delay = rdelay end
    redis.call('HSET', hk, 'next', now + delay, 'pq', pq)
  end
  local n, a
  if kind == 'f' then
    if mode == 'b' then
      redis.call('HDEL', P .. 'u:' .. host, uk)
    else
      redis.call('HSET', P .. 'u:' .. host, uk, 'f' .. math.floor(now / 1000))
    end
    count(host, source(redis.call('HGET', CTX, ctx)), status, bytes)
    unref(ctx)
    n, a = adjust(host, 0, -1)
  else
    local again
    if kind == 'r' then
      again = uk .. ' ' .. seq .. ' ' .. lvl .. ' ' .. retried(r) .. ' ' .. ctx .. ' ' .. payload
      redis.call('HINCRBY', STATS, 'retries', 1)
    else
      again = uk .. ' ' .. seq .. ' ' .. lvl .. ' ' .. interrupted(r) .. ' ' .. ctx .. ' ' .. payload
    end
    redis.call('LPUSH', P .. 'q:' .. host .. ':' .. lvl, again)
    redis.call('HSET', P .. 'u:' .. host, uk, 'q' .. lvl .. seq)
    n, a = adjust(host, 1, -1)
  end
  schedule(host, n, a, now)
  return 1
end
