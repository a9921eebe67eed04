-- Put back the URIs set aside at one host while their target was paused
-- (claim.lua) whose target is no longer paused: at the head of their
-- precedence levels, in the order they were set aside, so they keep their
-- place before what arrived since.
-- ARGV: P, now, host. Returns how many went back.
local now, host = tonumber(ARGV[2]), ARGV[3]
local hk, qh = P .. 'h:' .. host, P .. 'qh:' .. host
local paused = {}
for _, id in ipairs(redis.call('SMEMBERS', PSRC)) do paused[id] = true end
local keep, back = {}, {{}, {}, {}}
local moved, gone = 0, 0
for _, item in ipairs(redis.call('LRANGE', qh, 0, -1)) do
  local uk, seq, lvl, _, ctx = parse(item)
  if uk and ixget(uk) == 'h' .. lvl .. seq then
    if paused[srcOf(ctx)] then
      keep[#keep + 1] = item
    else
      local b = back[tonumber(lvl) + 1]
      b[#b + 1] = item
      ixset(uk, qstate(lvl, seq))
      moved = moved + 1
    end
  else
    -- Not held any more (nothing else changes a held entry, so only a
    -- corrupt item): dropped, as claim.lua drops stale entries.
    if ctx then
      tcount(srcOf(ctx), -1, 0)
      unref(ctx)
    end
    gone = gone + 1
  end
end
for level = 0, 2 do
  local b = back[level + 1]
  if #b > 0 then
    local qk = P .. 'q:' .. host .. ':' .. level
    settlePushes(qk)
    local rev = {}
    for j = #b, 1, -1 do rev[#rev + 1] = b[j] end
    mcall('LPUSH', qk, rev)
  end
end
redis.call('DEL', qh)
if #keep > 0 then
  mcall('RPUSH', qh, keep)
  redis.call('HSET', hk, 'hp', #keep)
else
  redis.call('HDEL', hk, 'hp')
  redis.call('SREM', HELD, host)
end
dHeld = dHeld - moved - gone
local v = redis.call('HMGET', hk, 'n', 'a', 'pq', 'p', 'next')
local n, a = adjust(num(v[1]), num(v[2]), moved, 0)
if moved ~= 0 then redis.call('HSET', hk, 'n', n) end
schedule(host, n, a, v[3], v[4], v[5], now)
return moved
