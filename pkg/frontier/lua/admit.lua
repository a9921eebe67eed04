-- Admit a batch of candidates into one shard.
-- ARGV: P, now, mode ('r' recently seen, 'b' Bloom), k (Bloom hashes),
-- chunk (bits per Bloom key), nctx, nctx x (ctx id, blob, source tag), then per
-- candidate: host, uk, level, force, payload, ctx index, last crawl ms,
-- recrawl interval ms, launch ms, journal ms, parallelQueues, reset,
-- followed by k Bloom bit positions in Bloom mode.
-- Returns one code per candidate: 1 admitted, 3 re-prioritised,
-- 0 already queued or in flight, 2 seen (recently crawled or in the Bloom
-- filter).
local now, mode, k, chunk = tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local nctx = tonumber(ARGV[6])
local ctxs, blobs, tags = {}, {}, {}
for j = 1, nctx do
  ctxs[j] = ARGV[4 + 3 * j]
  blobs[j] = ARGV[5 + 3 * j]
  tags[j] = ARGV[6 + 3 * j]
end
local F = 12
if mode ~= 'b' then k = 0 end

-- ref adds a reference to a context (lib.lua says how counts are kept).
local function ref(id, blob, tag)
  if not refn then refn, refd = {}, {} end
  local n = refn[id]
  if n then
    n = n + 1
    refd[id] = refd[id] + 1
  else
    n = redis.call('HINCRBY', CTXN, id, 1)
    refd[id] = 0
  end
  refn[id] = n
  if n == 1 then
    redis.call('HSET', CTX, id, blob)
    -- The target's tag, for status: written with each new context, which
    -- is rare beside the URIs sharing it.
    redis.call('HSET', TN, source(blob), tag)
    ctxBlobs = ctxBlobs or {}
    ctxBlobs[id] = blob
  end
end

-- rpush adds an item for the tail of a queue, written by flush.
local function rpush(key, item)
  pushes = pushes or {}
  local l = pushes[key]
  if not l then
    l = {}
    pushes[key] = l
  end
  l[#l + 1] = item
end

-- push queues a new item at the tail of its precedence level and makes it
-- the live entry for its URI (an older entry of the URI becomes stale).
-- Its target counts it queued until the entry leaves the queue, stale or
-- not, so the count never drifts.
local function push(host, uk, level, ctx, blob, tag, payload)
  local seq = nextseq(P .. 'seq')
  rpush(P .. 'q:' .. host .. ':' .. level, uk .. ' ' .. seq .. ' ' .. level .. ' 0 ' .. ctx .. ' ' .. payload)
  ixset(uk, qstate(level, seq))
  ref(ctx, blob, tag)
  tcount(source(blob), 1, 0)
end

-- bloom sets the candidate's bits and reports whether all were set. A
-- candidate that set a bit is new to the filter: bloomAdded counts them
-- (meta field bloomn), for the filter's false-positive rate at its size
-- (Frontier.Stats).
local bloomAdded = 0
local function bloom(i)
  local seen = true
  for j = 0, k - 1 do
    local loc = tonumber(ARGV[i + F + j])
    local key = P .. 'bloom:' .. math.floor(loc / chunk)
    if redis.call('SETBIT', key, loc % chunk, 1) == 0 then seen = false end
  end
  if not seen then bloomAdded = bloomAdded + 1 end
  return seen
end

-- reset drops a host's and a source's quota counters.
local function reset(host, src)
  redis.call('HDEL', P .. 'h:' .. host, 'fs', 'sb', 'fr', 'ab')
  local hn = P .. 'hn:' .. hostname(host)
  settleQuota(hn)
  redis.call('DEL', hn)
  if src ~= '' then
    settleQuota(P .. 'src:' .. src)
    redis.call('DEL', P .. 'src:' .. src)
  end
end

local out = {}
local i = 7 + 3 * nctx
while i <= #ARGV do
  -- Most candidates are already queued, so the fields only the others
  -- need are converted from text later (tonumber is not cheap).
  local host, uk, level, force, payload = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3] == '1', ARGV[i + 4]
  local cx = ARGV[i + 5]
  known(host, ARGV[i + 10])
  if ARGV[i + 11] == '1' then reset(host, source(blobs[tonumber(cx)])) end
  local st = ixget(uk)
  local kind = ixkind(st)
  local code
  -- 'h': queued, held while its target is paused (claim.lua).
  if kind == 'q' or kind == 'l' or kind == 'h' then
    code = 0
    if mode == 'b' then bloom(i) end
    if force and kind == 'q' and tonumber(st) % 4 ~= 0 then
      -- forceFetch of a queued URI: a new entry at the top level replaces
      -- it (the old one becomes stale and is dropped when popped).
      cx = tonumber(cx)
      push(host, uk, 0, ctxs[cx], blobs[cx], tags[cx], payload)
      code = 3
    end
  else
    -- A finish is recorded to the second; count it from the end of that
    -- second, so nothing admitted in the same second looks newer.
    local done = 0
    if kind == 'f' then done = -tonumber(st) * 1000 + 999 end
    local seen = false
    if mode == 'b' then seen = bloom(i) end
    local last, interval, launch, journal = tonumber(ARGV[i + 6]), tonumber(ARGV[i + 7]), tonumber(ARGV[i + 8]), tonumber(ARGV[i + 9])
    local ok
    if journal > 0 then
      ok = done < journal
    elseif force then
      ok = true
    elseif mode == 'b' then
      ok = not seen and kind ~= 'f'
    else
      if done > last then last = done end
      -- interval 0: only a newer launch makes a crawled URI due again.
      ok = last == 0 or (launch > 0 and last < launch) or (interval > 0 and last + interval <= now)
    end
    if ok then
      cx = tonumber(cx)
      push(host, uk, level, ctxs[cx], blobs[cx], tags[cx], payload)
      local hk = P .. 'h:' .. host
      local n = redis.call('HINCRBY', hk, 'n', 1)
      if n == 1 or n == 0 then
        -- The host had or has nothing queued: whether it is exhausted
        -- and ready depends on the rest of its state.
        local v = redis.call('HMGET', hk, 'a', 'pq', 'p', 'next')
        local a = num(v[1])
        adjust(n - 1, a, 1, 0)
        if n == 1 then schedule(host, n, a, v[2], v[3], v[4], now) end
      else
        adjust(n - 1, 1, 1, 0)
      end
      code = 1
    else
      code = 2
    end
  end
  out[#out + 1] = code
  i = i + F + k
end
if bloomAdded > 0 then redis.call('HINCRBY', META, 'bloomn', bloomAdded) end
-- Queues whose tail now has COMPACT_AT plain items (the element that far
-- from the end is not a block), one more before them: reported after
-- the verdicts with how many items this call pushed, for the admitting
-- worker to pack into blocks (blocks.go: compactAt, and hotHead items a
-- queue without blocks keeps plain).
if pushes then
  local COMPACT_AT, HOT_HEAD = 8, 1
  for key, l in pairs(pushes) do
    pushes[key] = nil
    mcall('RPUSH', key, l)
    local e = redis.call('LINDEX', key, -COMPACT_AT)
    if e and string.byte(e, 1) ~= 0 and redis.call('LINDEX', key, -COMPACT_AT - HOT_HEAD) then
      out[#out + 1] = key
      out[#out + 1] = #l
    end
  end
end
return out
