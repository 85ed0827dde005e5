/**
 * `expect(key, kind)` for a script's checks: a WRONGTYPE error naming the script when
 * `key` holds another type (a missing key passes). Lua has no rollback, so each script
 * calls it for every key it writes before its first write.
 */
export function expectTypeLua(script: string): string {
  return `
local function expect(key, kind)
  local t = redis.call('TYPE', key).ok
  if t ~= 'none' and t ~= kind then
    return redis.error_reply('WRONGTYPE relaygram ${script}: ' .. key .. ' is a ' .. t .. ', expected ' .. kind)
  end
  return nil
end
`;
}

/**
 * Stops a script with {'stale'} unless the calling job's generation (ARGV[1]) still owns
 * the lane (KEYS[2], its state) and the head of the lane (KEYS[1]) is the delivery it
 * began (prefix ARGV[3]); else leaves that head in `head`.
 */
export const OWNED_HEAD_LUA = `
if redis.call('HGET', KEYS[2], 'gen') ~= ARGV[1] then
  return {'stale'}
end
local head = redis.call('LINDEX', KEYS[1], 0)
if not head or string.sub(head, 1, #ARGV[3]) ~= ARGV[3] then
  return {'stale'}
end
`;
