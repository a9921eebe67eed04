-- Record URIs the crawled journal says are finished (frontier rebuild).
-- ARGV: P, then per URI: host, uk, finish time (s), status, bytes, source
-- id, novel ('1' unless a revisit). A URI is marked finished unless a
-- later finish is already recorded; totals and quota counters count every
-- event.
local out = 0
for i = 2, #ARGV, 7 do
  local host, uk, at, status, bytes, src = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4]), ARGV[i + 5]
  local novel = ARGV[i + 6] == '1'
  local st = ixget(uk)
  if not st or (ixkind(st) == 'f' and -tonumber(st) < at) then
    ixset(uk, '-' .. at)
  end
  known(host, '1')
  count(host, src, status, bytes, novel)
  tally(P .. 'h:' .. host, status, math.max(bytes, 0))
  out = out + 1
end
return out
