import type { RelaygramRedis } from '@relaygram/queue';
import {
  ACQUIRE_LEASE_LUA,
  POLLER_STATE_LUA,
  RELEASE_LEASE_LUA,
  RENEW_LEASE_LUA,
  SAVE_OFFSET_LUA,
} from '../polling/poller-lease.lua';

/**
 * KEYS[1] bot state hash; ARGV[1] field, ARGV[2] period ms. Returns 1 (and stamps the
 * field with Redis's clock) when the last stamp is a period old: one replica in a
 * period wins, without a key of its own and without trusting replica clocks.
 */
const CLAIM_PERIOD_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local last = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') or 0
if now - last >= tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], ARGV[1], now)
  return 1
end
return 0
`;

/**
 * KEYS[1] webhook lock; ARGV[1] fingerprint of the settings, ARGV[2] TTL ms. Returns 1
 * (and stores the fingerprint) unless the same settings were claimed within the TTL:
 * replicas starting together call setWebhook once, while a reload that changes the
 * settings claims at once rather than waiting for an older claim to expire.
 */
const CLAIM_SETTINGS_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
`;

/** KEYS[1] lock; ARGV[1] token. Deletes the lock only if it is still ours. */
const UNLOCK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

type Script = (numKeys: number, ...args: (string | number)[]) => Promise<number>;

export interface IngressScripts {
  rgLeaseAcquire: Script;
  rgLeaseRenew: Script;
  rgLeaseRelease: Script;
  rgLeaseSaveOffset: Script;
  rgPollerState: Script;
  rgClaimPeriod: Script;
  rgClaimSettings: Script;
  rgUnlock: Script;
}

export type IngressRedis = RelaygramRedis & IngressScripts;

const SCRIPTS: Record<keyof IngressScripts, string> = {
  rgLeaseAcquire: ACQUIRE_LEASE_LUA,
  rgLeaseRenew: RENEW_LEASE_LUA,
  rgLeaseRelease: RELEASE_LEASE_LUA,
  rgLeaseSaveOffset: SAVE_OFFSET_LUA,
  rgPollerState: POLLER_STATE_LUA,
  rgClaimPeriod: CLAIM_PERIOD_LUA,
  rgClaimSettings: CLAIM_SETTINGS_LUA,
  rgUnlock: UNLOCK_LUA,
};

/** Adds the ingress scripts to the shared client (EVALSHA, EVAL on a cache miss). */
export function withIngressScripts(redis: RelaygramRedis): IngressRedis {
  for (const [name, lua] of Object.entries(SCRIPTS)) {
    if (!(name in redis)) redis.defineCommand(name, { lua });
  }
  return redis as IngressRedis;
}
