-- Pause (ARGV[3] == '1') or resume one host. ARGV: P, now, flag, host.
local now, pause, host = tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
local hk = P .. 'h:' .. host
if redis.call('EXISTS', hk) == 0 then return -1 end
local was = redis.call('HGET', hk, 'p') == '1'
if pause and not was then
  redis.call('HSET', hk, 'p', '1')
  dPaused = 1
elseif was and not pause then
  redis.call('HDEL', hk, 'p')
  dPaused = -1
end
local v = redis.call('HMGET', hk, 'n', 'a', 'pq', 'p', 'next')
schedule(host, num(v[1]), num(v[2]), v[3], v[4], v[5], now)
return 1
