-- Return the URIs of expired leases (at most limit) to their queues,
-- uncharged. ARGV: P, now, cutoff ms ('+inf' for every lease), limit.
local now, cutoff, limit = tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local leases = redis.call('ZRANGEBYSCORE', LEASES, '-inf', cutoff, 'LIMIT', 0, limit)
readLeases(leases)
for _, lease in ipairs(leases) do
  settle(lease, 'u', 0, 0, 0, -1, 0, 0, '1', now, 'r', '')
end
return #leases
