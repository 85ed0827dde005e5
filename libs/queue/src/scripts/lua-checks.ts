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
