-- Extend leases. ARGV: P, expiry ms, leases... Returns the 1-based
-- positions of leases that no longer exist (expired and reaped).
local untilms = ARGV[2]
local lost = {}
for i = 3, #ARGV do
  if redis.call('ZSCORE', LEASES, ARGV[i]) then
    redis.call('ZADD', LEASES, untilms, ARGV[i])
  else
    lost[#lost + 1] = i - 2
  end
end
return lost
