import { ENGINE_LUA } from './drain.lua';
import { expectTypeLua } from './lua-checks';

/** KEYS before the per-delivery ones, and KEYS per delivery. */
export const ENQUEUE_FIXED_KEYS = 5;
export const ENQUEUE_KEYS_PER_DELIVERY = 9;

/**
 * Dedup and enqueue one update, atomically.
 *
 * KEYS[1] dedup bitmap of the update's block, [2] sequence, [3] dispatchers, [4] set of
 * routes, [5] the bot's stats, then 9 keys per delivery: lane, lane state, and the
 * route's lane set (its pull lanes for a pull route), ready list, delayed set, drain
 * jobs, drain state, idle jobs, stats.
 * ARGV[1] lane key prefix, [2] lane-state key prefix, [3] inbox channel prefix, [4] now
 * (ms), [5] bit offset of the update_id in its block, [6] dedup TTL (s), then 4 values
 * per delivery: lane id, route name, encoded entry, and for a pull route the channel on
 * which its waiting getUpdates calls are told ('' for a push route).
 *
 * A pull route's lane is never scheduled: no drain job sends it; its client takes the
 * deliveries with getUpdates.
 *
 * Returns {0} for a duplicate, else {1, arms, failures}: arms are route, job id pairs
 * of drain jobs the caller must add; failures, the errors met while scheduling lanes.
 *
 * Lua scripts have no rollback: a command that fails half-way leaves the writes before
 * it in place. So every check the acceptance depends on (dedup bit, lanes, counters,
 * the route's lane set) comes before the first write, and once the update is marked
 * seen, nothing may abort the script: a lane whose scheduling fails (a key of the
 * wrong type, written by hand) is reported and stays in its route's lane set, where
 * the reconciler schedules it once the key is fixed. The update itself is accepted.
 */
export const ENQUEUE_LUA = `
local G = {lane = ARGV[1], state = ARGV[2], inbox = ARGV[3], now = tonumber(ARGV[4]),
  seq = KEYS[2], dispatchers = KEYS[3], arms = {}, wakes = {}}
${ENGINE_LUA}
local offset = tonumber(ARGV[5])
local ttl = tonumber(ARGV[6])
local n = (#KEYS - 5) / 9
if offset == nil or ttl == nil or n < 0 or n ~= math.floor(n) or #ARGV ~= 6 + n * 4 then
  return redis.error_reply('ERR relaygram enqueue: malformed arguments')
end

-- Checks. GETBIT and LLEN fail on a key of another type before anything is written.
if redis.call('GETBIT', KEYS[1], offset) == 1 then
  return {0}
end
${expectTypeLua('enqueue')}
local err = expect(KEYS[5], 'hash')
if err then return err end
local idle = {}
local new_lanes = false
for i = 1, n do
  local k = 6 + (i - 1) * 9
  idle[i] = redis.call('LLEN', KEYS[k]) == 0
  err = expect(KEYS[k + 8], 'hash')
  if not err and idle[i] then
    err = expect(KEYS[k + 2], 'set')
    new_lanes = true
  end
  if err then return err end
end
if new_lanes then
  err = expect(KEYS[4], 'set')
  if err then return err end
end

-- Checks done; writes from here on.
redis.call('SETBIT', KEYS[1], offset, 1)
-- The block lives a full window after its last write, so every mark in it lives at least that long.
redis.call('EXPIRE', KEYS[1], ttl)
if n > 0 then
  redis.call('HINCRBY', KEYS[5], 'queued', n)
end
local failures = {}
for i = 1, n do
  local k = 6 + (i - 1) * 9
  local a = 7 + (i - 1) * 4
  local lane, route, pull = ARGV[a], ARGV[a + 1], ARGV[a + 3]
  redis.call('RPUSH', KEYS[k], ARGV[a + 2])
  redis.call('HINCRBY', KEYS[k + 8], 'queued', 1)
  if pull ~= '' then
    if idle[i] then redis.call('SADD', KEYS[k + 2], lane) end
    redis.call('PUBLISH', pull, lane)
  elseif idle[i] then
    redis.call('SADD', KEYS[k + 2], lane)
    redis.call('SADD', KEYS[4], route)
    local r = {lanes = KEYS[k + 2], ready = KEYS[k + 3], delayed = KEYS[k + 4],
      drains = KEYS[k + 5], drain = KEYS[k + 6], idle = KEYS[k + 7], stats = KEYS[k + 8], name = route}
    local ok, failure = pcall(schedule, r, lane, true)
    if not ok then
      failures[#failures + 1] = lane .. ': ' .. tostring(type(failure) == 'table' and failure.err or failure)
    end
  end
end
return {1, G.arms, failures}
`;
