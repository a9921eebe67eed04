-- Shared helpers, prepended to every frontier script.
--
-- ARGV[1] is the key prefix of one frontier shard, e.g. "{fc-npld}:". Every
-- key a script touches is built from it, so all of them share the hash tag
-- and live in one Redis Cluster slot; KEYS[1] names one of them only so
-- that a cluster client routes the script to the node owning that slot.
local P = ARGV[1]
local META = P .. 'meta'
local STATS = P .. 'stats'
local READY = P .. 'ready'
local LEASES = P .. 'leases'
local LEASED = P .. 'leased'
local CTX = P .. 'ctx'
local CTXN = P .. 'ctxn'
-- Per-target (source) counts: field 'q:<source id>' queued (held URIs and
-- superseded entries not yet dropped included), 'a:<source id>' in flight;
-- a field is dropped when it reaches 0. TN maps a source id to its tag.
local TQ = P .. 'tq'
local TN = P .. 'tn'
-- Paused targets' source ids, and the hosts with URIs held for them
-- (claim.lua sets such URIs aside in the host's qh: list).
local PSRC = P .. 'psrc'
local HELD = P .. 'held'

local function num(v)
  return tonumber(v) or 0
end

-- Every redis.call costs a fixed overhead, and a batch shares state that
-- each of its URIs changes: the shard's meta and stats counters, a
-- source's quota counters, the reference count of the launch context, the
-- ready set, the lease hash and zset, the arrival and lease counters. So
-- the scripts collect such changes in Lua tables and flush writes them
-- with one command per key (and field) when the script ends: scripts.go
-- runs flush after every script body, whatever it returns. Redis runs a
-- script atomically, so nobody can see the difference, provided a script
-- reads such state only through these helpers. Lua tables cost too (the
-- whole of this file runs for every script call), so state that URIs
-- rarely share, like a host's hash, is read and written once per URI, and
-- the tables below are made at their first use.

-- mcall runs cmd on key with the values of args, in slices, as Lua's C
-- stack holds about 8000 values.
local function mcall(cmd, key, args)
  for i = 1, #args, 1000 do
    redis.call(cmd, key, unpack(args, i, math.min(i + 999, #args)))
  end
end

-- Increments of the shard's meta counters, and of its stats: per status
-- (status -> count) and of bytes and retries.
local dQueued, dInflight, dBusy, dExhausted, dHosts, dPaused, dHeld = 0, 0, 0, 0, 0, 0, 0
local dStatus, dBytes, dRetries, dNovel, dNovelBytes

-- Increments of quota counters (of sources: a batch often shares one),
-- key -> {fs, sb, fr, ab}.
local quotas

-- Increments of the per-target counts (TQ field -> delta).
local dTarget

-- tcount moves a URI of source src (its id) by dq queued and da in flight.
local function tcount(src, dq, da)
  dTarget = dTarget or {}
  if dq ~= 0 then dTarget['q:' .. src] = (dTarget['q:' .. src] or 0) + dq end
  if da ~= 0 then dTarget['a:' .. src] = (dTarget['a:' .. src] or 0) + da end
end

-- settleQuota writes the pending increments of key, before it is read or
-- dropped.
local function settleQuota(key)
  local q = quotas and quotas[key]
  if not q then return end
  quotas[key] = nil
  if q[1] ~= 0 then redis.call('HINCRBY', key, 'fs', q[1]) end
  if q[2] ~= 0 then redis.call('HINCRBY', key, 'sb', q[2]) end
  if q[3] ~= 0 then redis.call('HINCRBY', key, 'fr', q[3]) end
  if q[4] ~= 0 then redis.call('HINCRBY', key, 'ab', q[4]) end
end

local function flushCounters()
  if dQueued ~= 0 then redis.call('HINCRBY', META, 'queued', dQueued) end
  if dInflight ~= 0 then redis.call('HINCRBY', META, 'inflight', dInflight) end
  if dBusy ~= 0 then redis.call('HINCRBY', META, 'busy', dBusy) end
  if dExhausted ~= 0 then redis.call('HINCRBY', META, 'exhausted', dExhausted) end
  if dHosts ~= 0 then redis.call('HINCRBY', META, 'hosts', dHosts) end
  if dPaused ~= 0 then redis.call('HINCRBY', META, 'paused', dPaused) end
  if dHeld ~= 0 then redis.call('HINCRBY', META, 'held', dHeld) end
  if dTarget then
    for field, d in pairs(dTarget) do
      if d ~= 0 and redis.call('HINCRBY', TQ, field, d) == 0 then redis.call('HDEL', TQ, field) end
    end
  end
  if dStatus then
    for status, n in pairs(dStatus) do redis.call('HINCRBY', STATS, 'status:' .. status, n) end
  end
  if dBytes then redis.call('HINCRBY', STATS, 'bytes', dBytes) end
  if dRetries then redis.call('HINCRBY', STATS, 'retries', dRetries) end
  if dNovel then redis.call('HINCRBY', STATS, 'novel', dNovel) end
  if dNovelBytes then redis.call('HINCRBY', STATS, 'novelBytes', dNovelBytes) end
  if quotas then
    for key in pairs(quotas) do settleQuota(key) end
  end
end

-- The ready set: host -> the last time given (false: out of the set).
local ready

local function flushReady()
  if not ready then return end
  local add, rem
  for host, t in pairs(ready) do
    if t then
      add = add or {}
      add[#add + 1] = t
      add[#add + 1] = host
    else
      rem = rem or {}
      rem[#rem + 1] = host
    end
  end
  ready = nil
  if add then mcall('ZADD', READY, add) end
  if rem then mcall('ZREM', READY, rem) end
end

-- Leases: leased maps a lease to its item (false: none). A claim only
-- adds leases and a completion only removes them, each lease name being
-- new, so the two are kept apart, and only removals are looked up:
-- leaseAdd holds lease, item pairs, leaseExp expiry, lease pairs, leaseDel
-- leases.
local leased, leaseAdd, leaseExp, leaseDel

-- A counter handing out numbers (arrival or lease; a script uses one):
-- the first INCR of a script tells the value, later ones are counted in
-- seqN.
local seqKey, seqV, seqN

local function flushSeq()
  if seqN and seqN > 0 then redis.call('INCRBY', seqKey, seqN) end
  seqKey, seqV, seqN = nil, nil, nil
end

local function nextseq(key)
  if key ~= seqKey then
    flushSeq()
    seqKey, seqV, seqN = key, redis.call('INCR', key), 0
  else
    seqV, seqN = seqV + 1, seqN + 1
  end
  return seqV
end

-- Context blobs (false: none) and reference counts. The first change of a
-- count in a script is made at once and tells the count (refn); later
-- ones are kept in refd while the count stays positive, and otherwise
-- made at once, so the blob is set when the count reaches 1 and dropped
-- when it reaches 0 exactly as one change at a time would.
local ctxBlobs, refn, refd

-- hgetOnce reads field of hash key once per script call; t keeps what was
-- read (false for a missing field).
local function hgetOnce(t, key, field)
  local v = t[field]
  if v == nil then
    v = redis.call('HGET', key, field)
    t[field] = v
  end
  return v
end

local function ctxblob(id)
  ctxBlobs = ctxBlobs or {}
  return hgetOnce(ctxBlobs, CTX, id)
end

local function unref(id)
  if not refn then refn, refd = {}, {} end
  local n = refn[id]
  if n and n > 1 then
    refn[id] = n - 1
    refd[id] = refd[id] - 1
    return
  end
  if not n then
    n = redis.call('HINCRBY', CTXN, id, -1)
    refn[id], refd[id] = n, 0
    if n > 0 then return end
  end
  refn[id], refd[id] = 0, 0
  redis.call('HDEL', CTXN, id)
  redis.call('HDEL', CTX, id)
  ctxBlobs = ctxBlobs or {}
  ctxBlobs[id] = false
end

-- Items for the tail of a queue, per list (see rpush in admit.lua).
local pushes

-- settlePushes writes the pending items of a list, before it is read or
-- pushed to at its head.
local function settlePushes(key)
  local l = pushes and pushes[key]
  if not l then return end
  pushes[key] = nil
  mcall('RPUSH', key, l)
end

-- The URI index: a URI's state by uk, for all hosts of the shard, in
-- hashes P x:<bucket> of about IX_LOAD entries each, so that every bucket
-- stays a listpack (hash-max-listpack-entries 128) however big a host's
-- queue grows: about 19 bytes an entry, where a per-host hash table cost
-- about 65. The buckets split one at a time as entries are added (linear
-- hashing), at once, so that no batch overfills a bucket (a listpack
-- past 128 becomes a hash table for good): META ixb is their count, ixn
-- the entries. A bucket not yet split in a round holds up to twice the
-- average, so IX_LOAD leaves room below 128. A state is a queued URI's
-- arrival number times 4 plus its level, in decimal, which Redis keeps
-- as an integer (qstate); 'h<level><seq>' held for a paused target;
-- 'l<level><seq>/<lease seq>/<claimed ms>' leased; '-<unix s>' finished
-- (recentlySeen mode only). docs/frontier.md, Memory.
local IX_LOAD = 40
local ixN, ixN0, ixPow, ixCount, dIx

local function ixstate()
  if ixN then return end
  local v = redis.call('HMGET', META, 'ixb', 'ixn')
  ixN, ixCount, dIx = tonumber(v[1] or 1), tonumber(v[2] or 0), 0
  ixN0, ixPow = ixN, 1
  while ixPow * 2 <= ixN do ixPow = ixPow * 2 end
end

-- ixhash is 30 bits of uk (its first five base64url characters).
local function ixhash(uk)
  local h = 0
  for i = 1, 5 do
    local c = string.byte(uk, i) or 0
    if c >= 97 then c = c - 71 elseif c == 95 then c = 63 elseif c >= 65 then c = c - 65
    elseif c >= 48 then c = c + 4 else c = 62 end
    h = h * 64 + c
  end
  return h
end

local function ixbucket(h)
  local b = h % (2 * ixPow)
  if b >= ixN then b = h % ixPow end
  return b
end

local function ixkey(uk)
  ixstate()
  return P .. 'x:' .. ixbucket(ixhash(uk))
end

local function ixget(uk)
  return redis.call('HGET', ixkey(uk), uk)
end

-- ixsplit splits bucket ixN - ixPow into it and the new bucket ixN: the
-- entries whose hash says ixN move.
local function ixsplit()
  local from, to = ixN - ixPow, ixN
  local fk, tk = P .. 'x:' .. from, P .. 'x:' .. to
  local all = redis.call('HGETALL', fk)
  local moved, names = {}, {}
  for i = 1, #all, 2 do
    if ixhash(all[i]) % (2 * ixPow) == to then
      moved[#moved + 1] = all[i]
      moved[#moved + 1] = all[i + 1]
      names[#names + 1] = all[i]
    end
  end
  if #names > 0 then
    mcall('HSET', tk, moved)
    mcall('HDEL', fk, names)
  end
  ixN = ixN + 1
  if ixN == 2 * ixPow then ixPow = ixPow * 2 end
end

local function ixset(uk, v)
  if redis.call('HSET', ixkey(uk), uk, v) == 1 then
    dIx, ixCount = dIx + 1, ixCount + 1
    if ixCount > IX_LOAD * ixN then ixsplit() end
  end
end

local function ixdel(uk)
  local n = redis.call('HDEL', ixkey(uk), uk)
  dIx, ixCount = dIx - n, ixCount - n
end

local function qstate(lvl, seq)
  return string.format('%d', seq * 4 + lvl)
end

-- ixkind is the kind of an index state: 'q' queued, 'h' held, 'l'
-- leased, 'f' finished, nil for none.
local function ixkind(st)
  if not st then return nil end
  local c = string.byte(st, 1)
  if c == 45 then return 'f' end
  if c <= 57 then return 'q' end
  return string.char(c)
end

-- flushIndex writes the index's counts.
local function flushIndex()
  if not dIx then return end
  if dIx ~= 0 then redis.call('HINCRBY', META, 'ixn', dIx) end
  if ixN ~= ixN0 then redis.call('HSET', META, 'ixb', ixN) end
end

local function flush()
  if pushes then
    for key in pairs(pushes) do settlePushes(key) end
  end
  flushSeq()
  if refd then
    for id, d in pairs(refd) do
      if d ~= 0 then redis.call('HINCRBY', CTXN, id, d) end
    end
  end
  if leaseAdd then
    mcall('HSET', LEASED, leaseAdd)
    mcall('ZADD', LEASES, leaseExp)
  end
  if leaseDel then
    mcall('HDEL', LEASED, leaseDel)
    mcall('ZREM', LEASES, leaseDel)
  end
  flushReady()
  flushCounters()
  flushIndex()
end

-- hostname drops the port of a queue's authority: quotas count per host
-- name as well as per server (host:port).
local function hostname(host)
  return string.match(host, '^(.*):%d+$') or host
end

-- parse splits a queue item: "<uk> <seq> <level> <retries>[i] <ctx>
-- <payload>". An "i" after the retries marks a URI returned uncharged after
-- an interrupted claim. Only the Go side reads the payload.
local function parse(item)
  return string.match(item, '^(%S+) (%d+) (%d) (%d+i?) (%S+) (.*)$')
end

-- source returns the source-tag id that starts a context blob.
local function source(blob)
  if not blob then
    return ''
  end
  return string.match(blob, '^([^\n]*)') or ''
end

-- srcOf returns the source id of a queue item's context; read it before
-- the item's unref, which may drop the blob.
local function srcOf(ctx)
  return source(ctxblob(ctx))
end

-- adjust takes a host's live queued count (n) and leases (a) from n0, a0
-- by dn, da and keeps the shard's counters of queued URIs, URIs in
-- flight, busy hosts and exhausted hosts (known hosts with nothing queued
-- or in flight) exact. It returns the new n and a; the caller writes them.
local function adjust(n0, a0, dn, da)
  local n1, a1 = n0 + dn, a0 + da
  dQueued, dInflight = dQueued + dn, dInflight + da
  if (a0 > 0) ~= (a1 > 0) then dBusy = dBusy + (a1 > 0 and 1 or -1) end
  local e0, e1 = (n0 == 0 and a0 == 0), (n1 == 0 and a1 == 0)
  if e0 ~= e1 then dExhausted = dExhausted + (e1 and 1 or -1) end
  return n1, a1
end

-- schedule puts a host in the ready set at its next fetch time when it has
-- URIs queued, a free parallel slot and is not paused; otherwise it takes
-- the host out. pq, p and nxt are the host's fields. It returns the ready
-- time, nil when out.
local function schedule(host, n, a, pq, p, nxt, now)
  if n > 0 and a < (tonumber(pq) or 1) and p ~= '1' then
    local t = num(nxt)
    if t < now then t = now end
    ready = ready or {}
    ready[host] = t
    return t
  end
  ready = ready or {}
  ready[host] = false
  return nil
end

-- known records a host the first time it is seen (a new host starts
-- exhausted: nothing queued, nothing in flight) with its parallelQueues;
-- completions keep the setting current afterwards. Only the first
-- HSETNX of a host in a script can set it.
local knownHosts
local function known(host, pq)
  knownHosts = knownHosts or {}
  if knownHosts[host] then return end
  knownHosts[host] = true
  if redis.call('HSETNX', P .. 'h:' .. host, 'pq', pq) == 1 then
    dHosts, dExhausted = dHosts + 1, dExhausted + 1
  end
end
