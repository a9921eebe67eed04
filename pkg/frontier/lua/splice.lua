-- Replace a run of consecutive elements of a queue by others: cold blocks
-- packed from a tail (Frontier.compact) or unpacked at a head or anywhere
-- (blocks.go). The run is found by its first element, searched from the
-- head ('h': it must be the first; 'a': anywhere) or from the tail ('t':
-- admissions may have pushed after it), and replaced only if the
-- elements that follow are still those read: items and blocks are unique
-- in their list, so a run another worker changed meanwhile is left alone.
-- ARGV: P, then per run: queue key, where ('h', 'a' or 't'), the count
-- of old elements and the old elements, the count of new ones and the
-- new ones. Returns how many runs were replaced.
local done = 0
local i = 2
while i <= #ARGV do
  local qk, where, no = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local o = i + 3
  local nn = tonumber(ARGV[o + no])
  local n0 = o + no + 1
  i = n0 + nn
  local idx
  if where == 'h' then
    if redis.call('LINDEX', qk, 0) == ARGV[o] then idx = 0 end
  elseif where == 't' then
    -- Bounded: a run that is gone is not looked for through a long queue.
    idx = redis.call('LPOS', qk, ARGV[o], 'RANK', -1, 'MAXLEN', no + 1000)
  else
    idx = redis.call('LPOS', qk, ARGV[o])
  end
  if idx then
    local same = true
    if no > 1 then
      local got = redis.call('LRANGE', qk, idx, idx + no - 1)
      for j = 1, no do
        if got[j] ~= ARGV[o + j - 1] then
          same = false
          break
        end
      end
    end
    if same then
      local new = {}
      if idx == 0 and no == 1 and nn > 0 then
        -- One block at the head unpacked (split): its last new element
        -- (the rest of the block, the same size as the block, or an
        -- item) takes the block's place, written over it in its node;
        -- only the items before it are pushed. Popping the block and
        -- pushing it back grew and shifted the head's node twice more,
        -- which at 10M queued URIs faulted in fresh pages.
        redis.call('LSET', qk, 0, ARGV[n0 + nn - 1])
        for j = n0 + nn - 2, n0, -1 do new[#new + 1] = ARGV[j] end
        if #new > 0 then mcall('LPUSH', qk, new) end
      elseif idx == 0 then
        redis.call('LPOP', qk, no)
        for j = n0 + nn - 1, n0, -1 do new[#new + 1] = ARGV[j] end
        if #new > 0 then mcall('LPUSH', qk, new) end
      else
        local rest = redis.call('LRANGE', qk, idx + no, -1)
        redis.call('LTRIM', qk, 0, idx - 1)
        for j = n0, n0 + nn - 1 do new[#new + 1] = ARGV[j] end
        if #new > 0 then mcall('RPUSH', qk, new) end
        if #rest > 0 then mcall('RPUSH', qk, rest) end
      end
      done = done + 1
    end
  end
end
return done
