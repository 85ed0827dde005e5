import { ENGINE_LUA } from './drain.lua';
import { expectTypeLua } from './lua-checks';

/**
 * Re-send a dead letter: append it to the tail of its lane and drop the dead letter, in
 * one step, so a re-send is neither lost nor doubled when two operators press at once.
 * A lane that was idle is scheduled like a lane of a new update.
 * KEYS[1..9] as every route script (drain.lua.ts), then [10] dead letter, [11] dead
 * index, [12] dead by route, [13] dead by bot, [14] lane, [15] lane state, [16] set of
 * routes, [17] the bot's stats.
 * ARGV[1..5] as every route script, then [6] delivery id, [7] lane id, [8] entry.
 * Returns {{'missing'} | {'queued'}, arms, wakes}.
 */
export const REPLAY_LUA = `
local G = {lane = ARGV[1], state = ARGV[2], inbox = ARGV[3], now = tonumber(ARGV[4]),
  seq = KEYS[8], dispatchers = KEYS[9], arms = {}, wakes = {}}
local R = {lanes = KEYS[1], ready = KEYS[2], delayed = KEYS[3], drains = KEYS[4],
  drain = KEYS[5], idle = KEYS[6], stats = KEYS[7], name = ARGV[5]}
${ENGINE_LUA}
if redis.call('EXISTS', KEYS[10]) == 0 then
  return reply({'missing'})
end
${expectTypeLua('replay')}
local err = expect(KEYS[14], 'list') or expect(KEYS[15], 'hash') or expect(KEYS[1], 'set')
  or expect(KEYS[2], 'list') or expect(KEYS[3], 'zset') or expect(KEYS[4], 'hash')
  or expect(KEYS[5], 'hash') or expect(KEYS[6], 'list') or expect(KEYS[7], 'hash')
  or expect(KEYS[8], 'string') or expect(KEYS[9], 'zset') or expect(KEYS[16], 'set')
  or expect(KEYS[17], 'hash')
if err then return err end

local idle = redis.call('LLEN', KEYS[14]) == 0
redis.call('RPUSH', KEYS[14], ARGV[8])
redis.call('HINCRBY', KEYS[7], 'queued', 1)
redis.call('HINCRBY', KEYS[17], 'queued', 1)
redis.call('DEL', KEYS[10])
redis.call('ZREM', KEYS[11], ARGV[6])
redis.call('ZREM', KEYS[12], ARGV[6])
redis.call('ZREM', KEYS[13], ARGV[6])
if idle then
  redis.call('SADD', KEYS[1], ARGV[7])
  redis.call('SADD', KEYS[16], ARGV[5])
  schedule(R, ARGV[7], true)
end
return reply({'queued'})
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
