-- Drop the finished records of one bucket of the URI index (after a
-- rebuild in Bloom mode, where the Bloom filter remembers finished URIs).
-- ARGV: P, bucket key.
local k = ARGV[2]
local all = redis.call('HGETALL', k)
local done = {}
for i = 1, #all, 2 do
  if ixkind(all[i + 1]) == 'f' then done[#done + 1] = all[i] end
end
mcall('HDEL', k, done)
ixstate()
dIx, ixCount = dIx - #done, ixCount - #done
return #done
