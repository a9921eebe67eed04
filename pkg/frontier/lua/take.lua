-- Take given queued items of one host under leases, as claim.lua takes the
-- next ones, for an operator's delete: the worker then finishes each with
-- -6000 through complete.lua, which keeps every counter exact. An item no
-- longer queued (claimed, finished or superseded meanwhile) is skipped.
-- ARGV: P, now, lease expiry ms, host, item...
-- Returns '-1' followed by claim.lua's 17 fields per item taken.
local now, untilms, host = tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local out = {'-1'}
local hk = P .. 'h:' .. host
-- A held item (its target paused, see claim.lua) is taken from the
-- host's qh: list.
for i = 5, #ARGV do
  local item = ARGV[i]
  local uk, seq, lvl, r, ctx = parse(item)
  local st = uk and ixget(uk)
  local took, wasHeld = false, false
  if uk and st == qstate(lvl, seq) then
    local qk = P .. 'q:' .. host .. ':' .. lvl
    settlePushes(qk)
    took = redis.call('LREM', qk, 1, item) == 1
  elseif st == 'h' .. lvl .. seq then
    took = redis.call('LREM', P .. 'qh:' .. host, 1, item) == 1
    wasHeld = took
  end
  if took then
    local lseq = nextseq(P .. 'lseq')
    ixset(uk, 'l' .. lvl .. seq .. '/' .. lseq .. '/' .. now)
    local v = redis.call('HMGET', hk, 'n', 'a', 'pq', 'p', 'next', 'fs', 'sb', 'fr', 'ab', 'bo', 'bu')
    local dn = -1
    if wasHeld then
      dn = 0
      dHeld = dHeld - 1
      if redis.call('HINCRBY', hk, 'hp', -1) <= 0 then
        redis.call('HDEL', hk, 'hp')
        redis.call('SREM', HELD, host)
      end
    end
    local n, a = adjust(num(v[1]), num(v[2]), dn, 1)
    redis.call('HSET', hk, 'n', n, 'a', a)
    schedule(host, n, a, v[3], v[4], v[5], now)
    local lease = host .. ' ' .. lseq
    if not leaseAdd then leaseAdd, leaseExp = {}, {} end
    leaseAdd[#leaseAdd + 1] = lease
    leaseAdd[#leaseAdd + 1] = item
    leaseExp[#leaseExp + 1] = untilms
    leaseExp[#leaseExp + 1] = lease
    local blob = ctxblob(ctx) or ''
    tcount(source(blob), -1, 1)
    out[#out + 1] = lease
    out[#out + 1] = item
    out[#out + 1] = blob
    -- Quota counters are not needed: the URI is not fetched.
    for _ = 1, 12 do out[#out + 1] = 0 end
    out[#out + 1] = num(v[10])
    out[#out + 1] = num(v[11])
  end
end
return out
