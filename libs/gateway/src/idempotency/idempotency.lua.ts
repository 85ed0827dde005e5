/*
 * One idempotency key is one string: `p|<fingerprint>|<owner>` while its first request
 * runs (with a lease TTL), then `d|<fingerprint>|<answer JSON>` for 24 h. The
 * fingerprint is a digest of the request (path and parameters), so a repeat with
 * another body is told apart without keeping the body.
 */

/**
 * Claims a key, or says what holds it. KEYS: the key. ARGV: fingerprint, owner, lease ms.
 * Returns {'proceed'}, {'running'}, {'done', answer}, or {'mismatch'}.
 */
export const CLAIM_LUA = `
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], 'p|' .. ARGV[1] .. '|' .. ARGV[2], 'PX', ARGV[3])
  return {'proceed'}
end
local state = string.sub(held, 1, 1)
local rest = string.sub(held, 3)
local sep = string.find(rest, '|', 1, true)
local fingerprint = string.sub(rest, 1, sep - 1)
if fingerprint ~= ARGV[1] then return {'mismatch'} end
if state == 'd' then return {'done', string.sub(rest, sep + 1)} end
return {'running'}
`;

/**
 * Stores the answer of the owner's request and tells the waiters. KEYS: the key. ARGV:
 * fingerprint, owner, answer JSON, ttl ms, channel, digest. Returns 1, or 0 when the
 * lease was lost (the key expired and another request took it).
 */
export const COMPLETE_LUA = `
if redis.call('GET', KEYS[1]) ~= 'p|' .. ARGV[1] .. '|' .. ARGV[2] then return 0 end
redis.call('SET', KEYS[1], 'd|' .. ARGV[1] .. '|' .. ARGV[3], 'PX', ARGV[4])
redis.call('PUBLISH', ARGV[5], ARGV[6])
return 1
`;

/**
 * Gives a key back when its request never reached Telegram (refused by pacing, or the
 * caller went away first), so a repeat may run it. KEYS: the key. ARGV: fingerprint,
 * owner, channel, digest.
 */
export const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) ~= 'p|' .. ARGV[1] .. '|' .. ARGV[2] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
`;
