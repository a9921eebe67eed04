-- Host back-off: a server that answers 429 or 503 asks the crawl to slow
-- down. Prepended after lib.lua to the scripts that settle leases.
--
-- The host's hash keeps bo (back-offs in a row), bu (until when, ms) and
-- bs (the status that asked, or "challenge" for a bot-challenge page); the shard's backoff zset holds host -> bu,
-- so hosts backing off are counted without a scan, and the backoffs hash
-- counts back-offs by status. Only a back-off or the first response after
-- one writes any of it: an ordinary completion reads bo and bu with the
-- fields it reads anyway.
local BACKOFF = P .. 'backoff'
local BACKOFFS = P .. 'backoffs'
local QUIET_MS = 86400000

-- backoff records one back-off of host: spec is "<status> <retry-after ms,
-- -1 none> <base ms> <cap ms> <jitter 0..1>". Without a Retry-After the
-- wait doubles with each back-off in a row from base up to cap, with
-- "equal jitter" (half fixed, half random, the random fraction from the
-- caller, since a script's own random numbers are not random). A host
-- whose last back-off ended more than QUIET (the larger of cap and a day)
-- ago starts again from base: the host is claimed again only after its
-- politeness delay, which can outlast cap, and a spell measured from the
-- end of the back-off would then reset the count every time, so the URI
-- would be deferred for ever and never charged. Any answer that does not
-- ask to slow down forgives the host at once (forgive). It appends the
-- host's fields to w and returns the wait in ms.
local function backoff(host, w, spec, bo, bu, now)
  local st, ra, base, cap, j = string.match(spec, '^(%w+) (%-?%d+) (%d+) (%d+) ([%d.]+)$')
  if not st then return 0 end
  ra, base, cap, j = tonumber(ra), tonumber(base), tonumber(cap), tonumber(j)
  local n = num(bo)
  if n > 0 and now - num(bu) > math.max(cap, QUIET_MS) then n = 0 end
  n = n + 1
  local d = ra
  if d < 0 then
    local e = math.min(base * 2 ^ math.min(n - 1, 40), cap)
    d = math.floor(e / 2 + e / 2 * j)
  end
  local untilms = now + d
  w[#w + 1] = 'bo'
  w[#w + 1] = n
  w[#w + 1] = 'bu'
  w[#w + 1] = untilms
  w[#w + 1] = 'bs'
  w[#w + 1] = st
  -- Entries whose back-off has ended are dropped here: back-offs are rare,
  -- and the zset stays as small as the set of hosts backing off.
  redis.call('ZREMRANGEBYSCORE', BACKOFF, '-inf', now)
  redis.call('ZADD', BACKOFF, untilms, host)
  redis.call('HINCRBY', BACKOFFS, st, 1)
  return d
end

-- forgive clears the back-off of a host that answered without asking to
-- slow down: the next 429 or 503 starts again from the base wait.
local function forgive(host, hk)
  redis.call('HDEL', hk, 'bo', 'bu', 'bs')
  redis.call('ZREM', BACKOFF, host)
end
