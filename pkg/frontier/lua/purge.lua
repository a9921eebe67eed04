-- Drop the finished records of one host's URI index (after a rebuild in
-- Bloom mode, where the Bloom filter remembers finished URIs).
-- ARGV: P, host.
local uh = P .. 'u:' .. ARGV[2]
local all = redis.call('HGETALL', uh)
local n = 0
for i = 1, #all, 2 do
  if string.sub(all[i + 1], 1, 1) == 'f' then
    redis.call('HDEL', uh, all[i])
    n = n + 1
  end
end
return n
