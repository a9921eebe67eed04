-- Ending leases and counting finished URIs, prepended after lib.lua to
-- the scripts that do.

-- leaseitem returns the item of a lease, false when there is none.
local function leaseitem(lease)
  leased = leased or {}
  return hgetOnce(leased, LEASED, lease)
end

-- readLeases reads the items of many leases in one call.
local function readLeases(leases)
  leased = leased or {}
  for i = 1, #leases, 1000 do
    local j = math.min(i + 999, #leases)
    local v = redis.call('HMGET', LEASED, unpack(leases, i, j))
    for k = i, j do
      if leased[leases[k]] == nil then leased[leases[k]] = v[k - i + 1] end
    end
  end
end

local function delLease(lease)
  leaseDel = leaseDel or {}
  leased[lease] = false
  leaseDel[#leaseDel + 1] = lease
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

-- tallied appends to w (field, value pairs for HSET) the quota counters a
-- finished URI changes, from their values fs, sb, fr, ab: successes are
-- 2xx responses, responses any HTTP status.
local function tallied(w, fs, sb, fr, ab, status, bytes)
  if status <= 0 then return end
  w[#w + 1] = 'fr'
  w[#w + 1] = num(fr) + 1
  if bytes > 0 then
    w[#w + 1] = 'ab'
    w[#w + 1] = num(ab) + bytes
  end
  if status >= 200 and status < 300 then
    w[#w + 1] = 'fs'
    w[#w + 1] = num(fs) + 1
    if bytes > 0 then
      w[#w + 1] = 'sb'
      w[#w + 1] = num(sb) + bytes
    end
  end
end

-- tally counts a finished URI against the quota counters of key (a
-- server, host name or source).
local function tally(key, status, bytes)
  if status <= 0 then return end
  settleQuota(key)
  local v = redis.call('HMGET', key, 'fs', 'sb', 'fr', 'ab')
  local w = {}
  tallied(w, v[1], v[2], v[3], v[4], status, bytes)
  redis.call('HSET', key, unpack(w))
end

-- count adds a finished URI to the crawl totals (per status; the Go side
-- sums them) and the quota counters of its host name and source; the
-- caller counts it for its server (h:<host>), whose hash it writes anyway.
-- A batch often shares the source, so its counters are buffered. A
-- novel URI (a response or DNS record that is not a revisit) counts
-- towards the novel totals too (maxNovelUrls, maxNovelBytes).
local function count(host, src, status, bytes, novel)
  if bytes < 0 then bytes = 0 end
  dStatus = dStatus or {}
  dStatus[status] = (dStatus[status] or 0) + 1
  if bytes > 0 then dBytes = (dBytes or 0) + bytes end
  if novel and status > 0 then
    dNovel = (dNovel or 0) + 1
    if bytes > 0 then dNovelBytes = (dNovelBytes or 0) + bytes end
  end
  tally(P .. 'hn:' .. hostname(host), status, bytes)
  if src ~= '' and status > 0 then
    local key = P .. 'src:' .. src
    quotas = quotas or {}
    local q = quotas[key]
    if not q then
      q = {0, 0, 0, 0}
      quotas[key] = q
    end
    q[3] = q[3] + 1
    q[4] = q[4] + bytes
    if status >= 200 and status < 300 then
      q[1] = q[1] + 1
      q[2] = q[2] + bytes
    end
  end
end

-- retryWait records that host waits for a retry until t, for Stats
-- (frontier limits.go), and drops the waits that have ended: retries are
-- rare beside finishes, so the set stays small and costs finishes nothing.
local function retryWait(host, t, now)
  local key = P .. 'retrywait'
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  redis.call('ZADD', key, t, host)
end

-- settle ends a lease. kind 'f' finishes the URI, 'r' puts it back for a
-- retry (charged), 'd' puts it back deferred (uncharged, after the
-- politeness delay: Heritrix's S_DEFERRED, after a prerequisite or a
-- server's request to slow down), 'u' puts it back uncharged at once
-- (expired lease, release). delay is the politeness delay from now; cd the
-- host's robots Crawl-delay in ms (-1: unknown, use the stored one), raised
-- to at most cap. boff is '' or the back-off the server asked for (see
-- backoff.lua). It returns 0 when the lease no longer exists.
local function settle(lease, kind, status, bytes, delay, cd, cap, rdelay, pq, now, mode, boff)
  local item = leaseitem(lease)
  if not item then return 0 end
  delLease(lease)
  -- 'v' is a finish of a revisit: a finish that is not novel.
  local novel = kind ~= 'v'
  if kind == 'v' then kind = 'f' end
  local host = string.match(lease, '^(.*) %d+$')
  local uk, seq, lvl, r, ctx, payload = parse(item)
  local hk = P .. 'h:' .. host
  -- What each kind reads of the host besides n, a and p: a finish and a
  -- retry the stored Crawl-delay, a finish its quota counters too, an
  -- uncharged return the state that schedules the host.
  -- All but an uncharged return also read the host's back-off (bo, bu).
  local v, hpq, hnext, bo, bu
  if kind == 'f' then
    v = redis.call('HMGET', hk, 'n', 'a', 'p', 'cd', 'fs', 'sb', 'fr', 'ab', 'bo', 'bu')
    bo, bu = v[9], v[10]
  elseif kind == 'r' or kind == 'd' then
    v = redis.call('HMGET', hk, 'n', 'a', 'p', 'cd', 'bo', 'bu')
    bo, bu = v[5], v[6]
  else
    v = redis.call('HMGET', hk, 'n', 'a', 'p', 'pq', 'next')
    hpq, hnext = v[4], v[5]
  end
  -- w collects the host's changed fields for one HSET.
  local w = {}
  if kind ~= 'u' then
    if cd >= 0 then
      w[1], w[2] = 'cd', cd
    else
      cd = num(v[4])
    end
    if cd > cap then cd = cap end
    if cd > delay then delay = cd end
    if kind == 'r' and rdelay > delay then delay = rdelay end
    if boff ~= '' then
      local b = backoff(host, w, boff, bo, bu, now)
      if b > delay then delay = b end
    elseif status > 0 and bo then
      forgive(host, hk)
    end
    hnext, hpq = now + delay, pq
    if kind == 'r' then retryWait(host, hnext, now) end
    w[#w + 1] = 'next'
    w[#w + 1] = hnext
    w[#w + 1] = 'pq'
    w[#w + 1] = pq
  end
  local n, a
  if kind == 'f' then
    if mode == 'b' then
      ixdel(uk)
    else
      ixset(uk, '-' .. math.floor(now / 1000))
    end
    if bytes < 0 then bytes = 0 end
    local src = srcOf(ctx)
    tcount(src, 0, -1)
    count(host, src, status, bytes, novel)
    tallied(w, v[5], v[6], v[7], v[8], status, bytes)
    unref(ctx)
    n, a = adjust(num(v[1]), num(v[2]), 0, -1)
  else
    local again
    if kind == 'r' then
      again = uk .. ' ' .. seq .. ' ' .. lvl .. ' ' .. retried(r) .. ' ' .. ctx .. ' ' .. payload
      dRetries = (dRetries or 0) + 1
    elseif kind == 'd' then
      again = item
    else
      again = uk .. ' ' .. seq .. ' ' .. lvl .. ' ' .. interrupted(r) .. ' ' .. ctx .. ' ' .. payload
    end
    local qk = P .. 'q:' .. host .. ':' .. lvl
    settlePushes(qk)
    redis.call('LPUSH', qk, again)
    ixset(uk, qstate(lvl, seq))
    tcount(srcOf(ctx), 1, -1)
    n, a = adjust(num(v[1]), num(v[2]), 1, -1)
    w[#w + 1] = 'n'
    w[#w + 1] = n
  end
  w[#w + 1] = 'a'
  w[#w + 1] = a
  redis.call('HSET', hk, unpack(w))
  schedule(host, n, a, hpq, v[3], hnext, now)
  return 1
end
