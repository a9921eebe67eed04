-- Drop the finished records of one host's URI index (after a rebuild in
-- Bloom mode, where the Bloom filter remembers finished URIs).
-- ARGV: P, host.
local uh = P .. 'u:' .. ARGV[2]
local all = redis.call('HGETALL', uh)
local done = {}
for i = 1, #all, 2 do
  if string.sub(all[i + 1], 1, 1) == 'f' then done[#done + 1] = all[i] end
end
mcall('HDEL', uh, done)
return #done
