import { scriptLayout } from './script-layout';

/**
 * KEYS: the dispatchers, then the drain state of each route it serves. ARGV: dispatcher
 * id, presence TTL (ms), then each route's slots, in the order of its KEYS.
 */
export const HEARTBEAT = scriptLayout({ keys: ['dispatchers'], args: ['dispatcher', 'ttlMs'] });

const { K, A } = HEARTBEAT;

/**
 * A dispatcher announces itself: live until Redis's clock passes now + TTL ms, and with
 * its slots (`concurrency`) for the routes whose drain states follow. Dispatchers silent
 * for an hour are forgotten. Returns Redis's clock (ms).
 */
export const HEARTBEAT_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', ${K.dispatchers}, now + tonumber(${A.ttlMs}), ${A.dispatcher})
redis.call('ZREMRANGEBYSCORE', ${K.dispatchers}, '-inf', now - 3600000)
for i = 2, #KEYS do
  redis.call('HSET', KEYS[i], 'slots', ARGV[i + 1])
end
return now
`;
