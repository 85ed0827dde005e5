import { expectTypeLua } from './lua-checks';

/**
 * Re-send a dead letter: append it to the tail of its lane and drop the dead letter, in
 * one step, so a re-send is neither lost nor doubled when two operators press at once.
 * KEYS[1] dead letter, KEYS[2] dead index, KEYS[3] dead by route, KEYS[4] dead by bot,
 * KEYS[5] lane, KEYS[6] lane state, KEYS[7] route's lane set, KEYS[8] route stats,
 * KEYS[9] lane sequence, KEYS[10] set of routes, KEYS[11] the bot's stats.
 * ARGV[1] delivery id, ARGV[2] lane id, ARGV[3] entry, ARGV[4] route name.
 * Returns {'missing'} | {'queued'} | {'queued', generation} (the lane needs a drain job).
 */
export const REPLAY_LUA = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {'missing'}
end
${expectTypeLua('replay')}
local err = expect(KEYS[5], 'list') or expect(KEYS[6], 'hash') or expect(KEYS[7], 'set')
  or expect(KEYS[8], 'hash') or expect(KEYS[9], 'string') or expect(KEYS[10], 'set') or expect(KEYS[11], 'hash')
if err then return err end

redis.call('RPUSH', KEYS[5], ARGV[3])
redis.call('HINCRBY', KEYS[8], 'queued', 1)
redis.call('HINCRBY', KEYS[11], 'queued', 1)
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
if redis.call('HEXISTS', KEYS[6], 'gen') == 0 then
  local gen = redis.call('INCR', KEYS[9])
  redis.call('HSET', KEYS[6], 'gen', gen)
  redis.call('SADD', KEYS[7], ARGV[2])
  redis.call('SADD', KEYS[10], ARGV[4])
  return {'queued', gen}
end
return {'queued'}
`;

/**
 * Delete a dead letter and its index entries.
 * KEYS[1] dead letter, KEYS[2] dead index, KEYS[3] dead by route, KEYS[4] dead by bot.
 * ARGV[1] delivery id. Returns 1 when it existed.
 */
export const DELETE_DEAD_LUA = `
local existed = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return existed
`;
