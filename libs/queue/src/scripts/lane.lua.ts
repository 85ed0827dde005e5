import { expectTypeLua, OWNED_HEAD_LUA } from './lua-checks';

/**
 * The dispatcher's side of a lane. A lane is scheduled while its state hash has a `gen`
 * (schedule generation); the drain job carrying that generation owns the lane, and a
 * job with any other generation is stale and must not touch it. The head's attempt
 * count is raised before each attempt, so a crash mid-attempt still counts it.
 */

/**
 * Start an attempt on the head, unless the head is still backing off.
 * KEYS[1] lane, KEYS[2] lane state, KEYS[3] route's lane set. ARGV[1] generation, ARGV[2] lane id,
 * ARGV[3] now (ms).
 * Returns {'stale'} | {'empty'} | {'wait', next attempt at} |
 * {'head', entry, attempts, consecutive5xx, last status, last body, last error}.
 * `wait` comes back when a job runs before the head's backoff ends (the reconciler
 * replaced a lost job, or clocks differ between replicas): no attempt is counted.
 */
export const BEGIN_LUA = `
if redis.call('HGET', KEYS[2], 'gen') ~= ARGV[1] then
  return {'stale'}
end
local entry = redis.call('LINDEX', KEYS[1], 0)
if not entry then
  redis.call('DEL', KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[2])
  return {'empty'}
end
local next_at = redis.call('HGET', KEYS[2], 'next_at')
if next_at and (tonumber(next_at) or 0) > tonumber(ARGV[3]) then
  return {'wait', next_at}
end
local attempts = redis.call('HINCRBY', KEYS[2], 'attempts', 1)
local s = redis.call('HMGET', KEYS[2], 'c5xx', 'last_status', 'last_body', 'last_error')
return {'head', entry, attempts, s[1] or '0', s[2], s[3], s[4]}
`;

/**
 * Finish the head (delivered, or dead) and go on: begin the next head, yield the lane to
 * a new drain job, hold it as it is, or release it when empty.
 * KEYS[1] lane, KEYS[2] lane state, KEYS[3] route's lane set, KEYS[4] route stats,
 * KEYS[5] lane sequence, KEYS[6] dead letter, KEYS[7] dead index, KEYS[8] dead by route,
 * KEYS[9] dead by bot, KEYS[10] the bot's stats.
 * ARGV[1] generation, ARGV[2] lane id, ARGV[3] head prefix, ARGV[4] 'delivered'|'dead',
 * ARGV[5] then: 'continue'|'yield'|'hold', ARGV[6] now (ms), ARGV[7] dead-letter TTL (ms),
 * ARGV[8] delivery id, then for 'dead': field, value pairs of the dead letter (the raw
 * entry is stored as `entry`).
 * Returns {'stale'} | {'done'} | {'yield', generation} | {'hold'} |
 * {'head', entry, attempts, 0, false, false, false} (the shape of BEGIN's head).
 * Types are checked first: a failure after the LPOP would lose the head. The next head
 * is begun without a backoff check: a fresh head has none.
 */
export const FINISH_LUA = `
${OWNED_HEAD_LUA}
${expectTypeLua('finish')}
local dead = ARGV[4] == 'dead'
local err = expect(KEYS[3], 'set') or expect(KEYS[4], 'hash') or expect(KEYS[5], 'string') or expect(KEYS[10], 'hash')
if not err and dead then
  err = expect(KEYS[6], 'hash') or expect(KEYS[7], 'zset') or expect(KEYS[8], 'zset') or expect(KEYS[9], 'zset')
end
if err then return err end
if (#ARGV - 8) % 2 ~= 0 then
  return redis.error_reply('ERR relaygram finish: malformed dead-letter fields')
end

redis.call('LPOP', KEYS[1])
redis.call('HDEL', KEYS[2], 'attempts', 'c5xx', 'last_status', 'last_body', 'last_error', 'next_at')
redis.call('HINCRBY', KEYS[4], 'queued', -1)
redis.call('HINCRBY', KEYS[10], 'queued', -1)
if dead then
  local fields = {'entry', head}
  for i = 9, #ARGV do fields[#fields + 1] = ARGV[i] end
  -- A re-sent delivery that dies again must not keep fields of its earlier death.
  redis.call('DEL', KEYS[6])
  redis.call('HSET', KEYS[6], unpack(fields))
  redis.call('PEXPIRE', KEYS[6], ARGV[7])
  redis.call('ZADD', KEYS[7], ARGV[6], ARGV[8])
  redis.call('ZADD', KEYS[8], ARGV[6], ARGV[8])
  redis.call('ZADD', KEYS[9], ARGV[6], ARGV[8])
  redis.call('HINCRBY', KEYS[4], 'dead', 1)
else
  redis.call('HINCRBY', KEYS[4], 'delivered', 1)
end
if redis.call('LLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[2])
  return {'done'}
end
if ARGV[5] == 'yield' then
  local gen = redis.call('INCR', KEYS[5])
  redis.call('HSET', KEYS[2], 'gen', gen)
  return {'yield', gen}
end
if ARGV[5] == 'hold' then
  return {'hold'}
end
local attempts = redis.call('HINCRBY', KEYS[2], 'attempts', 1)
return {'head', redis.call('LINDEX', KEYS[1], 0), attempts, '0', false, false, false}
`;

