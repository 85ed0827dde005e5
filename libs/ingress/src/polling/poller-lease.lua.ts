import { BotStateField } from '@relaygram/contracts';

/**
 * Scripts of the poller lease. The lease key holds the token of the replica that polls
 * a bot; every write a poller makes (offset, its state) is conditional on holding it,
 * in the same script, so a replica that lost its lease cannot move the offset back or
 * overwrite its successor's state.
 */

/** KEYS[1] lease; ARGV[1] token, ARGV[2] TTL ms. Takes a free lease, or extends our own. */
export const ACQUIRE_LEASE_LUA = `
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`;

/** KEYS[1] lease; ARGV[1] token, ARGV[2] TTL ms. Extends the lease only while it is ours. */
export const RENEW_LEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/**
 * KEYS[1] lease, KEYS[2] bot state hash; ARGV[1] token, ARGV[2] final state, ARGV[3] since (ms).
 * Records the final state and frees the lease, if it is ours.
 */
export const RELEASE_LEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('HSET', KEYS[2], '${BotStateField.PollerState}', ARGV[2], '${BotStateField.PollerSince}', ARGV[3])
  redis.call('HDEL', KEYS[2], '${BotStateField.PollerProblem}')
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`;

/**
 * KEYS[1] lease, KEYS[2] offset; ARGV[1] token, ARGV[2] next offset, ARGV[3] TTL ms.
 * Saves the offset and extends the lease, only while the lease is ours.
 */
export const SAVE_OFFSET_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[2], ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
return 0
`;

/**
 * KEYS[1] lease, KEYS[2] bot state hash; ARGV[1] token, ARGV[2] state, ARGV[3] since (ms),
 * ARGV[4] problem ('' for none). Publishes the poller's state, only while the lease is ours.
 */
export const POLLER_STATE_LUA = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], '${BotStateField.PollerState}', ARGV[2], '${BotStateField.PollerSince}', ARGV[3])
if ARGV[4] == '' then
  redis.call('HDEL', KEYS[2], '${BotStateField.PollerProblem}')
else
  redis.call('HSET', KEYS[2], '${BotStateField.PollerProblem}', ARGV[4])
end
return 1
`;
