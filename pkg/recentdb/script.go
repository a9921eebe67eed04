package recentdb

import "github.com/redis/go-redis/v9"

// updateScript applies updates to the entries in KEYS (all of one shard,
// so one slot). For each key in turn, ARGV holds its expiry time in Unix ms
// (0: none), its number of fields n, then n field, value pairs.
//
// A field is replaced only by a value that sorts at or after the stored one
// (values start with their fixed-width time), which makes updates
// idempotent and order-safe. The expiry only ever moves later (GT); a key
// with none of the fields is new (entries hold nothing else) and gets it
// outright, and an expiry already in the past deletes the key, so a replay
// of an expired capture leaves nothing. A key holding something other than
// a hash (written by something else) is replaced rather than failing every
// later batch. Each entry costs three commands: HMGET, HSET, PEXPIREAT (and
// an HGET when the update carries outlinks: that value is large, and most
// updates do not need it). Whether the key is new is judged by c, o and f
// alone, since a worker may write l before the cdxwriter writes the rest.
// Returns the number of fields changed.
var updateScript = redis.NewScript(`
local slot = {c = 1, o = 2, f = 3}
local a = 1
local changed = 0
for k = 1, #KEYS do
  local key = KEYS[k]
  local at = tonumber(ARGV[a])
  local n = tonumber(ARGV[a+1])
  local cur = redis.pcall('HMGET', key, 'c', 'o', 'f')
  if cur.err then
    redis.call('DEL', key)
    cur = {}
  end
  local fresh = not (cur[1] or cur[2] or cur[3])
  local set = {}
  for i = 1, n do
    local f, v = ARGV[a + 2*i], ARGV[a + 2*i + 1]
    local old
    if slot[f] then
      old = cur[slot[f]]
    else
      old = redis.call('HGET', key, f)
    end
    if (not old) or old < v then
      set[#set+1] = f
      set[#set+1] = v
    end
  end
  if #set > 0 then
    redis.call('HSET', key, unpack(set))
    changed = changed + #set / 2
  end
  if at > 0 then
    if fresh then
      redis.call('PEXPIREAT', key, at)
    else
      redis.call('PEXPIREAT', key, at, 'GT')
    end
  end
  a = a + 2 + 2*n
end
return changed
`)
