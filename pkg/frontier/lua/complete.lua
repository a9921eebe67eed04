-- Settle a batch of leases.
-- ARGV: P, now, mode, then per outcome: lease, kind, status, bytes,
-- delay ms, crawl-delay ms (-1 unknown), crawl-delay cap ms, retry delay
-- ms, parallelQueues, back-off ('' none, see backoff.lua). Returns 1 per
-- settled lease, 0 per lease that had already expired.
local now, mode = tonumber(ARGV[2]), ARGV[3]
local leases = {}
for i = 4, #ARGV, 10 do leases[#leases + 1] = ARGV[i] end
readLeases(leases)
local out = {}
for i = 4, #ARGV, 10 do
  out[#out + 1] = settle(ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]),
    tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5]), tonumber(ARGV[i + 6]), tonumber(ARGV[i + 7]),
    ARGV[i + 8], now, mode, ARGV[i + 9])
end
return out
