import { expectTypeLua } from './lua-checks';

/**
 * Dedup and enqueue one update, atomically.
 *
 * KEYS[1] dedup bitmap of the update's block, KEYS[2] lane sequence, KEYS[3] set of routes,
 * KEYS[4] the bot's stats hash, then 4 keys per delivery: lane list, lane state hash, route's lane set, route stats hash.
 * ARGV[1] bit offset of the update_id in its block, ARGV[2] dedup TTL in seconds,
 * then 3 values per delivery: lane id, route name, encoded entry.
 *
 * Returns {0} for a duplicate, else {1, lane id, generation, ...} for every lane that
 * was idle and now needs a drain job.
 *
 * Lua scripts have no rollback: a command that fails half-way leaves the writes before
 * it in place. So every check comes before the first write, and the writes that follow
 * cannot fail on our data (types are checked, numbers parsed).
 */
export const ENQUEUE_LUA = `
local offset = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local n = (#KEYS - 4) / 4
if offset == nil or ttl == nil or n < 0 or n ~= math.floor(n) or #ARGV ~= 2 + n * 3 then
  return redis.error_reply('ERR relaygram enqueue: malformed arguments')
end

${expectTypeLua('enqueue')}
local err = expect(KEYS[1], 'string') or expect(KEYS[2], 'string') or expect(KEYS[3], 'set') or expect(KEYS[4], 'hash')
if err then return err end
for i = 0, n - 1 do
  local k = 5 + i * 4
  err = expect(KEYS[k], 'list') or expect(KEYS[k + 1], 'hash') or expect(KEYS[k + 2], 'set') or expect(KEYS[k + 3], 'hash')
  if err then return err end
end
local seq = redis.call('GET', KEYS[2])
if seq and not tonumber(seq) then
  return redis.error_reply('ERR relaygram enqueue: lane sequence is not a number')
end

if redis.call('GETBIT', KEYS[1], offset) == 1 then
  return {0}
end

-- Checks done; writes from here on.
redis.call('SETBIT', KEYS[1], offset, 1)
-- The block lives a full window after its last write, so every mark in it lives at least that long.
redis.call('EXPIRE', KEYS[1], ttl)

local result = {1}
if n > 0 then
  redis.call('HINCRBY', KEYS[4], 'queued', n)
end
for i = 0, n - 1 do
  local k = 5 + i * 4
  local a = 3 + i * 3
  local lane, route, entry = ARGV[a], ARGV[a + 1], ARGV[a + 2]
  redis.call('RPUSH', KEYS[k], entry)
  redis.call('HINCRBY', KEYS[k + 3], 'queued', 1)
  if redis.call('HEXISTS', KEYS[k + 1], 'gen') == 0 then
    local gen = redis.call('INCR', KEYS[2])
    redis.call('HSET', KEYS[k + 1], 'gen', gen)
    redis.call('SADD', KEYS[k + 2], lane)
    redis.call('SADD', KEYS[3], route)
    result[#result + 1] = lane
    result[#result + 1] = gen
  end
end
return result
`;
