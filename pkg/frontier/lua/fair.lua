-- Fair shares of the ready hosts among the workers claiming from a shard
-- (docs/frontier.md, Fair claims). Without it the worker that asks first
-- wins every host that comes due, and the worker that just finished a
-- host's URI is the first to ask: a few workers kept every host.
--
-- Each claimer's claims are counted (FAIRN) while it keeps asking
-- (FAIRSEEN: when it last asked; one quiet for a window is forgotten and
-- comes back level with the least count, with no credit). A claimer that
-- was left wanting at least hungryMin URIs is hungry (FAIRWANT: when). A
-- claimer may take a host while its count is below the least count of the
-- other hungry claimers plus FAIR_SLACK; otherwise the host is left ready
-- for them, unless it has been ready for longer than the grace (nobody
-- owed it came). So nothing is withheld from a worker that only others
-- too busy to ask are ahead of, and a host waits at most the grace.
local FAIRN, FAIRSEEN, FAIRWANT = P .. 'fair', P .. 'fairseen', P .. 'fairwant'
local FAIR_SLACK = 1

-- fairStart reads the claimer's standing; claimer '' turns fairness off.
-- Five commands a call at most: the active claimers with their last ask,
-- the hungry ones, their counts, and this claimer's ask (plus removals of
-- claimers quiet for the window, rarely).
local function fairStart(now, claimer, hungryMin, window, poll, grace)
  local f = {claimer = claimer or '', mine = 0, now = now, hungryMin = tonumber(hungryMin) or 1,
    poll = tonumber(poll) or 0, grace = tonumber(grace) or 0, others = false, withheld = false}
  if f.claimer == '' then return f end
  local since = now - (tonumber(window) or 0)
  local seen = redis.call('ZRANGE', FAIRSEEN, 0, -1, 'WITHSCORES')
  local active, gone = {}, {}
  for i = 1, #seen, 2 do
    if tonumber(seen[i + 1]) < since then gone[#gone + 1] = seen[i] else active[#active + 1] = seen[i] end
  end
  if #gone > 0 then
    mcall('ZREM', FAIRSEEN, gone)
    mcall('ZREM', FAIRWANT, gone)
    mcall('HDEL', FAIRN, gone)
  end
  local hungry = {}
  for _, c in ipairs(redis.call('ZRANGEBYSCORE', FAIRWANT, since, '+inf')) do hungry[c] = true end
  f.wasHungry = hungry[f.claimer] or false
  local counts = {}
  if #active > 0 then counts = redis.call('HMGET', FAIRN, unpack(active)) end
  local mine, least
  for i, c in ipairs(active) do
    local v = tonumber(counts[i])
    if c == f.claimer then
      mine = v
    elseif v then
      f.others = true
      if not least or v < least then least = v end
      if hungry[c] and (not f.floor or v < f.floor) then f.floor = v end
    end
  end
  f.mine = mine or least or 0
  f.stored = mine
  redis.call('ZADD', FAIRSEEN, now, f.claimer)
  return f
end

-- fairMay tells whether the claimer may take a host ready since score.
local function fairMay(f, score)
  if not f.floor or f.mine < f.floor + FAIR_SLACK or score < f.now - f.grace then return true end
  f.withheld = true
  return false
end

-- fairEnd records the claimer's count and hunger (unmet: what it asked
-- for and did not get) and returns the time to report for the next claim:
-- nxt, the first ready time; a poll away, prefixed "w", when hosts were
-- left for others (the claimer asks again after them, even if it got
-- some), and, when other claimers share the
-- shard and URIs are queued (queued), at most a poll away for a hungry
-- claimer, which may be owed a host any moment.
local function fairEnd(f, unmet, nxt, queued)
  if f.claimer == '' then return nxt end
  if f.mine ~= f.stored then redis.call('HSET', FAIRN, f.claimer, f.mine) end
  local hungry = unmet >= f.hungryMin
  if hungry then
    redis.call('ZADD', FAIRWANT, f.now, f.claimer)
  elseif f.wasHungry then
    redis.call('ZREM', FAIRWANT, f.claimer)
  end
  local soon = f.now + f.poll
  if f.withheld then return 'w' .. math.max(nxt, soon) end
  if hungry and f.others and queued > 0 and (nxt < 0 or nxt > soon) then return soon end
  return nxt
end
