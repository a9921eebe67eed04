-- Claim up to max URIs under leases: from each ready host as many as its
-- parallelQueues leave room for.
-- ARGV: P, now, lease expiry ms, max, and for fair shares (fair.lua) the
-- claimer ('' for none), how many unmet make it hungry, and the window,
-- poll and grace times (ms).
-- Returns the earliest ready time (ms, -1 when no host waits; see fairEnd)
-- followed by
-- 17 fields per claim: lease, item, context blob, then fetch successes,
-- success bytes, responses and all bytes of the server, the host name and
-- the source, then the host's back-offs in a row and until when (ms).
local now, untilms, max = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local out = {''}
if redis.call('EXISTS', P .. 'paused') == 1 then
  out[1] = tostring(now + 1000)
  return out
end

-- addLease records a new lease, written by flush (lib.lua).
local function addLease(lease, item, expiry)
  if not leaseAdd then leaseAdd, leaseExp = {}, {} end
  leaseAdd[#leaseAdd + 1] = lease
  leaseAdd[#leaseAdd + 1] = item
  leaseExp[#leaseExp + 1] = expiry
  leaseExp[#leaseExp + 1] = lease
end

-- A queue found empty stays empty for the rest of the call (a claim
-- pushes nothing), so a host giving several URIs asks Redis once about
-- its empty levels.
local emptyq = {}

-- nextBlock is the block behind the item pop took, if any: {queue, block}.
local nextBlock

-- Paused targets' source ids, read once per call and only when any.
local paused
if redis.call('SCARD', PSRC) > 0 then
  paused = {}
  for _, id in ipairs(redis.call('SMEMBERS', PSRC)) do paused[id] = true end
end

-- HOLD_MAX bounds the URIs of paused targets one call sets aside per
-- host, so a long queue of them does not block Redis: the rest are set
-- aside by the next calls.
local HOLD_MAX = 1000

-- pop takes the best live item of a host: lowest level first, arrival
-- order within it. Stale entries (superseded by a forced re-queue) are
-- dropped on the way. An item of a paused target is set aside in the
-- host's qh: list (its index entry 'h'), so it does not hold up the
-- host's other targets; unhold.lua puts it back when the target resumes.
-- Each item is set aside once per pause, so a claim costs O(1) amortised.
-- pop returns how many it set aside, whether it stopped (at HOLD_MAX or
-- at a block), and the item with its fields (nil when none), or, at a
-- block, the queue and the block.
local function pop(host)
  local held = 0
  for level = 0, 2 do
    local qk = P .. 'q:' .. host .. ':' .. level
    settlePushes(qk)
    while not emptyq[qk] do
      if held >= HOLD_MAX then return held, true end
      local item = redis.call('LPOP', qk)
      if not item then
        emptyq[qk] = true
        break
      end
      if string.byte(item, 1) == 0 then
        -- A cold block (blocks.go): put back for the worker to unpack;
        -- the host waits for the next call, its lower levels too.
        redis.call('LPUSH', qk, item)
        return held, true, nil, qk, item
      end
      local uk, seq, lvl, r, ctx = parse(item)
      if uk and ixget(uk) == qstate(lvl, seq) then
        if not (paused and paused[srcOf(ctx)]) then
          -- A block next is reported now, so that it is unpacked before
          -- the host's next claim.
          local nx = redis.call('LINDEX', qk, 0)
          if nx and string.byte(nx, 1) == 0 then nextBlock = {qk, nx} end
          return held, false, item, uk, seq, lvl, r, ctx
        end
        redis.call('RPUSH', P .. 'qh:' .. host, item)
        ixset(uk, 'h' .. lvl .. seq)
        held = held + 1
      elseif ctx then
        tcount(srcOf(ctx), -1, 0)
        unref(ctx)
      end
    end
  end
  return held, false
end

-- took counts the URIs this call claimed from the host at hand.
local took = 0

-- report asks the worker to unpack a block at the head of queue qk
-- (blocks.go): an entry without a lease, with how many URIs of paused
-- targets were set aside before it and how many URIs the call claimed
-- from the host (a long run of held URIs, or a host that gives several
-- URIs a call, is unpacked further).
local function report(qk, block, held)
  out[#out + 1] = ''
  out[#out + 1] = qk
  out[#out + 1] = block
  out[#out + 1] = held
  out[#out + 1] = took
  for _ = 1, 12 do out[#out + 1] = 0 end
end

-- hold counts the URIs pop set aside at host (hk its hash).
local function hold(host, hk, held)
  if held == 0 then return end
  redis.call('HINCRBY', hk, 'hp', held)
  redis.call('SADD', HELD, host)
  dHeld = dHeld + held
end

-- The ready set is read here and at the end: what is pending goes first.
flushReady()
local hosts = redis.call('ZRANGEBYSCORE', READY, '-inf', now, 'WITHSCORES', 'LIMIT', 0, max)
local fair = fairStart(now, ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
local claimed = 0
-- A claim changes no quota counters, and the claims of a batch often
-- share a host name or source.
local usages = {}
local function usage(key, out)
  local v = usages[key]
  if not v then
    settleQuota(key)
    v = redis.call('HMGET', key, 'fs', 'sb', 'fr', 'ab')
    usages[key] = v
  end
  for i = 1, 4 do out[#out + 1] = num(v[i]) end
end
-- claimOne claims the next URI of host; it returns whether the host can
-- give another one now (parallelQueues left, still ready).
local function claimOne(host)
  nextBlock = nil
  local held, more, item, uk, seq, lvl, r, ctx = pop(host)
  local hk = P .. 'h:' .. host
  hold(host, hk, held)
  if more and uk then
    -- The host gives nothing for a block at its head.
    report(uk, seq, held)
  end
  if item then
    local lseq = nextseq(P .. 'lseq')
    -- The index says under which lease and since when (URIState).
    ixset(uk, 'l' .. lvl .. seq .. '/' .. lseq .. '/' .. now)
    local v = redis.call('HMGET', hk, 'n', 'a', 'pq', 'p', 'next', 'fs', 'sb', 'fr', 'ab', 'bo', 'bu')
    local n, a = adjust(num(v[1]), num(v[2]), -1 - held, 1)
    redis.call('HSET', hk, 'n', n, 'a', a)
    local t = schedule(host, n, a, v[3], v[4], v[5], now)
    local lease = host .. ' ' .. lseq
    addLease(lease, item, untilms)
    local blob = ctxblob(ctx) or ''
    tcount(source(blob), -1, 1)
    out[#out + 1] = lease
    out[#out + 1] = item
    out[#out + 1] = blob
    for i = 6, 9 do out[#out + 1] = num(v[i]) end
    usage(P .. 'hn:' .. hostname(host), out)
    usage(P .. 'src:' .. source(blob), out)
    out[#out + 1] = num(v[10])
    out[#out + 1] = num(v[11])
    claimed = claimed + 1
    took = took + 1
    fair.mine = fair.mine + 1
    if nextBlock then report(nextBlock[1], nextBlock[2], 0) end
    -- The host was just scheduled: it gives another URI now if ready now.
    return t ~= nil and t <= now
  end
  local v = redis.call('HMGET', hk, 'n', 'a', 'pq', 'p', 'next')
  local n0 = num(v[1])
  -- Set aside HOLD_MAX URIs, or met a block: the host keeps its place
  -- for the next call. Otherwise only stale entries were left: the host
  -- has nothing queued.
  local dn = -n0
  if more then dn = -held end
  local n, a = adjust(n0, num(v[2]), dn, 0)
  if dn ~= 0 then redis.call('HSET', hk, 'n', n) end
  schedule(host, n, a, v[3], v[4], v[5], now)
  return false
end
-- A host with parallelQueues left gives several URIs in one call, so a
-- crawl of one big site is not held to one claim per round trip.
-- A host owed to a hungrier claimer is left ready for it (fairMay).
for i = 1, #hosts, 2 do
  local host, score = hosts[i], tonumber(hosts[i + 1])
  took = 0
  while claimed < max and fairMay(fair, score) and claimOne(host) do end
  if claimed >= max then break end
end
flushReady()
local first = redis.call('ZRANGE', READY, 0, 0, 'WITHSCORES')
local nxt = -1
if first[2] then nxt = tonumber(first[2]) end
out[1] = tostring(fairEnd(fair, max - claimed, nxt, num(redis.call('HGET', META, 'queued')) + dQueued))
return out