/**
 * Record a failed attempt that will be retried. The last status, body and error stay
 * with the head, so a dead letter made later (expired, poison, route removed) by any
 * replica still shows what the target last answered.
 * KEYS[1] lane state, KEYS[2] route stats. ARGV[1] generation, ARGV[2] consecutive 5xx,
 * ARGV[3] last status, ARGV[4] last error, ARGV[5] now (ms), ARGV[6] next attempt at (ms),
 * ARGV[7] last body (up to 1 KiB).
 * Returns 1, or 0 when stale.
 */
export const RETRY_LUA = `
if redis.call('HGET', KEYS[1], 'gen') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'c5xx', ARGV[2], 'last_status', ARGV[3], 'last_error', ARGV[4], 'next_at', ARGV[6], 'last_body', ARGV[7])
redis.call('HSET', KEYS[2], 'last_error', ARGV[4], 'last_status', ARGV[3], 'last_error_at', ARGV[5])
return 1
`;

/**
 * Give a scheduled lane a new generation (a yield, or the reconciler replacing a lost
 * job) when it still has the expected one.
 * KEYS[1] lane state, KEYS[2] lane sequence. ARGV[1] expected generation.
 * Returns the new generation, or false when the lane moved on.
 */
export const RESCHEDULE_LUA = `
if redis.call('HGET', KEYS[1], 'gen') ~= ARGV[1] then
  return false
end
local gen = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'gen', gen)
return gen
`;

/**
 * Move the failing head of a spread lane (`none` ordering) to a lane of its own, to be
 * retried there, and go on with the spread lane as FINISH does. The head keeps its
 * attempt state (count, consecutive 5xx, last answer, next attempt time); queued
 * counts do not change. The own lane gets a generation unless it already has one.
 * KEYS[1] lane, KEYS[2] lane state, KEYS[3] route's lane set, KEYS[4] lane sequence,
 * KEYS[5] own lane, KEYS[6] own lane state.
 * ARGV[1] generation, ARGV[2] lane id, ARGV[3] head prefix, ARGV[4] then:
 * 'continue'|'yield'|'hold', ARGV[5] own lane id, ARGV[6] consecutive 5xx, ARGV[7] last
 * status, ARGV[8] last error, ARGV[9] next attempt at (ms), ARGV[10] last body.
 * Returns {'stale'} or {own lane generation or false, then FINISH's answer...}.
 */
export const DETACH_LUA = `
${OWNED_HEAD_LUA}
${expectTypeLua('detach')}
local err = expect(KEYS[3], 'set') or expect(KEYS[4], 'string') or expect(KEYS[5], 'list') or expect(KEYS[6], 'hash')
if err then return err end

local attempts = redis.call('HGET', KEYS[2], 'attempts') or '0'
redis.call('LPOP', KEYS[1])
redis.call('HDEL', KEYS[2], 'attempts', 'c5xx', 'last_status', 'last_body', 'last_error', 'next_at')
redis.call('RPUSH', KEYS[5], head)
local own_gen = false
if redis.call('HEXISTS', KEYS[6], 'gen') == 0 then
  own_gen = redis.call('INCR', KEYS[4])
  redis.call('HSET', KEYS[6], 'gen', own_gen, 'attempts', attempts, 'c5xx', ARGV[6],
    'last_status', ARGV[7], 'last_error', ARGV[8], 'next_at', ARGV[9], 'last_body', ARGV[10])
  redis.call('SADD', KEYS[3], ARGV[5])
end

if redis.call('LLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2])
  redis.call('SREM', KEYS[3], ARGV[2])
  return {own_gen, 'done'}
end
if ARGV[4] == 'yield' then
  local gen = redis.call('INCR', KEYS[4])
  redis.call('HSET', KEYS[2], 'gen', gen)
  return {own_gen, 'yield', gen}
end
if ARGV[4] == 'hold' then
  return {own_gen, 'hold'}
end
local next_attempts = redis.call('HINCRBY', KEYS[2], 'attempts', 1)
return {own_gen, 'head', redis.call('LINDEX', KEYS[1], 0), next_attempts, '0', false, false, false}
`;
